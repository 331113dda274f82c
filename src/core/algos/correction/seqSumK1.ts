import { perPosition, sequenceLogRatioSums, type RsDescriptor } from './types.ts';

/**
 * Sequence rejection by the sequence's likelihood ratio (veRL rollout_rs 'seq_sum_k1'): a whole
 * episode stays only if low ≤ Π_t ρ_t ≤ high (compared in log space: Σ log ρ_t against log low,
 * log high). Longer sequences drift further, so they are rejected more often.
 */
export const seqSumK1: RsDescriptor = {
  name: 'seq_sum_k1',
  kind: 'rs',
  help: 'sequence rejection: drop episodes whose Π π_old/μ is outside [low, high]',
  bounds: 'ratio',
  defaultHigh: 2,
  keep(b, low, high) {
    const lo = Math.log(low);
    const hi = Math.log(high);
    return perPosition(b, Array.from(sequenceLogRatioSums(b), (s) => (s >= lo && s <= hi ? 1 : 0)));
  },
};
