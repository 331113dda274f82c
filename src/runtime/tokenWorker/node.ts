/** A token rollout worker on node:worker_threads (CLI, tests, benchmarks). */
import type { TokenSourceFactory } from '../../core/rollout/tokenSource.ts';
import type { NodeEngineName } from '../engine/node.ts';
import { spawnNodeThread } from '../pool/node.ts';
import { remoteTokenSource } from './source.ts';

/** A worker decoding on `engine` (default ort-web WASM, as in the browser). */
export function nodeTokenWorkerOn(engine: NodeEngineName = 'ort-web-wasm'): TokenSourceFactory {
  return (init) => remoteTokenSource(spawnNodeThread(new URL('./worker.node.mjs', import.meta.url), 'token rollout worker'), init, engine);
}

export const nodeTokenWorker: TokenSourceFactory = nodeTokenWorkerOn();
