/**
 * The metrics phase of a token iteration, shared by the lockstep and the continuous token
 * trainers: the standard keys (algos/metrics.ts) plus the token-specific ones below. The
 * trainer measures its own timing and passes the perf figures and any extra keys of its own.
 *
 * Extra keys: `actor/rollout_entropy` (behaviour entropy on sampled tokens),
 * `episode/forced_end_ratio` (episodes with an action cut at maxActionTokens),
 * `episode/context_limited_ratio`, `episode/distinct_ratio` (distinct action texts among the sampled
 * episodes), `train/batch_success_rate` (the trained, filtered batch),
 * `train/updates`, `train/policy_version`, `train/batch_episodes`.
 */
import { buildIterationMetrics, summarizeEpisode, type IterationMetricInputs, type IterationMetrics } from '../algos/metrics.ts';
import type { ShapedReward } from '../reward/shaping.ts';
import type { TokenEpisode } from '../rollout/tokenEpisode.ts';
import { tokenEpisodeRecord } from './tokenBatch.ts';
import type { TokenAdvantages } from './tokenAdvantages.ts';

export interface TokenMetricInputs extends Pick<IterationMetricInputs, 'groups' | 'mismatch' | 'staleness' | 'tis' | 'partialRatio' | 'perf' | 'extra'> {
  /** Every episode sampled this iteration (dropped groups included: episode/* and reward/* describe the policy, not the filtered batch). */
  sampled: readonly TokenEpisode[];
  sampledShaped: readonly ShapedReward[];
  /** The trained batch. */
  episodes: readonly TokenEpisode[];
  /** [n·T] training-position mask of the trained batch. */
  mask: ArrayLike<number>;
  adv: Pick<TokenAdvantages, 'tokAdv' | 'tokRet' | 'tokVal'>;
  /** The learner's metrics, averaged over its steps. */
  learner: Record<string, number>;
  lr: number;
  updates: number;
  version: number;
}

/** Mean behaviour entropy over the policy tokens of `episodes` (0 without any). */
export function rolloutEntropy(episodes: readonly Pick<TokenEpisode, 'lossMask' | 'entropies'>[]): number {
  const xs: number[] = [];
  for (const ep of episodes) for (let i = 0; i < ep.lossMask.length; i++) if (ep.lossMask[i]) xs.push(ep.entropies[i]);
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0;
}

/** One token iteration's metric object (key order: the standard keys, the learner's, then the extras above). */
export function tokenIterationMetrics(inp: TokenMetricInputs): IterationMetrics {
  const { tokAdv, tokRet, tokVal } = inp.adv;
  const policyAdv: number[] = [];
  const policyVal: number[] = [];
  const policyRet: number[] = [];
  for (let i = 0; i < tokAdv.length; i++) {
    if (!inp.mask[i]) continue;
    policyAdv.push(tokAdv[i]);
    if (tokVal && tokRet) {
      policyVal.push(tokVal[i]);
      policyRet.push(tokRet[i]);
    }
  }
  const sampled = inp.sampled;
  const n = inp.episodes.length;
  return {
    ...buildIterationMetrics({
      episodes: sampled.map((ep, i) => summarizeEpisode(tokenEpisodeRecord(ep), inp.sampledShaped[i])),
      advantages: { values: policyAdv },
      critic: tokRet ? { valueLoss: inp.learner['critic/value_loss'] ?? NaN, values: policyVal, returns: policyRet } : undefined,
      groups: inp.groups,
      mismatch: inp.mismatch,
      staleness: inp.staleness,
      tis: inp.tis,
      partialRatio: inp.partialRatio,
      perf: inp.perf,
      extra: inp.extra,
    }),
    ...inp.learner,
    'actor/lr': inp.lr,
    'actor/rollout_entropy': rolloutEntropy(sampled),
    'episode/forced_end_ratio': sampled.filter((e) => e.forcedEnds > 0).length / Math.max(1, sampled.length),
    'episode/context_limited_ratio': sampled.filter((e) => e.contextLimited).length / Math.max(1, sampled.length),
    // Share of distinct action-text sequences among the sampled episodes (the grid trainer's
    // `episode/distinct_ratio` over action ids): computed here so the CLI logs what the tab shows.
    'episode/distinct_ratio': sampled.length ? new Set(sampled.map((e) => e.actions.join('\u0000'))).size / sampled.length : 0,
    'train/batch_success_rate': n ? inp.episodes.filter((e) => e.success).length / n : 0,
    'train/updates': inp.updates,
    'train/policy_version': inp.version,
    'train/batch_episodes': n,
  } as IterationMetrics;
}
