import { describe, expect, it } from 'vitest';
import {
  aggregationWeights,
  broadcastToTokens,
  drGrpoAdvantages,
  EMA_BASELINE_INIT,
  expandPerStep,
  gae,
  gaeBatch,
  grpoAdvantages,
  normalizeAdvantages,
  reinforceAdvantages,
  rlooAdvantages,
  type TokenBatch,
} from './advantages.ts';
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

describe('GAE', () => {
  // 3 steps, rewards [0, 0, 1], values [0.5, 0.6, 0.7], γ = 0.9, λ = 0.8, γλ = 0.72.
  const rewards = [0, 0, 1];
  const values = [0.5, 0.6, 0.7];

  it('terminated: no bootstrap past the last step', () => {
    // δ2 = 1 + 0 − 0.7 = 0.3;  δ1 = 0 + 0.9·0.7 − 0.6 = 0.03;  δ0 = 0 + 0.9·0.6 − 0.5 = 0.04.
    // A2 = 0.3;  A1 = 0.03 + 0.72·0.3 = 0.246;  A0 = 0.04 + 0.72·0.246 = 0.21712.
    // returns = A + V = [0.71712, 0.846, 1.0].
    const r = gae({ rewards, values, terminated: true, truncated: false }, 0.9, 0.8);
    close(r.advantages, [0.21712, 0.246, 0.3], 12);
    close(r.returns, [0.71712, 0.846, 1.0], 12);
  });

  it('truncated: bootstraps from V(s_T)', () => {
    // V(s3) = 0.5: δ2 = 1 + 0.9·0.5 − 0.7 = 0.75; A2 = 0.75; A1 = 0.03 + 0.72·0.75 = 0.57;
    // A0 = 0.04 + 0.72·0.57 = 0.4504. returns = [0.9504, 1.17, 1.45].
    const r = gae({ rewards, values, terminated: false, truncated: true, bootstrapValue: 0.5 }, 0.9, 0.8);
    close(r.advantages, [0.4504, 0.57, 0.75], 12);
    close(r.returns, [0.9504, 1.17, 1.45], 12);
  });

  it('terminated wins over a bootstrap value given by mistake', () => {
    const r = gae({ rewards, values, terminated: true, truncated: true, bootstrapValue: 100 }, 0.9, 0.8);
    close(r.advantages, [0.21712, 0.246, 0.3], 12);
  });

  it('λ = 1 gives Monte Carlo returns; λ = 0 gives one-step TD errors', () => {
    // Discounted returns of [0, 0, 1] with γ = 0.9: [0.81, 0.9, 1].
    const mc = gae({ rewards, values, terminated: true, truncated: false }, 0.9, 1);
    close(mc.returns, [0.81, 0.9, 1], 12);
    close(mc.advantages, [0.31, 0.3, 0.3], 12);
    const td = gae({ rewards, values, terminated: true, truncated: false }, 0.9, 0);
    close(td.advantages, [0.04, 0.03, 0.3], 12);
  });

  it('a truncated episode without a bootstrap value is an error', () => {
    expect(() => gae({ rewards, values, terminated: false, truncated: true }, 0.9, 0.8)).toThrow(/bootstrapValue/);
  });

  it('gaeBatch concatenates episodes without leaking across the boundary', () => {
    const r = gaeBatch(
      [
        { rewards, values, terminated: true, truncated: false },
        { rewards: [2], values: [1], terminated: true, truncated: false },
      ],
      0.9,
      0.8,
    );
    // Second episode alone: δ = 2 − 1 = 1. First episode unchanged by it.
    close(r.advantages, [0.21712, 0.246, 0.3, 1], 12);
  });
});

describe('normalizeAdvantages', () => {
  it('standardises over masked positions only', () => {
    // Selected [1, 3]: mean 2, sample std √2 -> [−1/√2, +1/√2]; the unmasked 100 stays 0.
    const a = normalizeAdvantages([1, 100, 3], [1, 0, 1], 0);
    close(a, [-Math.SQRT1_2, 0, Math.SQRT1_2], 12);
  });
});

describe('tokens', () => {
  // B = 2, T = 4. Seq 0: [env, pol, pol, pol] (3 policy tokens). Seq 1: [env, pol, pad, pad] (1).
  const batch: TokenBatch = { nSeqs: 2, seqLen: 4, lossMask: [0, 1, 1, 1, 0, 1, 0, 0] };

  it('broadcasts sequence advantages to policy tokens only', () => {
    close(broadcastToTokens([0.5, -2], batch), [0, 0.5, 0.5, 0.5, 0, -2, 0, 0]);
  });

  it("token-level weights: 1/total = 1/4 on every policy token", () => {
    close(aggregationWeights(batch, 'token'), [0, 0.25, 0.25, 0.25, 0, 0.25, 0, 0]);
  });

  it('sequence-level weights: 1/(len_b · n_seqs) = 1/6 for seq 0, 1/2 for seq 1', () => {
    close(aggregationWeights(batch, 'sequence'), [0, 1 / 6, 1 / 6, 1 / 6, 0, 0.5, 0, 0]);
  });

  it('constant (Dr.GRPO) weights: 1/(B·L), default L = T = 4 -> 1/8; L = 10 -> 1/20', () => {
    close(aggregationWeights(batch, 'constant'), [0, 0.125, 0.125, 0.125, 0, 0.125, 0, 0]);
    close(aggregationWeights(batch, 'constant', 10), [0, 0.05, 0.05, 0.05, 0, 0.05, 0, 0]);
  });

  it('sequence-level ignores sequences with no policy token when counting n_seqs', () => {
    const b2: TokenBatch = { nSeqs: 2, seqLen: 2, lossMask: [1, 1, 0, 0] };
    close(aggregationWeights(b2, 'sequence'), [0.5, 0.5, 0, 0]);
    close(aggregationWeights({ nSeqs: 1, seqLen: 2, lossMask: [0, 0] }, 'token'), [0, 0]);
  });

  it('expandPerStep maps multi-token steps and leaves env tokens at 0', () => {
    close(expandPerStep([0.3, -1], [-1, 0, 0, -1, 1, 1]), [0, 0.3, 0.3, 0, -1, -1]);
    expect(() => expandPerStep([1], [2])).toThrow(/step 2/);
  });

  it('rejects a mask of the wrong size', () => {
    expect(() => broadcastToTokens([1, 2], { nSeqs: 2, seqLen: 3, lossMask: [1, 1, 1] })).toThrow(/expected nSeqs/);
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
