/**
 * Counterfactual re-scoring, the runtime half: replay each frozen episode from its seed into step
 * records, score them with the run's code and with the edited code, each in its own QuickJS
 * sandbox, and hand the values to core/reward/rescore.ts. Runs in the re-score worker (the
 * browser) or in Node (tests); never on the page's thread, since it runs user code.
 */
import { familyOf } from '../../core/envs/families.ts';
import { makeEnv } from '../../core/envs/index.ts';
import type { GridEnv } from '../../core/envs/types.ts';
import { rescoreBuffer, type FrozenEpisode, type RescoreAlgo, type RescoreResult, type TermValues } from '../../core/reward/rescore.ts';
import { RewardTermError, resolveTermScores } from '../../core/reward/rewardTerms.ts';
import { buildGridStepRecords, buildTextStepRecords, type ScoreEpisode } from '../../core/reward/stepRecord.ts';
import { createRewardSandbox } from './quickjs.ts';

export interface RescoreRequest {
  /** Env registry id and kwargs of the run the episodes came from. */
  envId: string;
  envKwargs: Record<string, unknown>;
  algo: RescoreAlgo;
  /** The code that scored the frozen episodes ('' = none). */
  oldCode: string;
  /** The edited code to score them with ('' = no user terms). */
  newCode: string;
  /** Most wall time one term call may take, ms (the run's reward.callTimeoutMs). */
  callTimeoutMs: number;
  episodes: FrozenEpisode[];
  /** How many of the most moved episodes to list. */
  top?: number;
  /**
   * Names this frozen buffer: with a cache, the replay and the old code's values are kept under
   * it, so re-scoring the same buffer with another edit runs only the new code.
   */
  bufferId?: string;
}

/** The replayed records and the old code's values of the last buffer re-scored (one buffer at a time). */
export interface RescoreCache {
  current: { key: string; records: ScoreEpisode[]; before: TermValues; problems: string[] } | null;
}

export type RescoreReply =
  | {
      ok: true;
      result: RescoreResult;
      /** Terms of the old and the new code, in source order. */
      oldTerms: string[];
      newTerms: string[];
      /** Non-finite values, counted 0 for their episode (as the run's 'skip' policy does), at most 5 messages. */
      problems: string[];
      /** Wall time of replay + scoring + statistics, ms. */
      ms: number;
    }
  | { ok: false; message: string; term: string | null; which: 'old' | 'new' | 'replay' };

/**
 * The step records the terms score: a token episode's read off what it recorded (as the token
 * trainers score it), a grid episode's replayed from its seed and actions (checked against the
 * recorded rewards). One buffer is one run, so all of one kind.
 */
function stepRecords(req: Pick<RescoreRequest, 'envId' | 'envKwargs' | 'episodes'>): ScoreEpisode[] {
  const text = req.episodes.filter((ep) => ep.text).length;
  if (text === req.episodes.length) {
    return req.episodes.map((ep) => buildTextStepRecords({ envId: req.envId, seed: ep.seed, rewards: ep.rewards, ...ep.text! }));
  }
  if (text > 0) throw new Error(`re-scoring: ${text} of ${req.episodes.length} frozen episodes are token episodes; a buffer holds one run's episodes, all of one kind`);
  const env = makeEnv(req.envId, req.envKwargs);
  if (!familyOf(env.spec).stepPool) throw new Error(`re-scoring replays grid episodes from their actions; ${req.envId} is not a grid env, and its episodes carry no token record`);
  return req.episodes.map((ep) => buildGridStepRecords(env as GridEnv, { envId: req.envId, seed: ep.seed, actions: ep.actions, rewards: ep.rewards }));
}

/** Scores `records` with `code` in a fresh sandbox; non-finite values count 0 for that episode. */
async function termValues(code: string, records: readonly ScoreEpisode[], callTimeoutMs: number, problems: string[]): Promise<TermValues> {
  if (code.trim() === '') return { terms: [], values: records.map(() => ({})) };
  const scorer = await createRewardSandbox(code, { callTimeoutMs });
  try {
    const raw = await scorer.score(records);
    const values = raw.map((r, i) => {
      const res = resolveTermScores(r, 'skip', { seed: records[i].seed, lineOf: (t) => scorer.lineOf(t) });
      for (const m of res.skipped) if (problems.length < 5) problems.push(m);
      return res.values;
    });
    return { terms: [...scorer.terms], values };
  } finally {
    scorer.close();
  }
}

/**
 * The replay and the old code's values of `req`'s buffer: from the cache when it holds them
 * (same bufferId and old code), else computed (and cached when the request names its buffer).
 */
async function prepared(req: Omit<RescoreRequest, 'newCode'>, cache: RescoreCache | undefined): Promise<{ records: ScoreEpisode[]; before: TermValues; problems: string[] } | Extract<RescoreReply, { ok: false }>> {
  const key = req.bufferId === undefined ? null : `${req.bufferId}\u0000${req.oldCode}`;
  const hit = key !== null && cache?.current?.key === key ? cache.current : null;
  if (hit) return { records: hit.records, before: hit.before, problems: [...hit.problems] };
  if (cache) cache.current = null;
  let records: ScoreEpisode[];
  try {
    records = stepRecords(req);
  } catch (e) {
    return { ok: false, message: (e as Error).message, term: null, which: 'replay' };
  }
  const problems: string[] = [];
  let before: TermValues;
  try {
    before = await termValues(req.oldCode, records, req.callTimeoutMs, problems);
  } catch (e) {
    return { ok: false, message: `the run's current code failed on the frozen episodes: ${(e as Error).message}`, term: e instanceof RewardTermError ? e.term : null, which: 'old' };
  }
  if (cache && key !== null) cache.current = { key, records, before, problems: [...problems] };
  return { records, before, problems };
}

/**
 * Replays a buffer and scores it with its old code ahead of the first re-score (at freeze time,
 * while the person edits), so that re-score runs only the new code. Null when ready, else the
 * refusal a re-score would give.
 */
export async function prepareRescore(req: Omit<RescoreRequest, 'newCode'>, cache: RescoreCache): Promise<Extract<RescoreReply, { ok: false }> | null> {
  const p = await prepared(req, cache);
  return 'ok' in p ? p : null;
}

/**
 * Re-scores `req.episodes`. A replay that disagrees with the recorded rewards, or code that does
 * not load, throws or loops, answers `ok: false` with the sandbox's message (term, line, seed).
 */
export async function rescoreEpisodes(req: RescoreRequest, cache?: RescoreCache): Promise<RescoreReply> {
  const t0 = performance.now();
  const p = await prepared(req, cache);
  if ('ok' in p) return p;
  const { records, before, problems } = p;
  let after: TermValues;
  try {
    after = await termValues(req.newCode, records, req.callTimeoutMs, problems);
  } catch (e) {
    return { ok: false, message: (e as Error).message, term: e instanceof RewardTermError ? e.term : null, which: 'new' };
  }
  const result = rescoreBuffer(req.algo, req.episodes, before, after, req.top ?? 10);
  return { ok: true, result, oldTerms: [...before.terms], newTerms: [...after.terms], problems: problems.slice(0, 5), ms: performance.now() - t0 };
}
