/**
 * Dynamic sampling (DAPO, Yu et al. 2025) and group-signal statistics (the `groups/*` metrics).
 *
 * A group whose rewards are all equal (all solved, or all failed) gives every member advantage
 * 0 under GRPO/RLOO: it costs compute and contributes no gradient, and it dilutes token-level
 * aggregation. Dynamic sampling drops such groups and samples more until the batch holds
 * `targetGroups` groups with signal, or until `maxRounds` rounds were sampled.
 *
 * `addSamplingRound` is the pure step; `sampleWithDynamicSampling` drives the rounds for a
 * trainer, given how to sample a round of groups (the only part that differs between trainers).
 */
import { std, type Numbers } from './stats.ts';

export interface DynamicSamplingConfig {
  /** Drop zero-spread groups and resample; false = keep every group from one round. */
  enabled: boolean;
  /** Most sampling rounds per iteration, the first included (≥ 1); DAPO's max_num_gen_batches. */
  maxRounds: number;
  /** A group has "zero spread" when max − min ≤ spreadTol (reward units); absorbs float noise. */
  spreadTol: number;
}

export const DYNAMIC_SAMPLING_DEFAULTS: DynamicSamplingConfig = { enabled: false, maxRounds: 3, spreadTol: 1e-9 };

/** max − min of one group's rewards > tol. */
export function hasSpread(rewards: Numbers, tol = 0): boolean {
  if (rewards.length === 0) return false;
  let lo = Infinity, hi = -Infinity;
  for (let i = 0; i < rewards.length; i++) {
    if (rewards[i] < lo) lo = rewards[i];
    if (rewards[i] > hi) hi = rewards[i];
  }
  return hi - lo > tol;
}

export interface GroupStats {
  nGroups: number;
  /** Groups with zero spread (no learning signal). */
  zeroStdGroups: number;
  /** `groups/frac_zero_std`: zeroStdGroups / nGroups (0 for no groups). */
  fracZeroStd: number;
  /** `groups/reward_std_mean`: mean over groups of each group's sample std (N−1) of rewards. */
  rewardStdMean: number;
}

/** Group statistics over a list of groups (each an array of its members' rewards). */
export function groupStats(groups: readonly Numbers[], spreadTol = 0): GroupStats {
  let zero = 0, stdSum = 0;
  for (const g of groups) {
    if (!hasSpread(g, spreadTol)) zero++;
    stdSum += std(g);
  }
  const n = groups.length;
  return { nGroups: n, zeroStdGroups: zero, fracZeroStd: n ? zero / n : 0, rewardStdMean: n ? stdSum / n : 0 };
}

/** Split flat group-major rewards [G·N] into G views of length N. */
export function splitGroups(rewards: Numbers, groupSize: number): Numbers[] {
  if (!Number.isInteger(groupSize) || groupSize < 1 || rewards.length % groupSize !== 0) {
    throw new RangeError(`splitGroups: ${rewards.length} rewards do not split into groups of ${groupSize}`);
  }
  const out: Numbers[] = [];
  for (let o = 0; o < rewards.length; o += groupSize) out.push(Array.prototype.slice.call(rewards, o, o + groupSize) as number[]);
  return out;
}

/** Anything with the rewards of its members (the caller's group record: episodes, tokens, …). */
export interface RewardGroup {
  rewards: Numbers;
}

export interface DynamicSamplingState<G extends RewardGroup> {
  /** Groups accepted so far, in sampling order. */
  kept: G[];
  /** Rounds sampled so far. */
  rounds: number;
  /** Groups sampled over all rounds (kept, dropped and surplus). */
  sampledGroups: number;
  /** Zero-spread groups dropped (only when enabled). */
  droppedGroups: number;
  /** Statistics over *all* groups sampled this iteration (the signal-health metrics). */
  zeroStdGroups: number;
  stdSum: number;
}

export function initDynamicSampling<G extends RewardGroup>(): DynamicSamplingState<G> {
  return { kept: [], rounds: 0, sampledGroups: 0, droppedGroups: 0, zeroStdGroups: 0, stdSum: 0 };
}

