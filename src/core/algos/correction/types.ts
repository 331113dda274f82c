/**
 * Rollout correction: what one correction mode is. The rollout (behaviour) policy μ and the
 * learner's policy before the update π_old compute different numbers for the same token when
 * their weights are stale or their numerics differ; a correction mode turns the per-token log
 * ratio log ρ = log π_old − log μ into importance weights ('is') or a keep mask ('rs', 'mask').
 * One mode is one descriptor file in this folder plus one line in `index.ts`.
 *
 * Semantics follow veRL's `algorithm.rollout_correction` (rollout_is, rollout_rs) and AReaL's
 * M2PO; the names are veRL's where it has one.
 */

/** The batch as the correction modes see it. Every array is [size], position-major. */
export interface CorrectionBatch {
  /** log π_old − log μ per position (nats), 0 off the mask. */
  logRatio: Float64Array;
  /** 1 on trained positions. */
  mask: ArrayLike<number>;
  /** [n] first position of each sequence (episode). */
  starts: ArrayLike<number>;
  /** [n] positions each sequence spans. */
  lengths: ArrayLike<number>;
}

/** The thresholds a mode reads (the config's, with the mode's defaults filled in). */
export interface CorrectionBounds {
  /** IS: truncation cap on the weight (veRL rollout_is_threshold). */
  isCap: number;
  /** RS: lower bound (a ratio, k1 modes only; 0 = none). */
  rsLow: number;
  /** RS: upper bound (a ratio for k1 modes, a divergence in nats for k3 modes). */
  rsHigh: number;
  /** M2PO: the largest mean (log ρ)² kept, nats². */
  m2Threshold: number;
}

interface Common {
  /** The config value that selects the mode (veRL's name where it has one). */
  name: string;
  /** One line for the form and the docs: what it does. */
  help: string;
}

/** Importance weights multiplying the policy-gradient term (advantage), truncated at `isCap`. */
export interface IsDescriptor extends Common {
  kind: 'is';
  /**
   * The untruncated weight of every position (0 off the mask): ρ_t per token, or the
   * sequence's Πρ_t on each of its positions. The caller truncates and reports it.
   */
  ratios(b: CorrectionBatch): Float64Array;
  /** Whether the weight is one per sequence (the ratio fraction and ESS then count sequences' weights). */
  perSequence: boolean;
}

/** Rejection sampling: a keep mask from a divergence statistic and its bounds. */
export interface RsDescriptor extends Common {
  kind: 'rs';
  /** Whether the statistic is a ratio with a lower and an upper bound (k1), or a divergence with an upper bound only (k2, k3). */
  bounds: 'ratio' | 'upper';
  /** The upper bound when the config gives none. */
  defaultHigh: number;
  /** [size] 1 = kept, 0 = rejected (and 0 off the mask). */
  keep(b: CorrectionBatch, low: number, high: number): Float64Array;
}

/** A batch-level mask (M2PO): which positions stay in the loss. */
export interface MaskDescriptor extends Common {
  kind: 'mask';
  /** [size] 1 = kept, 0 = masked (and 0 off the mask). */
  keep(b: CorrectionBatch, bounds: CorrectionBounds): Float64Array;
}

export type CorrectionDescriptor = IsDescriptor | RsDescriptor | MaskDescriptor;

/** exp(±20) bounds every exponentiated log ratio (veRL's SAFETY_BOUND): a sum over a long sequence must not overflow. */
export const LOG_RATIO_BOUND = 20;

export function safeExp(x: number): number {
  return Math.exp(Math.max(-LOG_RATIO_BOUND, Math.min(LOG_RATIO_BOUND, x)));
}

/** Σ of log ρ over each sequence's trained positions. */
export function sequenceLogRatioSums(b: CorrectionBatch): Float64Array {
  const out = new Float64Array(b.starts.length);
  for (let s = 0; s < b.starts.length; s++) {
    for (let i = b.starts[s]; i < b.starts[s] + b.lengths[s]; i++) if (b.mask[i]) out[s] += b.logRatio[i];
  }
  return out;
}

/** One value per sequence written onto each of its trained positions ([size], 0 elsewhere). */
export function perPosition(b: CorrectionBatch, perSeq: ArrayLike<number>): Float64Array {
  const out = new Float64Array(b.logRatio.length);
  for (let s = 0; s < b.starts.length; s++) {
    for (let i = b.starts[s]; i < b.starts[s] + b.lengths[s]; i++) if (b.mask[i]) out[i] = perSeq[s];
  }
  return out;
}
