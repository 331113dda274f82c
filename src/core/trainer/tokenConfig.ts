/**
 * What the two token collectors (lockstep and continuous) share: their view of the rollout plan, the
 * shaping of a round of token episodes (env reward + named shaping terms + user reward terms), and
 * greedy or held-out play of seeds on a decoder.
 */
import { TOKEN_PREFILL_STEP, TOKEN_TEMPERATURE, type RolloutPlan, type SchedulingPlan } from '../presets/plan.ts';
import type { TokenDecoder } from '../engine/types.ts';
import type { ToolEnv } from '../envs/types.ts';
import { DEFAULT_TOKEN_MODEL, type TransformerModelConfig } from '../models/transformer.ts';
import { addTermRewards } from '../reward/rewardTerms.ts';
import { DEFAULT_SHAPING, type ShapedReward } from '../reward/shaping.ts';
import { buildTextStepRecords } from '../reward/stepRecord.ts';
import { collectTokenEpisodes } from '../rollout/tokenLockstep.ts';
import { shapeTokenEpisode, type TokenEpisode } from '../rollout/tokenEpisode.ts';
import { mixSeed, Rng } from '../util/rng.ts';
import type { RewardScoring } from './rewards.ts';

/**
 * What the token collectors (lockstep, continuous) read of their stage's rollout plan
 * (presets/plan.ts): a view of the one plan type, not a config of their own. Absent `schedule`,
 * `tree` and `scheduling` mean fixed shaping weights, no tree rollouts, and synchronous play with
 * fresh prompts and one decoder row per episode.
 */
export type TokenTrainerConfig = Pick<
  RolloutPlan<TransformerModelConfig>,
  'env' | 'model' | 'algo' | 'shaping' | 'groups' | 'episodes' | 'learnerBatch' | 'maxActionTokens' | 'prefillStep' | 'temperature' | 'constrained' | 'seed'
> &
  Partial<Pick<RolloutPlan<TransformerModelConfig>, 'schedule' | 'tree'>> & {
    /** The continuous loop's scheduling (staleness bound, KV rows, prompt budget); absent fields: sync, one row per episode, fresh prompts. */
    scheduling?: Partial<SchedulingPlan>;
  };

export const DEFAULT_TOKEN_TRAINER: Omit<TokenTrainerConfig, 'env' | 'algo'> = {
  model: DEFAULT_TOKEN_MODEL,
  shaping: DEFAULT_SHAPING,
  groups: 8,
  episodes: 64,
  learnerBatch: 16,
  maxActionTokens: 32,
  prefillStep: TOKEN_PREFILL_STEP,
  temperature: TOKEN_TEMPERATURE,
  constrained: false,
  seed: 0,
};

/**
 * Env reward + shaping + user terms of token episodes. The user terms score one step record per
 * env step (a tool call or the answer turn) in the sandbox, and each term's per-step values join
 * the shaped reward's perStep, total and terms (so `reward/<term>/mean` is the mean episode sum of
 * the term, as for grids) before any advantage is computed.
 */
export async function shapeTokenEpisodes(rewards: RewardScoring, eps: readonly TokenEpisode[]): Promise<ShapedReward[]> {
  const shaped = eps.map((ep) => shapeTokenEpisode(ep, rewards.shaping, rewards.weights));
  const terms = rewards.lab ? await rewards.userTerms(eps.map(buildTextStepRecords)) : null;
  return terms ? shaped.map((s, i) => addTermRewards(s, terms[i], rewards.lab?.logOnly)) : shaped;
}

/**
 * Plays `seeds` on `envs` and `decoder` (one row per env) without training (temperature 0 =
 * greedy), a decoder batch at a time; the last batch's spare rows replay its first seed. Each
 * batch samples from its own stream (seed, 0xe7a1, offset), so a seed's episode does not depend
 * on what was played before it.
 */
export async function playTokenSeeds(envs: ToolEnv[], decoder: TokenDecoder, seeds: readonly number[], temperature: number, cfg: Pick<TokenTrainerConfig, 'seed' | 'maxActionTokens' | 'constrained'>): Promise<TokenEpisode[]> {
  const out: TokenEpisode[] = [];
  const n = envs.length;
  for (let i = 0; i < seeds.length; i += n) {
    const chunk = seeds.slice(i, i + n);
    const padded = [...chunk, ...Array<number>(n - chunk.length).fill(chunk[0])];
    const r = await collectTokenEpisodes({
      envs,
      seeds: padded,
      groups: padded.map(() => -1),
      decoder,
      rng: new Rng(mixSeed(cfg.seed, 0xe7a1, i)),
      temperature,
      maxActionTokens: cfg.maxActionTokens,
      constrained: cfg.constrained,
    });
    out.push(...r.episodes.slice(0, chunk.length));
  }
  return out;
}
