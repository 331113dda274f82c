/**
 * The standard per-iteration metrics: one flat object per training iteration, written as a
 * `metrics.jsonl` line by the CLI and charted by the UI. Every key is declared, with its doc,
 * unit and families, in metrics/registry.ts; `METRIC_KEYS` names the ones built here.
 *
 * Definitions that the table leaves open, fixed here:
 * - `reward/std` and each `reward/<term>/std` are sample stds (N−1), like every std in this
 *   project (stats.ts).
 * - `episode/length_mean` is policy tokens per episode (for grids, one token per step, so steps);
 *   `episode/turns_mean` is env steps (turns) per episode.
 * - `tools/call_frequency` is tool calls per episode; `tools/failure_frequency` is failed calls /
 *   all calls over the batch (0 when there were no calls).
 * - `tools/recovery_rate` (an extra key) is recoveries / failure runs over the batch: a failure
 *   run is one or more failed tool calls in a row, a recovery a successful call right after one
 *   (`info.recovered`). Present only when the batch had a failure: with none it is undefined.
 * - `adv/*` are over policy tokens (or steps) only: positions where the mask is 1.
 * A key is present only when its inputs were given (no NaN placeholders for PPO-only keys in a
 * GRPO run); values that are undefined by nature (explained variance of a constant target)
 * are NaN, which JSON writes as null.
 */
import type { EpisodeRecord, ShapedReward } from '../reward/shaping.ts';
import { klK3, type PolicyLossResult } from '../algos/losses.ts';
import type { StalenessResult, TisResult } from '../update/importanceWeights.ts';
import type { GroupStats } from '../algos/sampling.ts';
import type { IterationKey } from './registry.ts';
import { describe, explainedVariance, masked, mean, std, type Numbers } from '../algos/stats.ts';

export const METRIC_KEYS = {
  rewardMean: 'reward/mean',
  rewardStd: 'reward/std',
  rewardMin: 'reward/min',
  rewardMax: 'reward/max',
  successRate: 'episode/success_rate',
  lengthMean: 'episode/length_mean',
  turnsMean: 'episode/turns_mean',
  truncatedRatio: 'episode/truncated_ratio',
  toolCallFrequency: 'tools/call_frequency',
  toolFailureFrequency: 'tools/failure_frequency',
  advMean: 'adv/mean',
  advStd: 'adv/std',
  advAbsMean: 'adv/abs_mean',
  groupsFracZeroStd: 'groups/frac_zero_std',
  groupsRewardStdMean: 'groups/reward_std_mean',
  entropy: 'actor/entropy',
  pgLoss: 'actor/pg_loss',
  gradNorm: 'actor/grad_norm',
  lr: 'actor/lr',
  clipfracLow: 'actor/clipfrac_low',
  clipfracHigh: 'actor/clipfrac_high',
  approxKl: 'actor/approx_kl',
  klRef: 'actor/kl_ref',
  valueLoss: 'critic/value_loss',
  explainedVariance: 'critic/explained_variance',
  stalenessMean: 'async/staleness_mean',
  stalenessMax: 'async/staleness_max',
  isRatioMean: 'async/is_ratio_mean',
  isRatioMax: 'async/is_ratio_max',
  isClipfrac: 'async/is_clipfrac',
  partialRatio: 'async/partial_ratio',
  logprobAbsDiffMean: 'mismatch/logprob_abs_diff_mean',
  logprobAbsDiffMax: 'mismatch/logprob_abs_diff_max',
  envStepsPerS: 'perf/env_steps_per_s',
  tokensPerS: 'perf/tokens_per_s',
  rolloutS: 'perf/rollout_s',
  trainS: 'perf/train_s',
  learnerIdleRatio: 'perf/learner_idle_ratio',
  rolloutIdleRatio: 'perf/rollout_idle_ratio',
  kvCacheHitRate: 'perf/kv_cache_hit_rate',
} as const satisfies Record<string, IterationKey>;

/** Keys beyond the core table above, produced by dynamic sampling and the shaping schedule. */
export const EXTRA_METRIC_KEYS = {
  /** Zero-spread groups dropped by dynamic sampling this iteration. */
  groupsDropped: 'groups/dropped',
  /** Sampling rounds used this iteration (1 without dynamic sampling). */
  samplingRounds: 'groups/sampling_rounds',
  /** Index of the progressive-shaping stage in force this iteration. */
  shapingStage: 'schedule/stage',
  /** Failure runs (failed tool calls in a row) that a successful call ended, over all failure runs. */
  toolRecoveryRate: 'tools/recovery_rate',
} as const satisfies Record<string, IterationKey>;

/** `reward/<term>/mean`: one shaping term's mean contribution over the batch's episodes. */
export function rewardTermKey(term: string): `reward/${string}/mean` {
  return `reward/${term}/mean`;
}

