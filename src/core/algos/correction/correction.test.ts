/**
 * Each rollout-correction mode and diagnostic against a hand-worked batch: two episodes,
 * ρ = π_old/μ = [2.5, 1, 0.5] and [1.2, 0.8], plus one untrained position (mask 0) that must
 * never count. Every expected number is worked out below from the definitions, not from the code.
 */
import { describe, expect, it } from 'vitest';
import { m2po } from './m2po.ts';
import { correctionMetrics } from './metrics.ts';
import { seqMeanK3 } from './seqMeanK3.ts';
import { seqSumK1 } from './seqSumK1.ts';
import { sequenceIs } from './sequenceIs.ts';
import { tokenIs } from './tokenIs.ts';
import { tokenK1 } from './tokenK1.ts';
import type { CorrectionBatch } from './types.ts';
import { CORRECTIONS, IS_MODES, RS_MODES } from './index.ts';

const RHO = [2.5, 1, 0.5, 1.2, 0.8, 7];
const MASK = [1, 1, 1, 1, 1, 0];
function batch(rho: number[] = RHO, mask: number[] = MASK, starts = [0, 3], lengths = [3, 3]): CorrectionBatch {
  return { logRatio: Float64Array.from(rho, (r, i) => (mask[i] ? Math.log(r) : 0)), mask, starts, lengths };
}
const BOUNDS = { isCap: 2, rsLow: 0.5, rsHigh: 2, m2Threshold: 0.04 };
const close = (got: ArrayLike<number>, want: number[]) => want.forEach((w, i) => expect(got[i], `position ${i}`).toBeCloseTo(w, 12));

describe('importance weights', () => {
  it('token: ρ per trained position, untruncated (the caller truncates), 0 off the mask', () => {
    close(tokenIs.ratios(batch()), [2.5, 1, 0.5, 1.2, 0.8, 0]);
  });
  it('sequence: the product Πρ over the episode on each of its positions (2.5·1·0.5 = 1.25; 1.2·0.8 = 0.96), not the geometric mean (1.077, 0.980)', () => {
    close(sequenceIs.ratios(batch()), [1.25, 1.25, 1.25, 0.96, 0.96, 0]);
  });
});

describe('rejection sampling', () => {
  it('token_k1 keeps a token only if low ≤ ρ ≤ high: [0.6, 2] drops 2.5 and 0.5', () => {
    expect(Array.from(tokenK1.keep(batch(), 0.6, 2))).toEqual([0, 1, 0, 1, 1, 0]);
  });
  it('token_k1 bounds are inclusive (ρ = 0.5 at low 0.5 stays)', () => {
    expect(Array.from(tokenK1.keep(batch(), 0.5, 2))).toEqual([0, 1, 1, 1, 1, 0]);
  });
  it('seq_sum_k1 judges the product: episode 1 (Πρ 1.25) leaves [0.5, 1.2], episode 2 (0.96) stays; a geometric mean (1.077) would keep episode 1', () => {
    expect(Array.from(seqSumK1.keep(batch(), 0.5, 1.2))).toEqual([0, 0, 0, 1, 1, 0]);
  });
  it('seq_mean_k3 judges mean(ρ − 1 − ln ρ): ρ = [2, 0.5] has mean k3 = (0.30685 + 0.19315)/2 = 0.25 > 0.1 and is dropped, though its mean k1 (−ln ρ) is 0', () => {
    const b = batch([2, 0.5, 1.1, 0.95], [1, 1, 1, 1], [0, 2], [2, 2]);
    // episode 2: k3(1.1) = 0.1 − ln 1.1 = 0.0046898, k3(0.95) = −0.05 − ln 0.95 = 0.0012933; mean 0.0029916 ≤ 0.1
    expect(Array.from(seqMeanK3.keep(b, 0, 0.1))).toEqual([0, 0, 1, 1]);
    // the boundary: at high = 0.25 (the mean exactly, up to rounding) episode 1 is kept only from 0.2500001
    expect(Array.from(seqMeanK3.keep(b, 0, 0.2500001))).toEqual([1, 1, 1, 1]);
  });
});

describe('M2PO', () => {
  it('masks the largest (log ρ)² first, only until the mean of the rest is below the threshold', () => {
    // log ρ = [0.5, −0.3, 0.1, 0, 0.2] → m2 = [0.25, 0.09, 0.01, 0, 0.04], mean 0.078 ≥ 0.04;
    // without 0.25: [0.09, 0.01, 0, 0.04] mean 0.035 < 0.04 → stop. A per-token rule (m2 > 0.04) would also drop 0.09.
    const b = { logRatio: Float64Array.from([0.5, -0.3, 0.1, 0, 0.2, 9]), mask: [1, 1, 1, 1, 1, 0], starts: [0], lengths: [6] };
    expect(Array.from(m2po.keep(b, BOUNDS))).toEqual([0, 1, 1, 1, 1, 0]);
  });
  it('a batch already below the threshold keeps every token; the untrained position never counts', () => {
    const b = { logRatio: Float64Array.from([0.1, -0.1, 9]), mask: [1, 1, 0], starts: [0], lengths: [3] };
    expect(Array.from(m2po.keep(b, BOUNDS))).toEqual([1, 1, 0]);
  });
});

