/**
 * The score → advantages → weights/TIS phases for a step policy (grid worlds, MLP): a batch of
 * step episodes flattened into rows, one per step, in episode order (row r of episode e at
 * offset Σ_{e' < e} T_e' + t).
 */
import { remaxAdvantages } from '../algos/remax.ts';
import { gigpoAdvantages } from '../algos/stepGroups.ts';
import { gae, normalizeAdvantages, sequenceAggregationWeights, type EmaBaselineState } from '../algos/advantages.ts';
import { algoDescriptor, sequenceAdvantages } from '../algos/registry/index.ts';
import type { AlgoConfig } from '../algos/config.ts';
import { klPenalizeSteps } from '../algos/losses.ts';
import { truncatedIsWeights, type TisResult } from '../algos/offpolicy.ts';
import type { PolicyRunner } from '../engine/types.ts';
import type { ShapedReward } from '../reward/shaping.ts';
import { stepFeatures, type StepEpisode } from '../rollout/stepEpisode.ts';

/** A batch of steps, one row per step. */
export interface StepRows {
  /** Rows (steps over all episodes). */
  S: number;
  /** Features per row. */
  D: number;
  /** [S·D] policy input of each step. */
  obs: Float32Array;
  /** [S] action taken. */
  actions: Int32Array;
  /** [S] behaviour log-prob μ of the action. */
  mu: Float32Array;
  /** [S] V(s_t) at rollout time (0 without a value head). */
  values: Float32Array;
  /** [S] policy version that chose the action. */
  versions: Int32Array;
  /** [S] index of the row's episode in the batch (GSPO's sequences). */
  episode: Int32Array;
}

/** Flattens episodes into rows (`D` = the policy's observation size). */
export function flattenSteps(episodes: readonly StepEpisode[], D: number): StepRows {
  const S = episodes.reduce((s, ep) => s + ep.actions.length, 0);
  const rows: StepRows = { S, D, obs: new Float32Array(S * D), actions: new Int32Array(S), mu: new Float32Array(S), values: new Float32Array(S), versions: new Int32Array(S), episode: new Int32Array(S) };
  let o = 0;
  for (const [e, ep] of episodes.entries()) {
    rows.episode.fill(e, o, o + ep.actions.length);
    for (let t = 0; t < ep.actions.length; t++) stepFeatures(ep, t, rows.obs, (o + t) * D);
    rows.actions.set(ep.actions, o);
    rows.mu.set(ep.logprobs, o);
    rows.values.set(ep.values, o);
    rows.versions.set(ep.versions, o);
    o += ep.actions.length;
  }
  return rows;
}

/**
 * log π(a_r | s_r) of the listed rows under `runner` (its batch per call; unused slots zero),
 * [rows.length] in the order given.
 * @param A actions per distribution (the runner's logprobs are [batch·A]).
 */
export async function rowLogprobs(runner: PolicyRunner, rows: StepRows, which: readonly number[], A: number): Promise<Float32Array> {
  const { D } = rows;
  const B = runner.batch;
  const out = new Float32Array(which.length);
  const obs = new Float32Array(B * D);
  for (let c = 0; c < which.length; c += B) {
    const chunk = which.slice(c, c + B);
    obs.fill(0);
    chunk.forEach((r, j) => obs.set(rows.obs.subarray(r * D, (r + 1) * D), j * D));
    const res = await runner.run({ obs });
    chunk.forEach((r, j) => (out[c + j] = res.logprobs[j * A + rows.actions[r]]));
  }
  return out;
}

/**
 * The score phase's KL penalty (klMode 'reward'): each step's shaped reward loses
 * β·KL(μ ‖ π_ref) of its action (`klPenalizeSteps`), in place, before advantages.
 * @param refLogp [S] the reference's log-probs of the actions, in row order.
 */
export function klRewardSteps(episodes: readonly StepEpisode[], shaped: readonly ShapedReward[], refLogp: Float32Array, algo: Pick<AlgoConfig, 'klCoef' | 'klEstimator'>): void {
  let o = 0;
  episodes.forEach((ep, e) => {
    const T = ep.actions.length;
    klPenalizeSteps(shaped[e], ep.logprobs, refLogp.subarray(o, o + T), algo.klCoef, algo.klEstimator);
    o += T;
  });
}

export interface StepAdvantages {
  /** [S] advantage per row. */
  adv: Float64Array;
  /** [S] value targets (PPO's GAE returns; 0 otherwise). */
  returns: Float64Array;
  /** [n] each episode's advantage (PPO: its first step's). */
  episodeAdv: Float64Array;
  ema: EmaBaselineState;
  /** GiGPO: mean step groups per group and the share of steps in one (`groups/step_groups_mean`, `groups/grouped_step_share`). */
  stepGroups?: { perGroup: number; groupedShare: number };
}

/**
 * Advantages per row. PPO: GAE over each episode's shaped per-step rewards (bootstrapping a
 * truncated episode from its V(s_T)), optionally normalized over the batch. Sequence-level
 * algorithms: one advantage per episode from `totals`, on every step of it.
 */
