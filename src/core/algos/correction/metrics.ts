/**
 * The rollout-correction diagnostics, as veRL's `rollout_corr/*` define them (our keys are
 * `correction/*`; the metric registry maps them to veRL's names). Every mean is over the trained
 * positions (tokens, or grid steps) unless it says sequences.
 */
import { LOG_RATIO_BOUND, type CorrectionBatch } from './types.ts';

export interface CorrectionMetrics {
  /** veRL rollout_is_eff_sample_size: 1 / mean((w/mean w)²), w the IS weight clamped to [1/cap, cap]; 1 when every weight is equal, → 0 as few dominate. */
  'correction/is_ess': number;
  /** veRL rollout_is_ratio_fraction_high: share of weights (tokens, or sequences for a per-sequence weight) above the cap, before truncation. */
  'correction/is_ratio_fraction_high': number;
  /** veRL rollout_rs_masked_fraction: share of trained positions rejected by rejection sampling. */
  'correction/rs_masked_fraction': number;
  /** Share of trained positions masked by M2PO (no veRL counterpart). */
  'correction/second_moment_masked_fraction': number;
  /** veRL log_ppl_abs_diff: mean over sequences of |mean log μ − mean log π_old| over the sequence's positions (nats). */
  'correction/log_ppl_abs_diff': number;
  /** veRL chi2_token: mean of ρ² − 1 over positions, the token-level χ² divergence of π_old from μ. */
  'correction/chi_squared_token': number;
}

export interface CorrectionMetricInputs {
  b: CorrectionBatch;
  /** [size] untruncated IS weights (per position; a per-sequence weight repeated on its positions). */
  ratios: Float64Array;
  /** Whether `ratios` is one weight per sequence. */
  perSequence: boolean;
  isCap: number;
  /** [size] 1 = kept by rejection sampling (null: RS off). */
  rsKeep: Float64Array | null;
  /** [size] 1 = kept by M2PO (null: off). */
  m2Keep: Float64Array | null;
}

function fractionHigh(inp: CorrectionMetricInputs): number {
  const { b, ratios, isCap } = inp;
  let n = 0;
  let high = 0;
  if (inp.perSequence) {
    for (let s = 0; s < b.starts.length; s++) {
      let first = -1;
      for (let i = b.starts[s]; i < b.starts[s] + b.lengths[s] && first < 0; i++) if (b.mask[i]) first = i;
      if (first < 0) continue;
      n++;
      if (ratios[first] > isCap) high++;
    }
  } else {
    for (let i = 0; i < ratios.length; i++) {
      if (!b.mask[i]) continue;
      n++;
      if (ratios[i] > isCap) high++;
    }
  }
  return n ? high / n : 0;
}

function ess(inp: CorrectionMetricInputs): number {
  const { b, ratios, isCap } = inp;
  const w: number[] = [];
  for (let i = 0; i < ratios.length; i++) if (b.mask[i]) w.push(Math.min(isCap, Math.max(1 / isCap, ratios[i])));
  if (w.length === 0) return 1;
  const m = w.reduce((a, x) => a + x, 0) / w.length;
  const sq = w.reduce((a, x) => a + (x / m) ** 2, 0) / w.length;
  return 1 / sq;
}

function maskedShare(mask: ArrayLike<number>, keep: Float64Array | null): number {
  if (!keep) return 0;
  let n = 0;
  let off = 0;
  for (let i = 0; i < keep.length; i++) {
    if (!mask[i]) continue;
    n++;
    if (!keep[i]) off++;
  }
  return n ? off / n : 0;
}

/** The correction/* keys for one batch. */
export function correctionMetrics(inp: CorrectionMetricInputs): CorrectionMetrics {
  const { b } = inp;
  let seqs = 0;
  let pplDiff = 0;
  for (let s = 0; s < b.starts.length; s++) {
    let sum = 0;
    let count = 0;
    for (let i = b.starts[s]; i < b.starts[s] + b.lengths[s]; i++) {
      if (!b.mask[i]) continue;
      sum += b.logRatio[i];
      count++;
    }
    if (!count) continue;
    seqs++;
    pplDiff += Math.abs(sum / count);
  }
  let tok = 0;
  let rho2 = 0;
  for (let i = 0; i < b.logRatio.length; i++) {
    if (!b.mask[i]) continue;
    tok++;
    rho2 += Math.exp(2 * Math.max(-LOG_RATIO_BOUND, Math.min(LOG_RATIO_BOUND, b.logRatio[i])));
  }
  return {
    'correction/is_ess': ess(inp),
    'correction/is_ratio_fraction_high': fractionHigh(inp),
    'correction/rs_masked_fraction': maskedShare(b.mask, inp.rsKeep),
    'correction/second_moment_masked_fraction': maskedShare(b.mask, inp.m2Keep),
    'correction/log_ppl_abs_diff': seqs ? pplDiff / seqs : 0,
    'correction/chi_squared_token': tok ? rho2 / tok - 1 : 0,
  };
}
