/**
 * DAPO's length controls against hand-worked values from the paper's definitions (Yu et al. 2025,
 * eq. 13: R_length(y) = 0 for |y| ≤ L_max − L_cache, ((L_max − L_cache) − |y|)/L_cache for
 * L_max − L_cache < |y| ≤ L_max, −1 beyond; and the token-level loss normalised by Σ|o_i|).
 */
import { describe, expect, it } from 'vitest';
import { defaultsFor, parseAlgoConfig } from '../algos/config.ts';
import type { ShapedReward } from '../reward/shaping.ts';
import { packedRowsBatch } from './batch.ts';
import { placeRewards } from './positionRewards.ts';
import { aggregationWeightsOf } from './batchAdvantages.ts';
import { applyOverlong, overlongPenalty, truncationMaskedWeights } from './lengthControl.ts';

const shaped = (total: number, steps: number): ShapedReward => ({ total, terms: {} as ShapedReward['terms'], raw: {} as ShapedReward['raw'], perStep: Float64Array.from({ length: steps }, (_, t) => (t === steps - 1 ? total : 0)) });
const rows = (lengths: number[], horizon: number) => {
  const S = lengths.reduce((a, b) => a + b, 0);
  return packedRowsBatch(lengths, { D: 1, obs: new Float32Array(S), actions: new Int32Array(S) }, new Float32Array(S), horizon);
};

describe('DAPO soft overlong punishment', () => {
  it('is 0 up to L_max − L_c, a ramp to −1 inside the buffer, −1 beyond (L_max 20, L_c 5)', () => {
    // Worked by hand: the ramp starts at 15; 17 is 2/5 of the way in, 20 is its end. (A ramp that
    // starts at L_max instead, the plausible wrong variant, gives 0 at 16–19.)
    expect([10, 15, 16, 17, 19, 20, 21, 40].map((L) => overlongPenalty(L, 20, 5))).toEqual([0, 0, -0.2, -0.4, -0.8, -1, -1, -1]);
  });

  it('lands on each episode reward (total and last step) before advantages, scaled by penalty; horizon is L_max by default', () => {
    const b = rows([4, 9, 12], 12);
    const s = [shaped(1, 4), shaped(0.5, 9), shaped(0, 12)];
    const algo = { ...defaultsFor('dapo'), overlong: { enabled: true, buffer: 4, maxLen: null, penalty: 0.5 } };
    const term = applyOverlong(placeRewards(b, s), algo);
    // L_max = 12, ramp from 8: 4 → 0; 9 → −1/4·0.5; 12 → −1·0.5.
    expect(Array.from(term)).toEqual([0, -0.125, -0.5]);
    expect(Array.from(b.scores)).toEqual([1, 0.375, -0.5]);
    // Each sequence's last position (its last step's end): 3, 4 + 8, 13 + 11.
    expect([3, 12, 24].map((i) => b.rewards[i])).toEqual([1, 0.375, -0.5]);
    // Off (every other algorithm's default): nothing changes.
    const b2 = placeRewards(rows([4], 4), [shaped(1, 4)]);
    applyOverlong(b2, defaultsFor('grpo'));
    expect(b2.scores[0]).toBe(1);
  });

  it('dapo turns it and maskTruncated on by default; the others keep both off', () => {
    const d = parseAlgoConfig({ algo: 'dapo' });
    const g = parseAlgoConfig({ algo: 'grpo' });
    if (!d.ok || !g.ok) throw new Error('defaults must parse');
    expect([d.config.overlong.enabled, d.config.maskTruncated, d.config.aggregation]).toEqual([true, true, 'token']);
    expect([g.config.overlong.enabled, g.config.maskTruncated]).toEqual([false, false]);
    const off = parseAlgoConfig({ algo: 'dapo', overlong: { enabled: false }, maskTruncated: false });
    expect(off.ok && [off.config.overlong.enabled, off.config.maskTruncated]).toEqual([false, false]);
    const bad = parseAlgoConfig({ algo: 'dapo', overlong: { buffer: 30, maxLen: 20 } });
    expect(bad.ok ? [] : bad.messages).toEqual(['overlong.buffer: must be ≤ overlong.maxLen (20), got 30']);
  });
});

describe('DAPO overlong filtering (maskTruncated) with the token-level normaliser', () => {
  it('truncated episodes weigh 0 and Σ|o_i| counts only the kept ones', () => {
    // Episodes of 2, 3 and 5 steps; the third was cut by the time limit.
    const b = rows([2, 3, 5], 5);
    b.terminated[2] = 0;
    const algo = { ...defaultsFor('dapo') };
    const w = truncationMaskedWeights(b, aggregationWeightsOf(b, algo), algo);
    // Kept: 2 + 3 = 5 tokens, each 1/5; the wrong variant (normalising by all 10) would give 1/10.
    expect(Array.from(w)).toEqual([0.2, 0.2, 0.2, 0.2, 0.2, 0, 0, 0, 0, 0]);
    // Off: the plain token weights over all 10.
    expect(Array.from(truncationMaskedWeights(b, aggregationWeightsOf(b, algo), { ...algo, maskTruncated: false }))).toEqual(new Array(10).fill(0.1));
    // 'sequence' aggregation: each kept episode 1/2, over its own steps.
    const seq = { ...algo, aggregation: 'sequence' as const };
    expect(Array.from(truncationMaskedWeights(b, aggregationWeightsOf(b, seq), seq))).toEqual([0.25, 0.25, 1 / 6, 1 / 6, 1 / 6, 0, 0, 0, 0, 0]);
  });
});
