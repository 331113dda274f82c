/**
 * The metrics phase over a rollout batch, once for every env family: the standard keys
 * (metrics/iterationMetrics.ts) plus the ones below. The trainer measures its own timing and passes the perf
 * figures and any keys of its own (async, budget, schedule, multi-agent credit).
 *
 * Keys here: `actor/lr`, `actor/rollout_entropy` (behaviour entropy over the trained positions of
 * every sampled episode), `episode/distinct_ratio` (distinct action sequences among the sampled
 * episodes), `episode/forced_end_ratio` and `episode/context_limited_ratio` (token episodes),
 * `train/batch_success_rate` and `train/batch_episodes` (the trained, filtered batch),
 * `train/updates`, `train/policy_version`, `train/stale_rows`, GiGPO's step-group keys. Keys that
 * do not apply to a run are dropped by `keepApplicable` (metrics/lookup.ts).
 */
import { buildIterationMetrics, type IterationMetricInputs, type IterationMetrics, type SampledEpisode } from './iterationMetrics.ts';
import type { TisResult } from '../update/importanceWeights.ts';
import { mean } from '../algos/stats.ts';
import type { BatchAdvantages } from '../update/batchAdvantages.ts';
import { partialShare, type RolloutBatch } from '../update/batch.ts';
import type { OffPolicy } from '../update/offPolicy.ts';
import type { UpdateResult } from '../update/update.ts';

export interface BatchMetricInputs extends Pick<IterationMetricInputs, 'groups' | 'perf' | 'extra'> {
  /** Every episode sampled this iteration (dropped groups included: episode/* and reward/* describe the policy, not the filtered batch). */
  sampled: readonly SampledEpisode[];
  /** The trained batch and what the phases made of it. */
  batch: RolloutBatch;
  /** Success of each trained episode. */
  trainedSuccess: readonly boolean[];
  adv: BatchAdvantages;
  off: OffPolicy;
  tis: TisResult;
  upd: UpdateResult;
  lr: number;
  version: number;
}

/** What every sampled episode of an iteration says of the policy: its behaviour entropy, distinct action sequences, forced ends and context limits. */
export function sampledMetrics(sampled: readonly SampledEpisode[]): Record<'actor/rollout_entropy' | 'episode/distinct_ratio' | 'episode/forced_end_ratio' | 'episode/context_limited_ratio', number> {
  const entropies: number[] = [];
  for (const ep of sampled) for (let i = 0; i < ep.entropies.length; i++) entropies.push(ep.entropies[i]);
  return {
    'actor/rollout_entropy': entropies.length ? mean(entropies) : 0,
    'episode/distinct_ratio': sampled.length ? new Set(sampled.map((e) => e.actionKey)).size / sampled.length : 0,
    'episode/forced_end_ratio': sampled.filter((e) => e.forcedEnd).length / Math.max(1, sampled.length),
    'episode/context_limited_ratio': sampled.filter((e) => e.contextLimited).length / Math.max(1, sampled.length),
  };
}

/** One iteration's metric object (key order: the standard keys, the learner's, then the extras above). */
export function batchMetrics(inp: BatchMetricInputs): IterationMetrics & Record<string, number> {
  const { batch: b, adv, sampled } = inp;
  const advValues: number[] = [];
  const values: number[] = [];
  const returns: number[] = [];
  for (let i = 0; i < b.size; i++) {
    if (!b.mask[i]) continue;
    advValues.push(adv.adv[i]);
    if (adv.returns) {
      values.push(b.values[i]);
      returns.push(adv.returns[i]);
    }
  }
  const n = b.n;
  const m: IterationMetrics & Record<string, number> = {
    ...buildIterationMetrics({
      episodes: sampled.map((e) => e.summary),
      advantages: { values: advValues },
      critic: adv.returns ? { valueLoss: inp.upd.metrics['critic/value_loss'] ?? NaN, values, returns } : undefined,
      groups: inp.groups,
      mismatch: inp.upd.mismatch,
      staleness: inp.off.stale,
      tis: inp.tis,
      partialRatio: partialShare(b),
      perf: inp.perf,
      extra: inp.extra,
    }),
    ...inp.upd.metrics,
    'actor/lr': inp.lr,
    ...sampledMetrics(sampled),
    'train/batch_success_rate': n ? inp.trainedSuccess.filter(Boolean).length / n : 0,
    'train/updates': inp.upd.steps,
    'train/policy_version': inp.version,
    'train/batch_episodes': n,
    'train/stale_rows': inp.off.staleCount,
  };
  const low = inp.upd.metrics['actor/clipfrac_low'];
  const high = inp.upd.metrics['actor/clipfrac_high'];
  // The two cuts are disjoint (ratio below 1 − ε_low vs above 1 + ε_high, same mask): their sum is the share cut either way.
  if (low !== undefined && high !== undefined) m['actor/clipfrac'] = low + high;
  if (adv.stepGroups) {
    m['groups/step_groups_mean'] = adv.stepGroups.perGroup;
    m['groups/grouped_step_share'] = adv.stepGroups.groupedShare;
  }
  return m;
}
