/** A token rollout worker on node:worker_threads (CLI, tests, benchmarks). */
import type { TokenSourceFactory } from '../../core/trainer/asyncTokenTrainer.ts';
import { spawnNodeThread } from '../pool/node.ts';
import { remoteTokenSource } from './source.ts';

export const nodeTokenWorker: TokenSourceFactory = (init) => remoteTokenSource(spawnNodeThread(new URL('./worker.node.mjs', import.meta.url), 'token rollout worker'), init);
