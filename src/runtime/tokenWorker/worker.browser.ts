/** Token rollout worker entry for the browser (a module Web Worker bundled by Vite): ORT web WASM, one thread. */
import { expose } from 'comlink';
import { loadWebEngine } from '../engine/web.ts';
import { createTokenWorkerApi } from './api.ts';

expose(createTokenWorkerApi(() => loadWebEngine('wasm', { threads: 1 })));