/** `reward/<term>/std`: the sample std (N−1) of that term over the batch's episodes (TRL's `rewards/<func>/std`). */
export function rewardTermStdKey(term: string): `reward/${string}/std` {
  return `reward/${term}/std`;
}

export type MetricKey =
  | (typeof METRIC_KEYS)[keyof typeof METRIC_KEYS]
  | (typeof EXTRA_METRIC_KEYS)[keyof typeof EXTRA_METRIC_KEYS]
  | `reward/${string}/mean`
  | `reward/${string}/std`;

export type IterationMetrics = Partial<Record<MetricKey, number>>;

/** The per-episode facts the episode metrics need. */
export interface EpisodeSummary {
  /** Total (shaped) episode reward. */
  reward: number;
  /** Shaping contributions by term (`ShapedReward.terms`). */
  terms?: Readonly<Record<string, number>>;
  success: boolean;
  /** Env steps (turns). */
  steps: number;
  policyTokens: number;
  truncated: boolean;
  toolCalls: number;
  toolFailures: number;
  /** Runs of failed tool calls in a row (a failed call whose previous tool call did not fail). */
  toolFailureRuns?: number;
  /** Successful calls right after a failed one (`info.recovered`). */
  toolRecoveries?: number;
}

/** What the metrics read of one sampled episode, whichever family it is from. */
export interface SampledEpisode {
  summary: EpisodeSummary;
  /** Behaviour entropies at its trained positions (steps, policy tokens). */
  entropies: ArrayLike<number>;
  /** Its action sequence as one string (equal strings = the same behaviour). */
  actionKey: string;
  /** Token episodes: an action cut at maxActionTokens, and the context running out. */
  forcedEnd?: boolean;
  contextLimited?: boolean;
}

/** Summarise an episode record (and its shaped reward, if shaping ran). Success = last step's info.success. */
export function summarizeEpisode(rec: EpisodeRecord, shaped?: ShapedReward): EpisodeSummary {
  let toolCalls = 0, toolFailures = 0, toolFailureRuns = 0, toolRecoveries = 0, envReward = 0;
  let prevFailed = false;
  for (let t = 0; t < rec.infos.length; t++) {
    const info = rec.infos[t];
    if (info.toolCall) toolCalls++;
    if (info.toolFailed) {
      toolFailures++;
      if (!prevFailed) toolFailureRuns++;
    }
    if (info.recovered) toolRecoveries++;
    // Only tool calls move the "previous call" (malformed turns and the answer do not).
    if (info.toolFailed !== undefined) prevFailed = info.toolFailed;
    envReward += rec.rewards[t];
  }
  const last = rec.infos[rec.infos.length - 1];
  return {
    reward: shaped ? shaped.total : envReward,
    terms: shaped?.terms,
    success: last?.success === true,
    steps: rec.rewards.length,
    policyTokens: rec.policyTokens,
    truncated: rec.truncated && !rec.terminated,
    toolCalls,
    toolFailures,
    toolFailureRuns,
    toolRecoveries,
  };
}

/** Everything an iteration may report; each part is optional and adds its keys. */
export interface IterationMetricInputs {
  episodes?: readonly EpisodeSummary[];
  /** Per-token (or per-step) advantages and the loss mask selecting policy positions. */
  advantages?: { values: Numbers; mask?: Numbers };
  groups?: GroupStats;
  actor?: Pick<PolicyLossResult, 'pgLoss' | 'clipfracLow' | 'clipfracHigh' | 'approxKl' | 'klRef' | 'entropy'> & { gradNorm?: number; lr?: number };
  critic?: { valueLoss: number; values: Numbers; returns: Numbers };
  tis?: Pick<TisResult, 'ratioMean' | 'ratioMax' | 'clipfrac'>;
  staleness?: Pick<StalenessResult, 'mean' | 'max'>;
  partialRatio?: number;
  mismatch?: { absDiffMean: number; absDiffMax: number };
  perf?: Partial<Record<'envStepsPerS' | 'tokensPerS' | 'rolloutS' | 'trainS' | 'learnerIdleRatio' | 'rolloutIdleRatio' | 'kvCacheHitRate', number>>;
  extra?: Partial<Record<keyof typeof EXTRA_METRIC_KEYS, number>>;
}

