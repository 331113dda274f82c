/** A token rollout worker on node:worker_threads (CLI, tests, benchmarks). */
import { Worker } from 'node:worker_threads';
import type { TokenSourceFactory } from '../../core/trainer/asyncTokenTrainer.ts';
import { nodeEndpoint } from '../pool/nodeEndpoint.ts';
import { remoteTokenSource, type TokenWorkerHandle } from './source.ts';

function spawn(): TokenWorkerHandle {
  const worker = new Worker(new URL('./worker.node.mjs', import.meta.url));
  let terminating = false;
  const died = new Promise<never>((_, reject) => {
    worker.once('error', (e) => reject(new Error(`token rollout worker crashed: ${e instanceof Error ? e.message : String(e)}`, { cause: e })));
    worker.once('exit', (code) => reject(new Error(terminating ? 'token rollout worker was terminated' : `token rollout worker exited with code ${code}`)));
  });
  return {
    endpoint: nodeEndpoint(worker),
    died,
    async terminate() {
      terminating = true;
      await worker.terminate();
    },
  };
}

export const nodeTokenWorker: TokenSourceFactory = (init) => remoteTokenSource(spawn(), init);
