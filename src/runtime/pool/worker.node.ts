/** Rollout worker entry for node:worker_threads (CLI, tests): ORT web WASM, one thread. */
import { expose } from 'comlink';
import { parentPort } from 'node:worker_threads';
import { loadNodeEngine } from '../engine/node.ts';
import { nodeEndpoint } from './nodeEndpoint.ts';
import { createWorkerApi } from './workerApi.ts';
import '../codeEnv/node.ts';

if (!parentPort) throw new Error('worker.node.ts must run in a worker thread');
expose(createWorkerApi(() => loadNodeEngine('ort-web-wasm', 1)), nodeEndpoint(parentPort));
