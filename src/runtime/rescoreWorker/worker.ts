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
import { rescoreEpisodes, type RescoreCache, type RescoreReply, type RescoreRequest } from '../rewardSandbox/rescore.ts';

/** The last frozen buffer's replay and old-code values: a second edit on it scores only the new code. */
const cache: RescoreCache = { current: null };

const api = {
  rescore(req: RescoreRequest): Promise<RescoreReply> {
    return rescoreEpisodes(req, cache);
  },
};

export type RescoreWorkerApi = typeof api;
expose(api);
