/** Rollout worker entry for the browser (a module Web Worker bundled by Vite): ORT web WASM, one thread. */
import { expose } from 'comlink';
import { loadWebEngine } from '../engine/web.ts';
import { createWorkerApi } from './workerApi.ts';

// One WASM thread per worker: the pool, not ORT, is where rollouts go parallel.
expose(createWorkerApi(() => loadWebEngine('wasm', { threads: 1 })));