export interface SamplingStep<G extends RewardGroup> {
  state: DynamicSamplingState<G>;
  /**
   * 'full': the batch holds targetGroups groups (`batch`, surplus discarded).
   * 'cap': maxRounds reached with fewer: `batch` is what there is (maybe empty: skip the update).
   * 'continue': sample `needGroups` more groups and call again.
   */
  decision: 'full' | 'cap' | 'continue';
  /** Groups still missing. */
  needGroups: number;
  /** The batch to train on, when decision is not 'continue'. */
  batch: G[] | null;
  /** Groups sampled beyond the target in the last round and discarded (not trained on). */
  surplusGroups: number;
}

/**
 * Add one round of sampled groups. Pure: returns a new state. With dynamic sampling disabled,
 * every group is kept and the first round always ends the loop ('full' if it reached the
 * target, else 'cap').
 */
export function addSamplingRound<G extends RewardGroup>(
  state: DynamicSamplingState<G>,
  groups: readonly G[],
  targetGroups: number,
  cfg: DynamicSamplingConfig,
): SamplingStep<G> {
  if (!Number.isInteger(targetGroups) || targetGroups < 1) throw new RangeError(`addSamplingRound: targetGroups must be a positive integer, got ${targetGroups}`);
  if (!Number.isInteger(cfg.maxRounds) || cfg.maxRounds < 1) throw new RangeError(`addSamplingRound: maxRounds must be an integer ≥ 1, got ${cfg.maxRounds}`);
  const kept = state.kept.slice();
  let dropped = state.droppedGroups, zero = state.zeroStdGroups, stdSum = state.stdSum;
  for (const g of groups) {
    const spread = hasSpread(g.rewards, cfg.spreadTol);
    if (!spread) zero++;
    stdSum += std(g.rewards);
    if (cfg.enabled && !spread) dropped++;
    else kept.push(g);
  }
  const next: DynamicSamplingState<G> = {
    kept,
    rounds: state.rounds + 1,
    sampledGroups: state.sampledGroups + groups.length,
    droppedGroups: dropped,
    zeroStdGroups: zero,
    stdSum,
  };
  const capRounds = cfg.enabled ? cfg.maxRounds : 1;
  if (kept.length >= targetGroups) {
    return { state: next, decision: 'full', needGroups: 0, batch: kept.slice(0, targetGroups), surplusGroups: kept.length - targetGroups };
  }
  const need = targetGroups - kept.length;
  if (next.rounds >= capRounds) return { state: next, decision: 'cap', needGroups: need, batch: kept, surplusGroups: 0 };
  return { state: next, decision: 'continue', needGroups: need, batch: null, surplusGroups: 0 };
}

/** `groups/frac_zero_std` and `groups/reward_std_mean` over every group sampled this iteration. */
export function samplingStats<G extends RewardGroup>(state: DynamicSamplingState<G>): GroupStats {
  const n = state.sampledGroups;
  return {
    nGroups: n,
    zeroStdGroups: state.zeroStdGroups,
    fracZeroStd: n ? state.zeroStdGroups / n : 0,
    rewardStdMean: n ? state.stdSum / n : 0,
  };
}

/**
 * The collect phase's dynamic-sampling loop, shared by every trainer: samples rounds until the
 * batch holds `targetGroups` groups with signal or the round cap is hit.
 * @param sampleRound samples round `round` (0 first) of groups; `needGroups` is how many are
 *   still missing (the whole target in round 0). It may return more or fewer.
 * @returns the final state (its statistics cover every sampled group) and the batch to train on
 *   (maybe empty: the cap was hit without any group with signal).
 */
export async function sampleWithDynamicSampling<G extends RewardGroup>(
  sampleRound: (round: number, needGroups: number) => Promise<readonly G[]>,
  targetGroups: number,
  cfg: DynamicSamplingConfig,
): Promise<{ state: DynamicSamplingState<G>; batch: G[] }> {
  let state = initDynamicSampling<G>();
  let need = targetGroups;
  for (let round = 0; ; round++) {
    const step = addSamplingRound(state, await sampleRound(round, need), targetGroups, cfg);
    state = step.state;
    if (step.decision !== 'continue') return { state, batch: step.batch ?? [] };
    need = step.needGroups;
  }
}
