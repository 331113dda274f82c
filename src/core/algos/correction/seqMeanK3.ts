import { LOG_RATIO_BOUND, perPosition, type RsDescriptor } from './types.ts';

/**
 * Sequence rejection by the mean k3 divergence (veRL rollout_rs 'seq_mean_k3'): per token
 * k3 = ρ − 1 − log ρ (≥ 0, an estimate of KL(μ‖π_old) on tokens drawn from μ); an episode stays
 * only if the mean of k3 over its trained tokens is ≤ high (nats). Length-normalised, one-sided.
 */
export const seqMeanK3: RsDescriptor = {
  name: 'seq_mean_k3',
  kind: 'rs',
  help: 'sequence rejection: drop episodes whose mean k3 = ρ − 1 − log ρ exceeds the bound (nats)',
  bounds: 'upper',
  defaultHigh: 0.01,
  keep(b, _low, high) {
    const n = b.starts.length;
    const stat = new Float64Array(n);
    for (let s = 0; s < n; s++) {
      let sum = 0;
      let count = 0;
      for (let i = b.starts[s]; i < b.starts[s] + b.lengths[s]; i++) {
        if (!b.mask[i]) continue;
        const x = Math.max(-LOG_RATIO_BOUND, Math.min(LOG_RATIO_BOUND, b.logRatio[i]));
        sum += Math.exp(x) - 1 - x;
        count++;
      }
      stat[s] = count ? sum / count : 0;
    }
    return perPosition(b, Array.from(stat, (k) => (k <= high ? 1 : 0)));
  },
};
