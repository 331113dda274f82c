import { describe, expect, it } from 'vitest';
import { logSoftmaxRow, sampleRow } from './categorical.ts';
import { Rng } from '../util/rng.ts';

describe('categorical sampling', () => {
  it('log-softmax matches a hand-worked row', () => {
    // logits [0, ln 3] -> probs [1/4, 3/4]
    const out = new Float64Array(2);
    logSoftmaxRow([5, 0, Math.log(3)], 1, 2, out);
    expect(out[0]).toBeCloseTo(Math.log(0.25), 12);
    expect(out[1]).toBeCloseTo(Math.log(0.75), 12);
  });

  it('is stable for huge logits', () => {
    const out = new Float64Array(3);
    logSoftmaxRow([1000, 1000, -1000], 0, 3, out);
    expect(out[0]).toBeCloseTo(Math.log(0.5), 12);
    expect(Number.isFinite(out[2])).toBe(true);
  });

  it('samples with the right frequencies and reports entropy', () => {
    const rng = new Rng(1);
    const logits = new Float32Array([0, Math.log(3), -Infinity]);
    const counts = [0, 0, 0];
    let s = sampleRow(logits, 0, 3, rng);
    for (let i = 0; i < 20000; i++) {
      s = sampleRow(logits, 0, 3, rng);
      counts[s.action]++;
    }
    expect(counts[2]).toBe(0);
    expect(counts[1] / 20000).toBeGreaterThan(0.74);
    expect(counts[1] / 20000).toBeLessThan(0.76);
    // H = -(1/4 ln 1/4 + 3/4 ln 3/4) = 0.5623
    expect(s.entropy).toBeCloseTo(0.5623351446, 8);
  });

  it('greedy picks the argmax and is deterministic', () => {
    const rng = new Rng(2);
    const logits = new Float32Array([0.1, 0.3, 0.2, /* row 2 */ 5, 1, 2]);
    expect(sampleRow(logits, 0, 3, rng, undefined, 0).action).toBe(1);
    expect(sampleRow(logits, 1, 3, rng, undefined, 0).action).toBe(0);
  });

  it('same seed gives the same draws', () => {
    const logits = new Float32Array([0.2, 0.5, 0.1, 0.9]);
    const a = new Rng(9);
    const b = new Rng(9);
    for (let i = 0; i < 100; i++) expect(sampleRow(logits, 0, 4, a).action).toBe(sampleRow(logits, 0, 4, b).action);
  });
});
