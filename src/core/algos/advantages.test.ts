import { describe, expect, it } from 'vitest';
import { drGrpoAdvantages, EMA_BASELINE_INIT, grpoAdvantages, normalizeAdvantages, reinforceAdvantages, rlooAdvantages } from './advantages.ts';
import { defaultsFor } from './config.ts';
import { sequenceAdvantages } from './registry/index.ts';

const close = (got: ArrayLike<number>, want: number[], digits = 10): void => {
  expect(got.length).toBe(want.length);
  for (let i = 0; i < want.length; i++) expect(got[i], `index ${i}`).toBeCloseTo(want[i], digits);
};

describe('REINFORCE baselines', () => {
  it('batch mean: [1, 0, 0, 1] has mean 0.5 -> [0.5, -0.5, -0.5, 0.5]', () => {
    const r = reinforceAdvantages([1, 0, 0, 1], { kind: 'batch' });
    close(r.advantages, [0.5, -0.5, -0.5, 0.5]);
    expect(r.baseline).toBe(0.5);
    expect(r.state).toBeNull();
  });

  it('EMA: initialises from the first batch, uses the pre-update value afterwards', () => {
    // decay 0.9. Batch 1 [1, 0]: b := mean 0.5 -> A = [0.5, -0.5]; b' = 0.9·0.5 + 0.1·0.5 = 0.5.
    const a = reinforceAdvantages([1, 0], { kind: 'ema', decay: 0.9, state: EMA_BASELINE_INIT });
    close(a.advantages, [0.5, -0.5]);
    expect(a.state!.value).toBeCloseTo(0.5, 12);
    // Batch 2 [1, 1]: A = [1 − 0.5, 1 − 0.5] = [0.5, 0.5] (not 0: b is not this batch's mean);
    // b' = 0.9·0.5 + 0.1·1 = 0.55.
    const b = reinforceAdvantages([1, 1], { kind: 'ema', decay: 0.9, state: a.state! });
    close(b.advantages, [0.5, 0.5]);
    expect(b.state!.value).toBeCloseTo(0.55, 12);
    // Batch 3 [0]: A = −0.55.
    const c = reinforceAdvantages([0], { kind: 'ema', decay: 0.9, state: b.state! });
    close(c.advantages, [-0.55]);
  });

  it('rejects a decay outside [0, 1)', () => {
    expect(() => reinforceAdvantages([1], { kind: 'ema', decay: 1, state: EMA_BASELINE_INIT })).toThrow(/decay/);
  });
});

describe('GRPO / Dr.GRPO', () => {
  it('group [1, 0, 0, 1] -> [0.5, -0.5, -0.5, 0.5] before std', () => {
    close(grpoAdvantages([1, 0, 0, 1], 4, { normalizeStd: false, eps: 1e-6 }), [0.5, -0.5, -0.5, 0.5]);
    close(drGrpoAdvantages([1, 0, 0, 1], 4), [0.5, -0.5, -0.5, 0.5]);
  });

  it('std normalisation uses the sample std (N−1)', () => {
    // Squared deviations 4 × 0.25 = 1; sample variance 1/3; std = 1/√3; 0.5·√3 = √3/2 ≈ 0.8660254.
    // (Population std would be 0.5 and give ±1.)
    const h = Math.sqrt(3) / 2;
    close(grpoAdvantages([1, 0, 0, 1], 4, { normalizeStd: true, eps: 0 }), [h, -h, -h, h], 12);
    // eps in the denominator: 0.5 / (1/√3 + 0.1) = 0.5 / 0.6773503 = 0.7381705.
    close(grpoAdvantages([1, 0, 0, 1], 4, { normalizeStd: true, eps: 0.1 }), [0.7381705, -0.7381705, -0.7381705, 0.7381705], 6);
  });

  it('groups are independent; an all-equal group gives zeros, not NaN', () => {
    // Group 0 [1, 1]: zero spread -> [0, 0]. Group 1 [3, 1]: mean 2, sample std √2 -> ±1/√2.
    const a = grpoAdvantages([1, 1, 3, 1], 2, { normalizeStd: true, eps: 1e-6 });
    close(a, [0, 0, 0.7071063, -0.7071063], 6);
  });

  it('rejects rewards that do not split into groups', () => {
    expect(() => grpoAdvantages([1, 0, 1], 2, { normalizeStd: false, eps: 0 })).toThrow(/groups of 2/);
  });
});

describe('RLOO', () => {
  it('[1, 0, 0] -> [1, -0.5, -0.5]', () => {
    // 1 − mean(0, 0) = 1; 0 − mean(1, 0) = −0.5; 0 − mean(1, 0) = −0.5.
    close(rlooAdvantages([1, 0, 0], 3), [1, -0.5, -0.5]);
  });

  it('two groups of two: [2, 4, 1, 7]', () => {
    // Pair (2, 4): 2 − 4 = −2, 4 − 2 = 2. Pair (1, 7): −6, 6.
    close(rlooAdvantages([2, 4, 1, 7], 2), [-2, 2, -6, 6]);
  });

  it('group size 1 is an error with a reason', () => {
    expect(() => rlooAdvantages([1, 0], 1)).toThrow(/leave-one-out/);
  });
});

describe('normalizeAdvantages', () => {
  it('standardises over masked positions only', () => {
    // Selected [1, 3]: mean 2, sample std √2 -> [−1/√2, +1/√2]; the unmasked 100 stays 0.
    const a = normalizeAdvantages([1, 100, 3], [1, 0, 1], 0);
    close(a, [-Math.SQRT1_2, 0, Math.SQRT1_2], 12);
  });
});

describe('sequenceAdvantages dispatch', () => {
  it('routes each algo to its estimator', () => {
    close(sequenceAdvantages({ ...defaultsFor('rloo'), groupSize: 3 }, [1, 0, 0]).advantages, [1, -0.5, -0.5]);
    close(sequenceAdvantages({ ...defaultsFor('drgrpo'), groupSize: 4 }, [1, 0, 0, 1]).advantages, [0.5, -0.5, -0.5, 0.5]);
    const h = Math.sqrt(3) / 2;
    close(sequenceAdvantages({ ...defaultsFor('grpo'), groupSize: 4, stdEps: 0 }, [1, 0, 0, 1]).advantages, [h, -h, -h, h], 12);
    const r = sequenceAdvantages({ ...defaultsFor('reinforce'), baseline: 'ema', baselineDecay: 0.5 }, [2, 0]);
    // First batch: b = mean 1 -> A = [1, −1]; b' = 0.5·1 + 0.5·1 = 1.
    close(r.advantages, [1, -1]);
    expect(r.ema).toEqual({ value: 1, initialized: true });
    expect(() => sequenceAdvantages(defaultsFor('ppo'), [1])).toThrow(/gae/);
  });
});

describe('zero-spread groups', () => {
  it('equal rewards give advantages of exactly 0 (not the mean\'s rounding error amplified by 1/(std + eps))', () => {
    // 0.1 × 7 sums to 0.7000000000000001, so mean − 0.1 is ~1e-17; over eps 1e-6 that was ~1e-11.
    const r = [0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.3, 0.9, 0.1, 0.5, 0.2, 0.7, 0.4];
    const g = grpoAdvantages(r, 7, { normalizeStd: true, eps: 1e-6 });
    expect(Array.from(g.slice(0, 7))).toEqual([0, 0, 0, 0, 0, 0, 0]);
    expect(g.slice(7).some((a) => a !== 0)).toBe(true);
    expect(Array.from(rlooAdvantages(r, 7).slice(0, 7))).toEqual([0, 0, 0, 0, 0, 0, 0]);
  });
});
