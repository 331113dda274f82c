import type { MaskDescriptor } from './types.ts';

/**
 * M2PO (AReaL; "Second-moment trust policy optimization"): bound the batch's second moment of
 * the log ratio, M2 = mean over kept tokens of (log ρ)². Tokens are masked in order of largest
 * (log ρ)² first, as few as needed for the mean of the rest to fall below the threshold; a batch
 * already below it loses nothing. A batch-level mask, unlike per-token truncation: a token is
 * dropped only while the batch as a whole is too far off-policy.
 */
export const m2po: MaskDescriptor = {
  name: 'm2po',
  kind: 'mask',
  help: 'M2PO: mask the tokens of largest (log π_old/μ)² until the mean of the rest is below the threshold',
  keep(b, bounds) {
    const idx: number[] = [];
    for (let i = 0; i < b.logRatio.length; i++) if (b.mask[i]) idx.push(i);
    const m2 = (i: number) => b.logRatio[i] * b.logRatio[i];
    idx.sort((x, y) => m2(y) - m2(x));
    // suffix[k] = Σ of m2 over idx[k..]; mask the first k, k the smallest with suffix mean < threshold.
    let suffix = 0;
    for (const i of idx) suffix += m2(i);
    let masked = 0;
    while (masked < idx.length && suffix / (idx.length - masked) >= bounds.m2Threshold) suffix -= m2(idx[masked++]);
    const out = new Float64Array(b.logRatio.length);
    for (let k = masked; k < idx.length; k++) out[idx[k]] = 1;
    return out;
  },
};
