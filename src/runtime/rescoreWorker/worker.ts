/**
 * The re-score worker (a module Web Worker): counterfactual re-scoring for the reward lab. A
 * worker of its own rather than the training worker's: it runs whether or not a run is alive
 * (finished, paused, reset), cannot queue behind or interleave with a training step, and its
 * QuickJS sandboxes (user code) never touch the page's thread. The page terminates it as the
 * backstop if an answer is overdue.
 *
 * Main thread: `wrap<RescoreWorkerApi>(new Worker(new URL('.../rescoreWorker/worker.ts', import.meta.url), { type: 'module' }))`.
 */
import { expose } from 'comlink';
import { prepareRescore, rescoreEpisodes, type RescoreCache, type RescoreReply, type RescoreRequest } from '../rewardSandbox/rescore.ts';

/** The last frozen buffer's replay and old-code values: a second edit on it scores only the new code. */
const cache: RescoreCache = { current: null };

/** Requests run one after another (a re-score sent while a prepare runs waits for its cache). */
let queue: Promise<unknown> = Promise.resolve();
function serial<T>(work: () => Promise<T>): Promise<T> {
  const next = queue.then(work);
  queue = next.catch(() => undefined);
  return next;
}

const api = {
  /** Replay and old-code scores of a freshly frozen buffer, cached for its re-scores. */
  prepare(req: Omit<RescoreRequest, 'newCode'>): Promise<Extract<RescoreReply, { ok: false }> | null> {
    return serial(() => prepareRescore(req, cache));
  },
  rescore(req: RescoreRequest): Promise<RescoreReply> {
    return serial(() => rescoreEpisodes(req, cache));
  },
};

export type RescoreWorkerApi = typeof api;
expose(api);