describe('the correction/* diagnostics', () => {
  const b = batch();
  const m = correctionMetrics({ b, ratios: tokenIs.ratios(b), perSequence: false, isCap: 2, rsKeep: tokenK1.keep(b, 0.6, 2), m2Keep: null });
  it('ESS: weights clamped to [1/2, 2] = [2, 1, 0.5, 1.2, 0.8]; (Σw)²/(N·Σw²) = 5.5²/(5·7.33) = 0.825375, not Kish\'s unnormalised 4.127 nor the unclamped 0.7516', () => {
    expect(m['correction/is_ess']).toBeCloseTo(30.25 / 36.65, 12);
  });
  it('fraction high: 1 of 5 tokens above the cap (2.5)', () => {
    expect(m['correction/is_ratio_fraction_high']).toBeCloseTo(0.2, 12);
  });
  it('rs masked fraction: 2 of 5 trained tokens; M2PO off → 0', () => {
    expect(m['correction/rs_masked_fraction']).toBeCloseTo(0.4, 12);
    expect(m['correction/second_moment_masked_fraction']).toBe(0);
  });
  it('log_ppl_abs_diff from μ and π_old separately: |mean log μ − mean log π_old| per episode, then the mean over episodes', () => {
    // Any μ works: take log μ = −1 everywhere, log π_old = log μ + log ρ.
    const per = [[0, 1, 2], [3, 4]].map((ix) => {
      const mu = ix.reduce((a) => a - 1, 0) / ix.length;
      const pi = ix.reduce((a, i) => a - 1 + Math.log(RHO[i]), 0) / ix.length;
      return Math.abs(mu - pi);
    });
    expect(per[0]).toBeCloseTo(Math.log(1.25) / 3, 12); // 0.074381
    expect(m['correction/log_ppl_abs_diff']).toBeCloseTo((per[0] + per[1]) / 2, 12);
  });
  it('chi2_token: mean ρ² − 1 = (6.25 + 1 + 0.25 + 1.44 + 0.64)/5 − 1 = 0.916 (not E[ρ] − 1 = 0.2)', () => {
    expect(m['correction/chi_squared_token']).toBeCloseTo(0.916, 12);
  });
  it('sequence-level IS: ESS over the positions\' sequence weights [1.25×3, 0.96×2], the fraction over episodes', () => {
    const s = correctionMetrics({ b, ratios: sequenceIs.ratios(b), perSequence: true, isCap: 1.2, rsKeep: null, m2Keep: null });
    // clamped to [1/1.2, 1.2]: [1.2, 1.2, 1.2, 0.96, 0.96]; Σ = 5.52, Σw² = 4.32 + 1.8432 = 6.1632
    expect(s['correction/is_ess']).toBeCloseTo(5.52 ** 2 / (5 * 6.1632), 12);
    expect(s['correction/is_ratio_fraction_high']).toBeCloseTo(0.5, 12);
    expect(s['correction/rs_masked_fraction']).toBe(0);
  });
  it('on-policy (ρ = 1 everywhere): ESS 1, nothing high or masked, χ² and the perplexity gap 0', () => {
    const on = batch([1, 1, 1, 1, 1, 1]);
    const z = correctionMetrics({ b: on, ratios: tokenIs.ratios(on), perSequence: false, isCap: 2, rsKeep: tokenK1.keep(on, 0.99, 1.01), m2Keep: m2po.keep(on, BOUNDS) });
    expect(z).toEqual({ 'correction/is_ess': 1, 'correction/is_ratio_fraction_high': 0, 'correction/rs_masked_fraction': 0, 'correction/second_moment_masked_fraction': 0, 'correction/log_ppl_abs_diff': 0, 'correction/chi_squared_token': 0 });
  });
});

describe('the registry', () => {
  it('lists each mode once, under veRL\'s names', () => {
    expect(CORRECTIONS.map((d) => d.name)).toEqual(['token', 'sequence', 'token_k1', 'seq_sum_k1', 'seq_mean_k3', 'm2po']);
    expect(IS_MODES.map((d) => d.name)).toEqual(['token', 'sequence']);
    expect(RS_MODES.map((d) => d.name)).toEqual(['token_k1', 'seq_sum_k1', 'seq_mean_k3']);
  });
});
