/**
 * The trainer's engine inside the training worker: onnxruntime-web on WASM or on WebGPU.
 *
 * WebGPU keeps parameters and Adam moments in GPU buffers between steps (state never crosses
 * to JS); WASM keeps them on the CPU side. Both are imported lazily so a WASM-only session
 * never downloads the WebGPU bundle.
 */
import type { Engine } from '../../core/trainer/engine.ts';
import { ortEngine } from '../engine/ortEngine.ts';
import type { OrtModule } from '../ort/session.ts';

export type TrainBackend = 'webgpu' | 'wasm';

export async function loadTrainEngine(kind: TrainBackend): Promise<Engine> {
  if (kind === 'webgpu') {
    const ort = (await import('onnxruntime-web/webgpu')) as unknown as OrtModule;
    return ortEngine(ort, 'ort-web-webgpu', { sessionOptions: { executionProviders: ['webgpu'] }, stateLocation: 'gpu-buffer' });
  }
  const ort = await import('onnxruntime-web');
  // The MLP's matrices are small (batch ≤ a few hundred rows × 64 units): thread start-up and
  // hand-off would cost more than they save, and the other cores are the UI's and the browser's.
  ort.env.wasm.numThreads = 1;
  return ortEngine(ort as unknown as OrtModule, 'ort-web-wasm');
}
