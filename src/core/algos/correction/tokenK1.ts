import type { RsDescriptor } from './types.ts';

/** Token rejection by the ratio (veRL rollout_rs 'token_k1'): a token stays only if low ≤ ρ_t ≤ high; the rest leave the loss. */
export const tokenK1: RsDescriptor = {
  name: 'token_k1',
  kind: 'rs',
  help: 'token rejection: drop tokens whose π_old/μ is outside [low, high]',
  bounds: 'ratio',
  defaultHigh: 2,
  keep(b, low, high) {
    const lo = Math.log(low);
    const hi = Math.log(high);
    const out = new Float64Array(b.logRatio.length);
    for (let i = 0; i < out.length; i++) if (b.mask[i] && b.logRatio[i] >= lo && b.logRatio[i] <= hi) out[i] = 1;
    return out;
  },
};
