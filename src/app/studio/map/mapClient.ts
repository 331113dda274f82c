/**
 * The page's handles on the map-check workers (runtime/mapCheck/worker.ts), each made on first
 * use: one for the check that runs on every edit, one for the random agent (a check cancelled by
 * the next edit must not take a random agent's play down with it). A worker that fails (a script
 * error), overruns its time limit or is cancelled is terminated, the calls waiting on it are
 * rejected with the reason, and it is replaced on the next call.
 */
import { wrap, type Remote } from 'comlink';
import type { GridMap } from '../../../core/envs/grid/mapSpec.ts';
import type { MapCheck } from '../../../core/envs/grid/mapCheck.ts';
import type { RandomAgentReport } from '../../../core/envs/randomAgent.ts';
import type { MapCheckApi } from '../../../runtime/mapCheck/worker.ts';

/** Longest a map's check may take before it is stopped, ms (a 25×25 map with 4 doors takes ~0.6 s in Node: bench map-expert). */
export const CHECK_TIMEOUT_MS = 20_000;
/** Longest the random agent's 100 episodes may take, ms. */
export const RANDOM_TIMEOUT_MS = 60_000;

/** The check was cancelled by its caller (a newer edit): nothing to show. */
export class CheckCancelled extends Error {
  override name = 'CheckCancelled';
}

interface Handle {
  api: Remote<MapCheckApi>;
  /** Rejects when the worker fails or is stopped. */
  died: Promise<never>;
  stop(reason: Error): void;
}

const handles: Partial<Record<'check' | 'random', Handle>> = {};

function worker(kind: 'check' | 'random'): Handle {
  let h = handles[kind];
  if (!h) {
    const w = new Worker(new URL('../../../runtime/mapCheck/worker.ts', import.meta.url), { type: 'module', name: `map-${kind}` });
    let fail: (e: Error) => void = () => undefined;
    // Comlink's calls to a dead worker never settle: this settles them.
    const died = new Promise<never>((_, reject) => (fail = reject));
    died.catch(() => undefined);
    const mine: Handle = {
      api: wrap<MapCheckApi>(w),
      died,
      stop: (reason) => {
        w.terminate();
        if (handles[kind] === mine) delete handles[kind];
        fail(reason);
      },
    };
    w.addEventListener('error', (e) => mine.stop(new Error(`the map check stopped: ${e.message || 'a script error in its worker (see the console)'}`)));
    h = handles[kind] = mine;
  }
  return h;
}

/** `call` on the `kind` worker, stopped (the worker terminated) past `timeoutMs` or when `signal` aborts. */
function bounded<T>(kind: 'check' | 'random', call: (api: Remote<MapCheckApi>) => Promise<T>, timeoutMs: number, overrun: string, signal?: AbortSignal): Promise<T> {
  if (signal?.aborted) return Promise.reject(new CheckCancelled('cancelled'));
  const h = worker(kind);
  const timer = setTimeout(() => h.stop(new Error(overrun)), timeoutMs);
  const onAbort = () => h.stop(new CheckCancelled('cancelled'));
  signal?.addEventListener('abort', onAbort, { once: true });
  return Promise.race([call(h.api), h.died]).finally(() => {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  });
}

/**
 * The solver's verdict and checkEnv's problems for `map`, computed off the page; rejected after
 * `timeoutMs` (the worker is stopped, so a slow check never holds the next one up), or with
 * CheckCancelled when `signal` aborts (a newer edit).
 */
export function checkMapOffPage(map: GridMap, signal?: AbortSignal, timeoutMs = CHECK_TIMEOUT_MS): Promise<MapCheck> {
  return bounded('check', (api) => api.check(map), timeoutMs, `the check took longer than ${timeoutMs / 1000} s and was stopped; the map is not known to be solvable, so it cannot be trained on`, signal);
}

/** A random agent's success on `map` over the first `seeds` seeds, played off the page (stopped after `timeoutMs`). */
export function randomAgentOffPage(map: GridMap, seeds: number, timeoutMs = RANDOM_TIMEOUT_MS): Promise<RandomAgentReport> {
  return bounded('random', (api) => api.randomAgent(map, seeds), timeoutMs, `the random agent took longer than ${timeoutMs / 1000} s and was stopped`);
}
