/** Rollout worker entry for the browser (a module Web Worker bundled by Vite): ORT web WASM, one thread. */
import { expose } from 'comlink';
import type { OrtModule } from '../ort/session.ts';
import { ortEngine } from '../engine/ortEngine.ts';
import { createWorkerApi } from './workerApi.ts';

expose(
  createWorkerApi(async () => {
    const ort = await import('onnxruntime-web');
    // One WASM thread per worker: the pool, not ORT, is where rollouts go parallel.
    ort.env.wasm.numThreads = 1;
    return ortEngine(ort as unknown as OrtModule, 'ort-web-wasm');
  }),
);
