/**
 * The score → advantages → weights phases of a token iteration, shared by the lockstep and the
 * continuous token trainers. Per-token arrays are in training positions [n·T] (`shiftedBatch`):
 * the token at context index i is scored at position i − 1.
 */
import { aggregationWeights, broadcastToTokens, normalizeAdvantages, policyTokenCounts, type EmaBaselineState } from '../algos/advantages.ts';
import { algoDescriptor, sequenceAdvantages, unequalGroupAdvantages } from '../algos/registry/index.ts';
import type { AlgoConfig } from '../algos/config.ts';
import { klPenalizedRewards } from '../algos/losses.ts';
import type { ShapedReward } from '../reward/shaping.ts';
import type { TokenEpisode } from '../rollout/tokenEpisode.ts';
import type { shiftedBatch } from './tokenBatch.ts';
import { tokenGae } from './tokenGae.ts';
import type { SequenceScorer } from './tokenUpdate.ts';

export type ShiftedRows = ReturnType<typeof shiftedBatch>;

/**
 * The reference policy's log-probs of the sampled tokens (null without a reference or without
 * episodes) and, with klMode 'reward', the KL penalty subtracted from `totals` in place: the
 * configured estimator summed over each episode's policy tokens, before advantages.
 * @param totals [n] episode rewards (shaped).
 * @param groupSize sequences per group sharing a prompt (the scorer runs it once), or undefined.
 */
export async function referenceAndKlReward(
  reference: SequenceScorer | null,
  algo: Pick<AlgoConfig, 'klMode' | 'klCoef' | 'klEstimator'>,
  rows: ShiftedRows,
  totals: Float64Array,
  shape: { n: number; T: number; V: number; groupSize: number | undefined },
): Promise<Float32Array | null> {
  const { n, T } = shape;
  if (!reference || n === 0) return null;
  const refLogp = await reference.logprobs({ tokens: rows.tokens, actions: rows.actions, mask: rows.mask, ...shape });
  if (algo.klMode === 'reward') {
    const pen = klPenalizedRewards(totals, T, rows.oldLogprobs, refLogp, rows.mask, algo.klCoef, algo.klEstimator);
    totals.set(pen.rewards);
  }
  return refLogp;
}

export interface TokenAdvantages {
  /** [n] each episode's advantage (PPO: its first policy token's), for trajectories and charts. */
  episodeAdv: Float64Array;
  /** [n·T] advantage per training position, 0 off the mask. */
  tokAdv: Float64Array;
  /** PPO: [n·T] value targets (GAE returns) and the rollout's V at each position; else null. */
  tokRet: Float64Array | null;
  tokVal: Float64Array | null;
  /** The REINFORCE EMA baseline after this batch. */
  ema: EmaBaselineState;
}

/**
 * Advantages for a token batch. Sequence-level algorithms: one advantage per episode from
 * `totals` (groups of `groupSize`, or of the listed sizes when groups differ), broadcast onto its policy tokens. PPO: token GAE over each
 * episode's policy tokens from its per-turn shaped rewards, optionally normalized over the batch.
 */
export function tokenAdvantages(
  algo: AlgoConfig,
  episodes: readonly TokenEpisode[],
  shaped: readonly ShapedReward[],
  totals: Float64Array,
  rows: ShiftedRows,
  T: number,
  groupSize: number | readonly number[],
  ema: EmaBaselineState,
): TokenAdvantages {
  const n = episodes.length;
  if (algoDescriptor(algo.algo).advantage.kind !== 'gae') {
    if (n === 0) return { episodeAdv: new Float64Array(0), tokAdv: new Float64Array(0), tokRet: null, tokVal: null, ema };
    const batch = { nSeqs: n, seqLen: T, lossMask: rows.mask };
    const positions = policyTokenCounts(batch);
    const r = typeof groupSize === 'number' ? sequenceAdvantages({ ...algo, groupSize }, totals, ema, positions) : { advantages: unequalGroupAdvantages(algo, totals, groupSize, positions), ema };
    const tokAdv = broadcastToTokens(r.advantages, batch);
    return { episodeAdv: r.advantages, tokAdv, tokRet: null, tokVal: null, ema: r.ema };
  }
  const episodeAdv = new Float64Array(n);
  let tokAdv: Float64Array = new Float64Array(n * T);
  const tokRet = new Float64Array(n * T);
  const tokVal = new Float64Array(n * T);
  episodes.forEach((ep, b) => {
    if (!ep.values) throw new Error('tokenAdvantages: PPO needs per-token values from the rollout (the decoder returned none)');
    const r = tokenGae({ lossMask: ep.lossMask, terminated: ep.terminated, values: ep.values }, shaped[b].perStep, algo.gamma, algo.lambda);
    let first = true;
    for (let i = 1; i < ep.tokens.length; i++) {
      if (!ep.lossMask[i]) continue;
      tokAdv[b * T + i - 1] = r.advantages[i];
      tokRet[b * T + i - 1] = r.returns[i];
      tokVal[b * T + i - 1] = ep.values[i];
      if (first) episodeAdv[b] = r.advantages[i];
      first = false;
    }
  });
  if (algo.normalizeAdvantages && n > 0) tokAdv = normalizeAdvantages(tokAdv, rows.mask);
  return { episodeAdv, tokAdv, tokRet, tokVal, ema };
}

/** Aggregation weights [n·T] of a token batch (`algo.aggregation`; 'constant' over aggregationLen, default T). */
export function tokenWeights(algo: Pick<AlgoConfig, 'aggregation' | 'aggregationLen'>, rows: ShiftedRows, n: number, T: number): Float64Array {
  return n > 0 ? aggregationWeights({ nSeqs: n, seqLen: T, lossMask: rows.mask }, algo.aggregation, algo.aggregationLen ?? T) : new Float64Array(0);
}

/** PPO's extra train-graph inputs: the value targets, and the rollout's V when the value loss is clipped; undefined without a critic. */
export function valueTargets(adv: Pick<TokenAdvantages, 'tokRet' | 'tokVal'>, valueClip: number | null): Record<string, Float32Array> | undefined {
  if (!adv.tokRet) return undefined;
  return { returns: Float32Array.from(adv.tokRet), ...(valueClip !== null ? { old_values: Float32Array.from(adv.tokVal!) } : {}) };
}
