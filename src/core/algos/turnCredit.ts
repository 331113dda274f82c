/**
 * Turn-level credit for multi-turn episodes: MT-GRPO (Zeng et al. 2025, "Reinforcing Multi-Turn
 * Reasoning in LLM Agents via Turn-Level Credit Assignment", arXiv 2505.11821). GRPO gives every
 * token of an episode one advantage from its outcome; MT-GRPO adds, on the tokens of the turns
 * before the last, an advantage from a turn-level reward (did the tool call work, did the lookup
 * find what the question needs), so a good call in a failed episode is not blamed for the answer.
 *
 * The paper's two-turn form (turn 1: a tool call; turn 2: the answer), for episode i of a group g:
 *
 *   Â^T_i = (R^T_i − mean_g R^T) / (std_g R^T + ε)     the turn-level reward, group-normalised
 *   Â^O_i = (R^O_i − mean_g R^O) / (std_g R^O + ε)     the outcome reward, group-normalised
 *   A_{i,1} = Â^T_i + λ · Â^O_i                         on the first turn's tokens
 *   A_{i,2} = Â^O_i                                     on the final turn's tokens
 *
 * (std: the sample std, as GRPO's; ε = algo.stdEps; an all-equal group gives exactly 0.) The
 * authors' released trainer writes the first turn as Â^O + λ·Â^T; the two agree at the paper's
 * λ = 1 and differ otherwise: this file follows the paper's equation (λ on the outcome term).
 *
 * More than two turns, as the formula extends: an episode with K_i actions has K_i − 1
 * intermediate actions (each followed by an env reply) and one final action (its answer, or
 * whatever ended it: the turn limit, or a half-written action where the context filled up).
 *
 *   A_{i,k} = Â^T_{i,k} + λ · Â^O_i     for k < K_i (each intermediate action k, 1-based)
 *   A_{i,K_i} = Â^O_i                   on the final action
 *   Â^T_{i,k} = (R^T_{i,k} − mean R^T_{·,k}) / (std R^T_{·,k} + ε), mean and std over the
 *               episodes j of the same group that also have an intermediate action k
 *
 * i.e. each turn index is its own comparison, as turn 1 is in the paper (equal turn indices in a
 * group of episodes from one seed sit at the same depth of the task). A turn index only one
 * episode of the group reached has no spread: its turn term is 0, as GRPO's group of one.
 */
import { grpoAdvantages } from './advantages.ts';
import { groupSizes } from './registry/types.ts';
import { mean, std, type Numbers } from './stats.ts';

/** Where each turn's turn-level reward R^T comes from. */
export type TurnRewardSource = 'reward' | 'progress' | 'reward+progress';
export const TURN_REWARD_SOURCES: readonly TurnRewardSource[] = ['reward', 'progress', 'reward+progress'];

/** MT-GRPO's settings (AlgoConfig.turnCredit). */
export interface TurnCreditConfig {
  /** λ: weight of the outcome advantage on every intermediate turn (the paper's λ; 1 in its experiments). */
  lambda: number;
  /**
   * The turn-level reward R^T of each intermediate turn: 'reward' = the turn's shaped reward (the
   * env's step reward plus any shaping terms that arose there), 'progress' = the env's
   * `info.progress` for the turn (kv-lookup: 1 for each first lookup of a key on the question's
   * chain; flaky-api: 1 for the first successful fetch), 'reward+progress' = their sum.
   */
  source: TurnRewardSource;
}

export const DEFAULT_TURN_CREDIT: TurnCreditConfig = { lambda: 1, source: 'reward+progress' };

/** One episode of a group, as MT-GRPO reads it. */
export interface TurnCreditEpisode {
  /** R^O: the outcome reward (the episode's shaped total, what GRPO compares). */
  outcome: number;
  /** [≥ actions − 1] R^T of each intermediate action (entries past actions − 1 are ignored). */
  turnRewards: Numbers;
  /** K: actions in the episode's context (≥ 1), the final one included. */
  actions: number;
}

export interface TurnCreditOptions {
  lambda: number;
  /** Divide by the group's sample std (as GRPO). */
  normalizeStd: boolean;
  eps: number;
}

/** Group-normalised values, exactly 0 when all equal or fewer than two. */
function normalised(xs: readonly number[], o: TurnCreditOptions): number[] {
  if (xs.length < 2 || xs.every((x) => x === xs[0])) return xs.map(() => 0);
  const m = mean(xs);
  const scale = o.normalizeStd ? std(xs) + o.eps : 1;
  return xs.map((x) => (x - m) / scale);
}

/**
 * MT-GRPO advantages per action, [episode][action], for a batch of groups (group-major: one
 * size for all groups, or each group's size in order), plus each episode's outcome advantage Â^O.
 */
export function mtGrpoAdvantages(episodes: readonly TurnCreditEpisode[], groupSize: number | readonly number[], o: TurnCreditOptions): { perAction: Float64Array[]; outcomeAdv: Float64Array } {
  const outcomeAdv = new Float64Array(episodes.length);
  const perAction: Float64Array[] = [];
  let start = 0;
  for (const n of groupSizes(groupSize, episodes.length, 'mtGrpoAdvantages')) {
    const members = Array.from({ length: n }, (_, j) => start + j);
    start += n;
    outcomeAdv.set(grpoAdvantages(members.map((i) => episodes[i].outcome), n, { normalizeStd: o.normalizeStd, eps: o.eps }), members[0]);
    for (const i of members) {
      const e = episodes[i];
      if (!Number.isInteger(e.actions) || e.actions < 1) throw new RangeError(`mtGrpoAdvantages: episode ${i} has ${e.actions} actions (needs ≥ 1)`);
      if (e.turnRewards.length < e.actions - 1) throw new RangeError(`mtGrpoAdvantages: episode ${i} has ${e.actions} actions but ${e.turnRewards.length} turn rewards (needs one per intermediate action)`);
      perAction.push(new Float64Array(e.actions).fill(outcomeAdv[i]));
    }
    const depth = Math.max(0, ...members.map((i) => episodes[i].actions - 1));
    for (let k = 0; k < depth; k++) {
      const at = members.filter((i) => k < episodes[i].actions - 1);
      const z = normalised(at.map((i) => episodes[i].turnRewards[k]), o);
      at.forEach((i, m) => (perAction[i][k] = z[m] + o.lambda * outcomeAdv[i]));
    }
  }
  return { perAction, outcomeAdv };
}

/** R^T of each of an episode's turns from its shaped per-turn rewards and the env's infos. */
export function turnRewardsOf(source: TurnRewardSource, perStep: Numbers, infos: readonly { progress?: unknown }[]): Float64Array {
  const out = new Float64Array(perStep.length);
  for (let t = 0; t < out.length; t++) {
    const p = infos[t]?.progress;
    const progress = typeof p === 'number' && Number.isFinite(p) ? p : 0;
    out[t] = (source === 'progress' ? 0 : perStep[t]) + (source === 'reward' ? 0 : progress);
  }
  return out;
}
