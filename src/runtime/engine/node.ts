/**
 * Engines for Node (CLI, tests, benchmarks). onnxruntime-web's WASM build runs in Node as is;
 * onnxruntime-node is the optional native engine (faster, same graphs).
 */
import type { Engine } from '../../core/trainer/engine.ts';
import type { OrtModule } from '../ort/session.ts';
import { ortEngine } from './ortEngine.ts';

export type NodeEngineName = 'ort-web-wasm' | 'ort-node';

export async function loadNodeEngine(name: NodeEngineName = 'ort-web-wasm', threads = 1): Promise<Engine> {
  if (name === 'ort-node') {
    let ort: OrtModule;
    try {
      ort = (await import('onnxruntime-node')) as unknown as OrtModule;
    } catch (e) {
      throw new Error(`engine 'ort-node' needs the optional package onnxruntime-node (${(e as Error).message}); use 'ort-web-wasm'`, { cause: e });
    }
    return ortEngine(ort, name, { sessionOptions: { intraOpNumThreads: threads, interOpNumThreads: 1 } });
  }
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = threads;
  return ortEngine(ort as unknown as OrtModule, name);
}
