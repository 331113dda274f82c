/** The trainer's side of a token rollout worker: a TokenEpisodeSource over comlink. */
import { wrap, type Endpoint, type Remote } from 'comlink';
import type { TokenSourceInit } from '../../core/trainer/asyncTokenTrainer.ts';
import type { TokenEpisodeSource } from '../../core/trainer/tokenSlots.ts';
import type { TokenWorkerApi } from './api.ts';

export interface TokenWorkerHandle {
  endpoint: Endpoint;
  /** Rejects when the worker dies (crash, exit). */
  died: Promise<never>;
  terminate(): Promise<void>;
}

/** `engine`: which engine the worker loads, where it can choose (Node: 'ort-web-wasm' or 'ort-node'). */
export async function remoteTokenSource(handle: TokenWorkerHandle, init: TokenSourceInit, engine?: string): Promise<TokenEpisodeSource> {
  const api: Remote<TokenWorkerApi> = wrap<TokenWorkerApi>(handle.endpoint);
  // A dead worker fails whatever is waiting on it instead of hanging the trainer.
  const guard = <T>(p: Promise<T>): Promise<T> => Promise.race([p, handle.died]);
  handle.died.catch(() => undefined);
  await guard(api.init(init, engine));
  return {
    enqueue: (specs) => guard(api.enqueue(specs)),
    next: () => guard(api.next()),
    setWeights: (w, version) => guard(api.setWeights(w, version)),
    drop: (groups, minVersion) => guard(api.drop(groups, minVersion)),
    stats: () => guard(api.stats()),
    async release() {
      await guard(api.close()).catch(() => undefined);
      await handle.terminate();
    },
  };
}
