/**
 * The standard per-iteration metrics: one flat object per training iteration, written as a
 * `metrics.jsonl` line by the CLI and charted by the UI. Every key is declared, with its doc,
 * unit and families, in metrics/registry.ts, the one key table: keys are written here as
 * literals typed by it (`IterationKey`), so an undeclared key does not compile.
 *
 * Definitions that the table leaves open, fixed here:
 * - `reward/std` and each `reward/<term>/std` are sample stds (N−1), like every std in this
 *   project (stats.ts).
 * - `episode/length_mean` is policy tokens per episode (for grids, one token per step, so steps);
 *   `episode/turns_mean` is env steps (turns) per episode.
 * - `tools/call_frequency` is tool calls per episode; `tools/failure_frequency` is failed calls /
 *   all calls over the batch (0 when there were no calls).
 * - `tools/recovery_rate` is recoveries / failure runs over the batch: a failure
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

/** `reward/<term>/mean`: one shaping term's mean contribution over the batch's episodes. */
export function rewardTermKey(term: string): `reward/${string}/mean` {
  return `reward/${term}/mean`;
}

/** `reward/<term>/std`: the sample std (N−1) of that term over the batch's episodes (TRL's `rewards/<func>/std`). */
export function rewardTermStdKey(term: string): `reward/${string}/std` {
  return `reward/${term}/std`;
}

/** One iteration's metrics: registered per-iteration keys (metrics/registry.ts) to values. */
export type IterationMetrics = Partial<Record<IterationKey, number>>;

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
  /** Remote envs: real ms its steps took over the network, summed (`info.wireMs`); absent for envs played here. */
  wireMs?: number;
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
  let wireMs: number | undefined;
  let prevFailed = false;
  for (let t = 0; t < rec.infos.length; t++) {
    const info = rec.infos[t];
    if (info.toolCall) toolCalls++;
    if (info.toolFailed) {
      toolFailures++;
      if (!prevFailed) toolFailureRuns++;
    }
    if (info.recovered) toolRecoveries++;
    if (typeof info.wireMs === 'number') wireMs = (wireMs ?? 0) + info.wireMs;
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
    ...(wireMs !== undefined ? { wireMs } : {}),
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
  /** Dynamic sampling: zero-spread groups dropped (`groups/dropped`) and sampling rounds used (`groups/sampling_rounds`). */
  extra?: { groupsDropped?: number; samplingRounds?: number };
}

/** Sets `m[key]` when the value was measured (a key is absent, not NaN, when its input is). */
function put(m: IterationMetrics, key: IterationKey, v: number | undefined): void {
  if (v !== undefined) m[key] = v;
}

/** Build one iteration's metric object (key order: episodes, advantages, groups, actor, critic, async, perf, extras). */
export function buildIterationMetrics(inp: IterationMetricInputs): IterationMetrics {
  const m: IterationMetrics = {};
  if (inp.episodes && inp.episodes.length > 0) episodeMetrics(m, inp.episodes);
  if (inp.advantages) {
    const a = inp.advantages.mask ? masked(inp.advantages.values, inp.advantages.mask) : Float64Array.from(inp.advantages.values);
    m['adv/mean'] = mean(a);
    m['adv/std'] = std(a);
    m['adv/abs_mean'] = mean(a.map(Math.abs));
  }
  if (inp.groups) {
    m['groups/frac_zero_std'] = inp.groups.fracZeroStd;
    m['groups/reward_std_mean'] = inp.groups.rewardStdMean;
  }
  if (inp.actor) {
    const a = inp.actor;
    if (!Number.isNaN(a.entropy)) m['actor/entropy'] = a.entropy;
    m['actor/pg_loss'] = a.pgLoss;
    put(m, 'actor/grad_norm', a.gradNorm);
    put(m, 'actor/lr', a.lr);
    m['actor/clipfrac_low'] = a.clipfracLow;
    m['actor/clipfrac_high'] = a.clipfracHigh;
    m['actor/approx_kl'] = a.approxKl;
    if (!Number.isNaN(a.klRef)) m['actor/kl_ref'] = a.klRef;
  }
  if (inp.critic) {
    m['critic/value_loss'] = inp.critic.valueLoss;
    m['critic/explained_variance'] = explainedVariance(inp.critic.values, inp.critic.returns);
  }
  if (inp.staleness) {
    m['async/staleness_mean'] = inp.staleness.mean;
    m['async/staleness_max'] = inp.staleness.max;
  }
  if (inp.tis) {
    m['async/is_ratio_mean'] = inp.tis.ratioMean;
    m['async/is_ratio_max'] = inp.tis.ratioMax;
    m['async/is_clipfrac'] = inp.tis.clipfrac;
  }
  put(m, 'async/partial_ratio', inp.partialRatio);
  if (inp.mismatch) {
    m['mismatch/logprob_abs_diff_mean'] = inp.mismatch.absDiffMean;
    m['mismatch/logprob_abs_diff_max'] = inp.mismatch.absDiffMax;
  }
  const p = inp.perf ?? {};
  put(m, 'perf/env_steps_per_s', p.envStepsPerS);
  put(m, 'perf/tokens_per_s', p.tokensPerS);
  put(m, 'perf/rollout_s', p.rolloutS);
  put(m, 'perf/train_s', p.trainS);
  put(m, 'perf/learner_idle_ratio', p.learnerIdleRatio);
  put(m, 'perf/rollout_idle_ratio', p.rolloutIdleRatio);
  put(m, 'perf/kv_cache_hit_rate', p.kvCacheHitRate);
  put(m, 'groups/dropped', inp.extra?.groupsDropped);
  put(m, 'groups/sampling_rounds', inp.extra?.samplingRounds);
  return m;
}

/** The episode keys (`reward/*`, `episode/*`, `tools/*`) of a non-empty batch, into `m`. */
function episodeMetrics(m: IterationMetrics, eps: readonly EpisodeSummary[]): void {
  const r = describe(eps.map((e) => e.reward));
  m['reward/mean'] = r.mean;
  m['reward/std'] = r.std;
  m['reward/min'] = r.min;
  m['reward/max'] = r.max;
  const terms = new Set<string>();
  for (const e of eps) for (const k of Object.keys(e.terms ?? {})) terms.add(k);
  for (const k of terms) {
    const xs = eps.map((e) => e.terms?.[k] ?? 0);
    m[rewardTermKey(k)] = mean(xs);
    m[rewardTermStdKey(k)] = std(xs);
  }
  m['episode/success_rate'] = mean(eps.map((e) => (e.success ? 1 : 0)));
  m['episode/length_mean'] = mean(eps.map((e) => e.policyTokens));
  m['episode/turns_mean'] = mean(eps.map((e) => e.steps));
  m['episode/truncated_ratio'] = mean(eps.map((e) => (e.truncated ? 1 : 0)));
  const calls = eps.reduce((s, e) => s + e.toolCalls, 0);
  m['tools/call_frequency'] = calls / eps.length;
  m['tools/failure_frequency'] = calls ? eps.reduce((s, e) => s + e.toolFailures, 0) / calls : 0;
  const runs = eps.reduce((s, e) => s + (e.toolFailureRuns ?? 0), 0);
  if (runs > 0) m['tools/recovery_rate'] = eps.reduce((s, e) => s + (e.toolRecoveries ?? 0), 0) / runs;
  const wired = eps.filter((e) => e.wireMs !== undefined);
  const wiredSteps = wired.reduce((s, e) => s + e.steps, 0);
  if (wiredSteps > 0) m['perf/env_wire_ms'] = wired.reduce((s, e) => s + e.wireMs!, 0) / wiredSteps;
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
