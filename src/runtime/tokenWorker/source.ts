/** The trainer's side of a token rollout worker: a TokenEpisodeSource over comlink. */
import { wrap, type Remote } from 'comlink';
import type { TokenSourceInit } from '../../core/rollout/tokenSource.ts';
import type { TokenEpisodeSource } from '../../core/rollout/tokenSource.ts';
import type { TokenWorkerApi } from './api.ts';
import type { WorkerHandle } from '../pool/workerPool.ts';
import { guardCall } from '../workerDeath.ts';
import { seconds, Watchdog } from '../liveness.ts';
import { DEFAULT_STALL_MS } from '../pool/workerPool.ts';

export type TokenWorkerHandle = WorkerHandle;

/**
 * Ms the token worker may take to answer one call before it counts as hung: next() can wait on
 * simulated tool latency (seconds), enqueue on a prefill; minutes means something is wrong.
 */
export const TOKEN_CALL_DEADLINE_MS = 180_000;

/** The watchdog's timing: tests shorten it. */
export interface TokenWatchOptions {
  /** Ms a worker with a call in flight may leave a ping unanswered before it counts as dead (default DEFAULT_STALL_MS). */
  stallMs?: number;
  /** Ms between pings while a call is in flight (default 1000). */
  pingEveryMs?: number;
}

/** `engine`: which engine the worker loads, where it can choose (Node: 'ort-web-wasm' or 'ort-node'). */
export async function remoteTokenSource(handle: TokenWorkerHandle, init: TokenSourceInit, engine?: string, watch: TokenWatchOptions = {}): Promise<TokenEpisodeSource> {
  const api: Remote<TokenWorkerApi> = wrap<TokenWorkerApi>(handle.endpoint);
  const fail = (e: Error) => {
    if (handle.death.reason) return;
    handle.death.fail(e);
    void handle.terminate();
  };
  // While a call is in flight the worker is pinged: its loop yields every few ms, so it answers
  // within milliseconds while it decodes or waits on tool latency. A worker that closed itself
  // (no event in a browser) or spins leaves the ping unanswered and is declared dead after
  // stallMs, not after the call deadline.
  let busy = 0;
  let dog: Watchdog | null = null;
  let what = '';
  const stallMs = watch.stallMs ?? DEFAULT_STALL_MS;
  const watching = <T>(call: string, p: Promise<T>): Promise<T> => {
    what = call;
    if (busy++ === 0) {
      dog = new Watchdog({
        everyMs: watch.pingEveryMs ?? 1000,
        limitMs: () => stallMs,
        probe: () => api.ping(),
        onSilent: (silentMs) => fail(new Error(`${handle.name} stopped answering for ${seconds(silentMs)} during ${what} (closed, stuck in a loop or out of memory)`)),
      });
    }
    return p.finally(() => {
      if (--busy === 0) {
        dog?.stop();
        dog = null;
      }
    });
  };
  // A dead or hung worker fails whatever is waiting on it instead of hanging the trainer.
  const guard = <T>(call: string, p: Promise<T>): Promise<T> =>
    watching(call, guardCall(p, handle.death, { deadlineMs: TOKEN_CALL_DEADLINE_MS, what: handle.name, onTimeout: fail }));
  await guard('init', api.init(init, engine));
  return {
    enqueue: (specs) => guard('enqueue', api.enqueue(specs)),
    next: () => guard('next', api.next()),
    setWeights: (w, version) => guard('setWeights', api.setWeights(w, version)),
    drop: (groups, minVersion) => guard('drop', api.drop(groups, minVersion)),
    stats: () => guard('stats', api.stats()),
    samplingState: () => guard('samplingState', api.samplingState()),
    setSamplingState: (state) => guard('setSamplingState', api.setSamplingState([...state])),
    async release() {
      await guard('close', api.close()).catch(() => undefined);
      dog?.stop();
      await handle.terminate();
    },
  };
}
