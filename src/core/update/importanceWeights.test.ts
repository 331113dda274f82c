import { describe, expect, it } from 'vitest';
import { paddedLayout, partialShare } from './batch.ts';
import { logprobMismatch, staleness, truncatedIsWeights } from './importanceWeights.ts';

const L = Math.log;

describe('truncated importance sampling', () => {
  it('weights, untruncated ratio mean/max and clip fraction (cap 2)', () => {
    // π_old/μ per token: 0.5/0.5 = 1, 0.75/0.5 = 1.5, 0.6/0.2 = 3, 0.2/0.4 = 0.5, masked 10.
    // weights min(r, 2): [1, 1.5, 2, 0.5, 0]; ratio mean (1 + 1.5 + 3 + 0.5)/4 = 1.5; max 3;
    // clipfrac 1/4 (only 3 > 2).
    const old = [L(0.5), L(0.75), L(0.6), L(0.2), L(1)];
    const beh = [L(0.5), L(0.5), L(0.2), L(0.4), L(0.1)];
    const r = truncatedIsWeights(old, beh, [1, 1, 1, 1, 0], 2);
    const want = [1, 1.5, 2, 0.5, 0];
    want.forEach((w, i) => expect(r.weights[i]).toBeCloseTo(w, 12));
    expect(r.ratioMean).toBeCloseTo(1.5, 12);
    expect(r.ratioMax).toBeCloseTo(3, 12);
    expect(r.clipfrac).toBe(0.25);
  });

  it('rejects a non-positive cap', () => {
    expect(() => truncatedIsWeights([0], [0], [1], 0)).toThrow(/cap/);
  });
});

describe('staleness', () => {
  it('per token = trainer version − token version, over policy tokens', () => {
    // Trainer 5; tokens 5, 4, 4, 2 (+ masked 0): staleness 0, 1, 1, 3 -> mean 1.25, max 3.
    const s = staleness(5, [5, 4, 4, 2, 0], [1, 1, 1, 1, 0]);
    expect(Array.from(s.perToken)).toEqual([0, 1, 1, 3, 0]);
    expect(s.mean).toBe(1.25);
    expect(s.max).toBe(3);
  });

  it('a token newer than the trainer is an error', () => {
    expect(() => staleness(1, [2], [1])).toThrow(/newer/);
  });

  it('partial share: sequences spanning more than one version', () => {
    // n = 3, T = 3. Seq 0 all v1; seq 1 v1, v2, v2 (partial); seq 2: masked v0 then v2, v2.
    const versions = Int32Array.from([1, 1, 1, 1, 2, 2, 0, 2, 2]);
    const mask = Float32Array.from([1, 1, 1, 1, 1, 1, 0, 1, 1]);
    expect(partialShare({ ...paddedLayout(3, 3, mask), versions })).toBe(1 / 3);
  });

  it('log-prob mismatch mean/max over policy tokens', () => {
    // |diffs| 0.1, 0.3 (masked 5 ignored) -> mean 0.2, max 0.3.
    const r = logprobMismatch([-1, -2, 0], [-1.1, -1.7, 5], [1, 1, 0]);
    expect(r.absDiffMean).toBeCloseTo(0.2, 12);
    expect(r.absDiffMax).toBeCloseTo(0.3, 12);
  });
});
