/**
 * What the two token collectors (lockstep and continuous) share: the config of a token run, the
 * shaping of a round of token episodes (env reward + named shaping terms + user reward terms), and
 * greedy or held-out play of seeds on a decoder.
 */
import type { TreeRolloutConfig } from '../rollout/treeRollout.ts';
import type { RolloutBudgetConfig } from '../algos/budget.ts';
import type { AlgoConfig } from '../algos/config.ts';
import type { TokenDecoder } from '../engine/types.ts';
import type { EnvKwargs } from '../envs/index.ts';
import type { ToolEnv } from '../envs/types.ts';
import { DEFAULT_TOKEN_MODEL, type TransformerModelConfig } from '../models/transformer.ts';
import { addTermRewards } from '../reward/rewardTerms.ts';
import { DEFAULT_SHAPING, type ShapedReward, type ShapingConfig, type ShapingSchedule } from '../reward/shaping.ts';
import { buildTextStepRecords } from '../reward/stepRecord.ts';
import { collectTokenEpisodes } from '../rollout/tokenLockstep.ts';
import { shapeTokenEpisode, type TokenEpisode } from '../rollout/tokenEpisode.ts';
import { mixSeed, Rng } from '../util/rng.ts';
import type { RewardScoring } from './rewards.ts';

export interface TokenTrainerConfig {
  /** Env registry id (a tool env, or a grid env played as text) and its kwargs. */
  env: { id: string; kwargs?: EnvKwargs };
  model: TransformerModelConfig;
  /** Advantage estimator etc. PPO gives the transformer a value head and uses token GAE. */
  algo: AlgoConfig;
  shaping: ShapingConfig;
  /** Groups per iteration for group algorithms (each `algo.groupSize` episodes from one seed). */
  groups: number;
  /** Episodes per iteration for REINFORCE and PPO (distinct seeds). */
  episodes: number;
  /** Sequences per train step (static graph batch); an iteration takes ⌈episodes / batch⌉ steps. */
  learnerBatch: number;
  /** Most tokens per action (<eoa> included) before a forced end. */
  maxActionTokens: number;
  /** Tokens per row in a prefill call (observations are fed in chunks of this size; 1 = off). */
  prefillStep: number;
  /** Sampling temperature of the rollout policy (1 = on-policy; the mismatch check needs 1). */
  temperature: number;
  /** Constrained decoding: sample (and train) the policy masked to the env's action grammar. */
  constrained: boolean;
  /** Master seed: weights, env seeds and sampling derive from it. */
  seed: number;
  /** How episodes are split over prompts (the continuous collector only; default uniform, fresh prompts). */
  budget?: RolloutBudgetConfig;
  /** A progressive reward schedule: stages of shaping weights, advanced by success (null: the shaping's own weights throughout). */
  schedule?: ShapingSchedule | null;
  /** Tree rollouts (the lockstep collector only; default off). */
  tree?: TreeRolloutConfig;
}

export const DEFAULT_TOKEN_TRAINER: Omit<TokenTrainerConfig, 'env' | 'algo'> = {
  model: DEFAULT_TOKEN_MODEL,
  shaping: DEFAULT_SHAPING,
  groups: 8,
  episodes: 64,
  learnerBatch: 16,
  maxActionTokens: 32,
  prefillStep: 8,
  temperature: 1,
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
