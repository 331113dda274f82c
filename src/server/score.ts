/**
 * `POST /score` (served when `npm run serve` was started with `--reward-file FILE`): scores one
 * finished episode with reward-lab terms in the playground's own sandbox, so an exported
 * experiment's terms that did not translate to Python score exactly as they did in the run.
 *
 * Body: `{seed, kwargs?, actions, rewards, infos?, observations?, terminated?, truncated?}` as the
 * exported reward_terms.py records them (grid envs: action ids, replayed from the seed and
 * checked against the rewards; text envs: action texts with the server's infos and observation
 * texts). Answer: `{terms: {name: the episode's sum}, skipped: [messages]}`; a non-finite value
 * counts 0 for the episode and is reported, as the reward lab's 'skip'.
 */
import { makeEnv, type GridEnv, type Info } from '../core/envs/index.ts';
import { buildGridStepRecords, buildTextStepRecords, type ScoreEpisode } from '../core/reward/stepRecord.ts';
import { resolveTermScores, type RewardTermsScorer } from '../core/reward/rewardTerms.ts';
import { WireError, type Json } from './wire.ts';

/** Scores one episode of `envId` from a /score body. */
export type EpisodeScorer = (envId: string, body: unknown) => Promise<Json>;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const bad = (msg: string) => new WireError(422, [{ type: 'value_error', loc: ['body'], msg }], 'VALIDATION_ERROR');

/** The step records a /score body describes, or a 422 naming the field. */
export function recordsFromBody(envId: string, body: unknown): ScoreEpisode {
  if (!isObject(body)) throw bad('the body must be an object: {"seed", "actions", "rewards", ...}');
  const { seed, kwargs = {}, actions, rewards } = body;
  if (typeof seed !== 'number' || !Number.isInteger(seed) || seed < 0) throw bad(`seed must be the episode's reset seed (an integer >= 0), got ${JSON.stringify(seed ?? null)}`);
  if (!isObject(kwargs)) throw bad('kwargs must be an object of env kwargs');
  if (!Array.isArray(actions) || !Array.isArray(rewards) || actions.length !== rewards.length) throw bad('actions and rewards must be lists of the same length (one per env step)');
  if (!rewards.every((r) => typeof r === 'number' && Number.isFinite(r))) throw bad('rewards must be finite numbers');
  const env = makeEnv(envId, kwargs);
  try {
    if (env.spec.actionSpace.kind === 'discrete') {
      if (!actions.every((a) => Number.isInteger(a))) throw bad(`${envId} actions are action ids (integers)`);
      return buildGridStepRecords(env as GridEnv, { envId, seed, actions: actions as number[], rewards: rewards as number[] });
    }
    const { infos, observations } = body;
    if (!actions.every((a) => typeof a === 'string')) throw bad(`${envId} actions are the call texts the env received`);
    if (!Array.isArray(infos) || infos.length !== actions.length || !infos.every(isObject)) throw bad('infos must be the info object of each step (as /step answered)');
    if (!Array.isArray(observations) || observations.length < actions.length) throw bad('observations must be the task text, then each reply text (null where unknown)');
    return buildTextStepRecords({
      envId,
      seed,
      actions: actions as string[],
      rewards: rewards as number[],
      infos: infos as Info[],
      observations: observations.map((o) => (typeof o === 'string' ? o : '')),
      terminated: body.terminated === true,
      truncated: body.truncated === true,
    });
  } catch (e) {
    if (e instanceof WireError) throw e;
    throw bad((e as Error).message);
  }
}

/** A /score handler over one sandbox; calls are serialised (the sandbox scores one batch at a time). */
export function episodeScorer(scorer: RewardTermsScorer): EpisodeScorer {
  let queue: Promise<unknown> = Promise.resolve();
  return (envId, body) => {
    const rec = recordsFromBody(envId, body);
    const run = queue.then(async () => {
      const [raw] = await scorer.score([rec]);
      const { values, skipped } = resolveTermScores(raw, 'skip', { seed: rec.seed, lineOf: (t) => scorer.lineOf(t) });
      const terms: Record<string, number> = {};
      for (const name of scorer.terms) terms[name] = (values[name] ?? new Float64Array(0)).reduce((a, b) => a + b, 0);
      return { terms, skipped } as Json;
    });
    queue = run.catch(() => undefined);
    return run.catch((e: unknown) => {
      throw new WireError(422, `scoring failed: ${(e as Error).message}`, 'EXECUTION_ERROR');
    });
  };
}
