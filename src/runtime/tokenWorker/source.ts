/** The trainer's side of a token rollout worker: a TokenEpisodeSource over comlink. */
import { wrap, type Remote } from 'comlink';
import type { TokenSourceInit } from '../../core/trainer/asyncTokenTrainer.ts';
import type { TokenEpisodeSource } from '../../core/rollout/tokenSource.ts';
import type { TokenWorkerApi } from './api.ts';
import type { WorkerHandle } from '../pool/workerPool.ts';
import { guardCall } from '../workerDeath.ts';

export type TokenWorkerHandle = WorkerHandle;

/**
 * Ms the token worker may take to answer one call before it counts as hung: next() can wait on
 * simulated tool latency (seconds), enqueue on a prefill; minutes means something is wrong.
 */
export const TOKEN_CALL_DEADLINE_MS = 180_000;

/** `engine`: which engine the worker loads, where it can choose (Node: 'ort-web-wasm' or 'ort-node'). */
export async function remoteTokenSource(handle: TokenWorkerHandle, init: TokenSourceInit, engine?: string): Promise<TokenEpisodeSource> {
  const api: Remote<TokenWorkerApi> = wrap<TokenWorkerApi>(handle.endpoint);
  // A dead or hung worker fails whatever is waiting on it instead of hanging the trainer.
  const guard = <T>(p: Promise<T>): Promise<T> =>
    guardCall(p, handle.death, {
      deadlineMs: TOKEN_CALL_DEADLINE_MS,
      what: handle.name,
      onTimeout: (e) => {
        handle.death.fail(e);
        void handle.terminate();
      },
    });
  await guard(api.init(init, engine));
  return {
    enqueue: (specs) => guard(api.enqueue(specs)),
    next: () => guard(api.next()),
    setWeights: (w, version) => guard(api.setWeights(w, version)),
    drop: (groups, minVersion) => guard(api.drop(groups, minVersion)),
    stats: () => guard(api.stats()),
    samplingState: () => guard(api.samplingState()),
    setSamplingState: (state) => guard(api.setSamplingState([...state])),
    async release() {
      await guard(api.close()).catch(() => undefined);
      await handle.terminate();
    },
  };
}