/** Build one iteration's metric object; key order follows the table above. */
export function buildIterationMetrics(inp: IterationMetricInputs): IterationMetrics {
  const K = METRIC_KEYS;
  const m: IterationMetrics = {};
  const eps = inp.episodes;
  if (eps && eps.length > 0) {
    const r = describe(eps.map((e) => e.reward));
    m[K.rewardMean] = r.mean;
    m[K.rewardStd] = r.std;
    m[K.rewardMin] = r.min;
    m[K.rewardMax] = r.max;
    const terms = new Set<string>();
    for (const e of eps) for (const k of Object.keys(e.terms ?? {})) terms.add(k);
    for (const k of terms) {
      const xs = eps.map((e) => e.terms?.[k] ?? 0);
      m[rewardTermKey(k)] = mean(xs);
      m[rewardTermStdKey(k)] = std(xs);
    }
    m[K.successRate] = mean(eps.map((e) => (e.success ? 1 : 0)));
    m[K.lengthMean] = mean(eps.map((e) => e.policyTokens));
    m[K.turnsMean] = mean(eps.map((e) => e.steps));
    m[K.truncatedRatio] = mean(eps.map((e) => (e.truncated ? 1 : 0)));
    const calls = eps.reduce((s, e) => s + e.toolCalls, 0);
    m[K.toolCallFrequency] = calls / eps.length;
    m[K.toolFailureFrequency] = calls ? eps.reduce((s, e) => s + e.toolFailures, 0) / calls : 0;
    const runs = eps.reduce((s, e) => s + (e.toolFailureRuns ?? 0), 0);
    if (runs > 0) m[EXTRA_METRIC_KEYS.toolRecoveryRate] = eps.reduce((s, e) => s + (e.toolRecoveries ?? 0), 0) / runs;
  }
  if (inp.advantages) {
    const a = inp.advantages.mask ? masked(inp.advantages.values, inp.advantages.mask) : Float64Array.from(inp.advantages.values);
    m[K.advMean] = mean(a);
    m[K.advStd] = std(a);
    m[K.advAbsMean] = mean(a.map(Math.abs));
  }
  if (inp.groups) {
    m[K.groupsFracZeroStd] = inp.groups.fracZeroStd;
    m[K.groupsRewardStdMean] = inp.groups.rewardStdMean;
  }
  if (inp.actor) {
    const a = inp.actor;
    if (!Number.isNaN(a.entropy)) m[K.entropy] = a.entropy;
    m[K.pgLoss] = a.pgLoss;
    if (a.gradNorm !== undefined) m[K.gradNorm] = a.gradNorm;
    if (a.lr !== undefined) m[K.lr] = a.lr;
    m[K.clipfracLow] = a.clipfracLow;
    m[K.clipfracHigh] = a.clipfracHigh;
    m[K.approxKl] = a.approxKl;
    if (!Number.isNaN(a.klRef)) m[K.klRef] = a.klRef;
  }
  if (inp.critic) {
    m[K.valueLoss] = inp.critic.valueLoss;
    m[K.explainedVariance] = explainedVariance(inp.critic.values, inp.critic.returns);
  }
  if (inp.staleness) {
    m[K.stalenessMean] = inp.staleness.mean;
    m[K.stalenessMax] = inp.staleness.max;
  }
  if (inp.tis) {
    m[K.isRatioMean] = inp.tis.ratioMean;
    m[K.isRatioMax] = inp.tis.ratioMax;
    m[K.isClipfrac] = inp.tis.clipfrac;
  }
  if (inp.partialRatio !== undefined) m[K.partialRatio] = inp.partialRatio;
  if (inp.mismatch) {
    m[K.logprobAbsDiffMean] = inp.mismatch.absDiffMean;
    m[K.logprobAbsDiffMax] = inp.mismatch.absDiffMax;
  }
  for (const [k, v] of Object.entries(inp.perf ?? {})) if (v !== undefined) m[K[k as keyof typeof K]] = v;
  for (const [k, v] of Object.entries(inp.extra ?? {})) if (v !== undefined) m[EXTRA_METRIC_KEYS[k as keyof typeof EXTRA_METRIC_KEYS]] = v;
  return m;
}

/** Share of distinct action sequences among the batch's episodes (exploration, invariant 1). */
export function distinctRatio(episodes: readonly { actions: Int32Array }[]): number {
  if (episodes.length === 0) return 0;
  const seen = new Set<string>();
  for (const ep of episodes) seen.add(ep.actions.join(','));
  return seen.size / episodes.length;
}

/**
 * The sampled actions against a reference policy (the KL reference, or a distill stage's
 * teacher), over every policy step: `klRef` is the mean k3 estimate of KL(π‖π_ref) in nats per
 * step (as `actor/kl_ref`), `refProb` the mean π_ref(a|s) the reference gives the action taken
 * (1 = it would always have chosen the same). `logp` is the behaviour log-prob of each step.
 */
export function referenceStats(logp: ArrayLike<number>, refLogp: ArrayLike<number>): { klRef: number; refProb: number } {
  if (logp.length !== refLogp.length) throw new RangeError(`referenceStats: ${logp.length} log-probs but ${refLogp.length} reference log-probs`);
  if (logp.length === 0) return { klRef: NaN, refProb: NaN };
  let kl = 0, p = 0;
  for (let i = 0; i < logp.length; i++) {
    kl += klK3(logp[i], refLogp[i]);
    p += Math.exp(refLogp[i]);
  }
  return { klRef: kl / logp.length, refProb: p / logp.length };
}
