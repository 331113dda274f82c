/** Token rollout worker entry for node:worker_threads: ORT web WASM, one thread. */
import { expose } from 'comlink';
import { parentPort } from 'node:worker_threads';
import { loadNodeEngine } from '../engine/node.ts';
// Env links' threads (remote envs' network thread) are worker_threads here.
import '../envLinks.node.ts';
import { nodeEndpoint } from '../pool/nodeEndpoint.ts';
import { createTokenWorkerApi } from './api.ts';

if (!parentPort) throw new Error('worker.node.ts must run in a worker thread');
expose(createTokenWorkerApi(() => loadNodeEngine('ort-web-wasm', 1)), nodeEndpoint(parentPort));