export function stepAdvantages(
  algo: AlgoConfig,
  episodes: readonly StepEpisode[],
  shaped: readonly ShapedReward[],
  totals: Float64Array,
  S: number,
  ema: EmaBaselineState,
  /** ReMax: each group's greedy episode reward ([groups]); required for algo 'remax'. */
  greedyTotals?: Float64Array,
): StepAdvantages {
  const adv = new Float64Array(S);
  const returns = new Float64Array(S);
  const episodeAdv = new Float64Array(episodes.length);
  let o = 0;
  const kind = algoDescriptor(algo.algo).advantage.kind;
  if (kind === 'gae') {
    episodes.forEach((ep, i) => {
      const g = { rewards: shaped[i].perStep, values: ep.values, terminated: ep.terminated, truncated: ep.truncated, bootstrapValue: ep.bootstrapValue };
      const r = gae(g, algo.gamma, algo.lambda);
      adv.set(r.advantages, o);
      returns.set(r.returns, o);
      episodeAdv[i] = r.advantages[0] ?? 0;
      o += ep.actions.length;
    });
    if (algo.normalizeAdvantages) adv.set(normalizeAdvantages(adv));
    return { adv, returns, episodeAdv, ema };
  }
  if (kind === 'step-groups') {
    const steps = episodes.map((ep, i) => ({ stateKeys: stepStateKeys(ep), rewards: shaped[i].perStep }));
    const g = gigpoAdvantages(steps, totals, algo.groupSize, { gamma: algo.gamma, normalizeStd: algo.normalizeStd, eps: algo.stdEps, omega: algo.stepAdvantageWeight });
    episodes.forEach((ep, i) => {
      episodeAdv[i] = g.episodeAdvantages[i];
      adv.set(g.advantages[i], o);
      o += ep.actions.length;
    });
    return { adv, returns, episodeAdv, ema, stepGroups: { perGroup: g.stepGroupsPerGroup, groupedShare: g.groupedStepShare } };
  }
  if (kind === 'greedy-baseline') {
    if (!greedyTotals) throw new Error(`stepAdvantages: ${algo.algo} needs each group's greedy reward`);
    const a = remaxAdvantages(totals, greedyTotals, algo.groupSize);
    episodes.forEach((ep, i) => {
      episodeAdv[i] = a[i];
      adv.fill(a[i], o, o + ep.actions.length);
      o += ep.actions.length;
    });
    return { adv, returns, episodeAdv, ema };
  }
  const r = sequenceAdvantages(algo, totals, ema, episodes.map((ep) => ep.actions.length));
  episodes.forEach((ep, i) => {
    episodeAdv[i] = r.advantages[i];
    adv.fill(r.advantages[i], o, o + ep.actions.length);
    o += ep.actions.length;
  });
  return { adv, returns, episodeAdv, ema: r.ema };
}

/**
 * Aggregation weights per row (`sequenceAggregationWeights` with each episode's steps as its
 * tokens); 'constant' divides by `aggregationLen`, default the env's time limit.
 */
export function stepWeights(episodes: readonly StepEpisode[], algo: Pick<AlgoConfig, 'aggregation' | 'aggregationLen'>, maxSteps: number): Float64Array {
  const counts = episodes.map((ep) => ep.actions.length);
  const perEp = sequenceAggregationWeights(counts, algo.aggregation, algo.aggregationLen ?? maxSteps);
  const w = new Float64Array(counts.reduce((a, b) => a + b, 0));
  let o = 0;
  episodes.forEach((_, e) => {
    w.fill(perEp[e], o, o + counts[e]);
    o += counts[e];
  });
  return w;
}

export interface StepOffPolicy {
  /** [S] π_old the ratio is taken against: μ, or the proximal policy on stale rows with TIS. */
  oldLogp: Float32Array;
  /** [S] advantages with the TIS weights applied to stale rows. */
  advUsed: Float64Array;
  /** Rows sampled by an older version than the learner's. */
  staleRows: number[];
  /** IS ratios π_old/μ (reported even with TIS off: they show how far the data drifted). */
  tis: TisResult;
}

/**
 * The weights/TIS phase. Row r sampled at version v_r < V (stale): π_old is recomputed at V (a
 * forward pass of the learner's current weights; decoupled PPO), and with TIS the advantage is
 * multiplied by min(π_old/μ, cap). The weight multiplies the advantage, not the row weight: it
 * corrects the policy-gradient estimate and leaves the entropy, KL and value terms unweighted.
 * Without TIS, stale rows keep μ as π_old. Fresh rows: π_old = μ, weight 1.
 */
export async function stepOffPolicy(
  algo: Pick<AlgoConfig, 'tis'>,
  version: number,
  rows: StepRows,
  adv: Float64Array,
  proximal: PolicyRunner,
  A: number,
): Promise<StepOffPolicy> {
  const oldLogp = rows.mu.slice();
  const staleRows: number[] = [];
  for (let r = 0; r < rows.S; r++) if (rows.versions[r] < version) staleRows.push(r);
  if (staleRows.length > 0) {
    const prox = await rowLogprobs(proximal, rows, staleRows, A);
    staleRows.forEach((r, j) => (oldLogp[r] = prox[j]));
  }
  const tis = truncatedIsWeights(oldLogp, rows.mu, new Float32Array(rows.S).fill(1), algo.tis.cap);
  const advUsed = adv.slice();
  if (algo.tis.enabled) {
    for (const r of staleRows) advUsed[r] *= tis.weights[r];
  } else {
    oldLogp.set(rows.mu);
  }
  return { oldLogp, advUsed, staleRows, tis };
}

/**
 * GiGPO's anchor state of each step: the observation the action was taken in (heading and
 * egocentric view, FNV-1a hashed). States that look alike share a key: in open rooms two cells
 * with the same view alias, which merges their step groups.
 */
export function stepStateKeys(ep: Pick<StepEpisode, 'images' | 'directions'>): string[] {
  const T = ep.directions.length;
  const K = T ? ep.images.length / T : 0;
  return Array.from({ length: T }, (_, t) => {
    let h = 0x811c9dc5;
    for (let i = t * K; i < (t + 1) * K; i++) h = Math.imul(h ^ ep.images[i], 0x01000193);
    return `${ep.directions[t]}:${(h >>> 0).toString(36)}:${K}`;
  });
}
