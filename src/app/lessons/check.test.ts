import { describe, expect, it } from 'vitest';
import { BASELINE_ITERATIONS, describeReading, evaluateCheck } from './check.ts';
import { CheckSchema, type Check } from './schema.ts';

const check = (c: unknown): Check => CheckSchema.parse(c);
const zero = (xs: number[]) => xs.map((x, i) => ({ 'groups/frac_zero_std': x, it: i + 1 }));

describe('evaluateCheck', () => {
  const c = check({ all: [{ metric: 'groups/frac_zero_std', op: '>=', value: 0.8 }], for: 3, says: 'flat' });

  it('waits without data and counts a streak of iterations in a row', () => {
    expect(evaluateCheck(c, []).state).toBe('waiting');
    const s = evaluateCheck(c, zero([0.9, 0.9]));
    expect(s).toMatchObject({ state: 'watching', streak: 2, need: 3, doneAt: null });
  });

  it('is done at the iteration the streak completes, and stays done whatever follows', () => {
    const s = evaluateCheck(c, zero([0.5, 0.9, 0.85, 0.8, 0.1, 0.1]));
    expect(s).toMatchObject({ state: 'done', doneAt: 4, streak: 3 });
  });

  it('a broken streak starts again', () => {
    expect(evaluateCheck(c, zero([0.9, 0.9, 0.7, 0.9, 0.9])).streak).toBe(2);
  });

  it('a missing or non-finite metric fails its condition', () => {
    const s = evaluateCheck(c, [{ it: 1 }, { 'groups/frac_zero_std': NaN, it: 2 }, { 'groups/frac_zero_std': 1, it: 3 }]);
    expect(s).toMatchObject({ state: 'watching', streak: 1 });
    expect(evaluateCheck(c, [{ it: 1 }]).readings[0].value).toBeNaN();
  });

  it('every condition must hold at the same iteration', () => {
    const both = check({ all: [{ metric: 'adv/mean', op: '<=', value: 0.2 }, { metric: 'adv/std', op: '<=', value: 0.5 }], for: 2, says: 'both' });
    const stream = [
      { 'adv/mean': 0.1, 'adv/std': 0.9 },
      { 'adv/mean': 0.9, 'adv/std': 0.1 },
      { 'adv/mean': 0.1, 'adv/std': 0.1 },
      { 'adv/mean': 0.2, 'adv/std': 0.5 },
    ];
    expect(evaluateCheck(both, stream.slice(0, 3)).state).toBe('watching');
    expect(evaluateCheck(both, stream)).toMatchObject({ state: 'done', doneAt: 4 });
  });

  it('within: missed once the iteration passes without the streak; iterations after it never count', () => {
    const w = check({ all: [{ metric: 'groups/frac_zero_std', op: '>=', value: 0.8 }], for: 2, within: 3, says: 'soon' });
    expect(evaluateCheck(w, zero([0.1, 0.1])).state).toBe('watching');
    expect(evaluateCheck(w, zero([0.1, 0.1, 0.9])).state).toBe('missed');
    expect(evaluateCheck(w, zero([0.1, 0.1, 0.9, 0.9, 0.9])).state).toBe('missed');
    expect(evaluateCheck(w, zero([0.1, 0.9, 0.9])).state).toBe('done');
  });

  it('rise compares with the mean of the first iterations and counts only after them', () => {
    const r = check({ all: [{ metric: 'episode/success_rate', op: 'rise', by: 0.2 }], for: 1, says: 'up' });
    const s = (xs: number[]) => xs.map((x) => ({ 'episode/success_rate': x }));
    // Baseline (0.1 + 0.2 + 0.3) / 3 = 0.2; a jump inside the baseline window does not count.
    expect(evaluateCheck(r, s([0.1, 0.2, 0.3])).state).toBe('watching');
    expect(evaluateCheck(r, s([0.1, 0.2, 0.3, 0.39])).state).toBe('watching');
    expect(evaluateCheck(r, s([0.1, 0.2, 0.3, 0.4]))).toMatchObject({ state: 'done', doneAt: 4 });
    expect(evaluateCheck(r, s([0.1, 0.9]))).toMatchObject({ state: 'watching' });
    expect(BASELINE_ITERATIONS).toBe(3);
  });

  it('fall is the mirror of rise; the baseline skips iterations without the metric', () => {
    const f = check({ all: [{ metric: 'actor/entropy', op: 'fall', by: 0.5 }], for: 2, says: 'down' });
    const stream: Record<string, number>[] = [{ it: 1 }, { 'actor/entropy': 2 }, { 'actor/entropy': 2 }, { 'actor/entropy': 2 }, { 'actor/entropy': 1.5 }, { 'actor/entropy': 1.4 }];
    expect(evaluateCheck(f, stream)).toMatchObject({ state: 'done', doneAt: 6 });
  });

  it('window: reads the mean of the last w iterations, and nothing before w exist', () => {
    const w = check({ all: [{ metric: 'episode/success_rate', op: '>=', value: 0.5, window: 3 }], for: 1, says: 'smooth' });
    const s = (xs: number[]) => xs.map((x) => ({ 'episode/success_rate': x }));
    expect(evaluateCheck(w, s([0.9, 0.9])).state).toBe('watching');
    expect(evaluateCheck(w, s([0.9, 0.9, 0.0])).state).toBe('done'); // (0.9 + 0.9 + 0) / 3 = 0.6
    expect(evaluateCheck(w, s([0.0, 0.0, 0.9])).state).toBe('watching');
    const r = check({ all: [{ metric: 'episode/success_rate', op: 'rise', by: 0.2, window: 2 }], for: 1, says: 'up' });
    // Baseline 0.1 (first 3 raw values); at i = 3 the window mean (0.1 + 0.3) / 2 = 0.2 is +0.1; at i = 4 (0.3 + 0.3) / 2 is +0.2.
    expect(evaluateCheck(r, s([0.1, 0.1, 0.1, 0.3])).state).toBe('watching');
    expect(evaluateCheck(r, s([0.1, 0.1, 0.1, 0.3, 0.3]))).toMatchObject({ state: 'done', doneAt: 5 });
    expect(describeReading(evaluateCheck(w, s([0.9])).readings[0])).toBe('Success rate (mean of 3 iterations) – ≥ 50%');
  });

  it('describes a reading in words', () => {
    const s = evaluateCheck(c, zero([0.875]));
    expect(describeReading(s.readings[0])).toBe('Zero-spread groups 88% ≥ 80%');
    const r = check({ all: [{ metric: 'episode/success_rate', op: 'rise', by: 0.2 }], says: 'up' });
    expect(describeReading(evaluateCheck(r, [{ 'episode/success_rate': 0.1 }]).readings[0])).toBe('Success rate up not yet from its start (needs +20 points)');
    // Entropy reads in nats, a tiny value as a bound rather than 6.7e-10.
    const e = check({ all: [{ metric: 'actor/entropy', op: '<=', value: 0.2 }], says: 'low' });
    expect(describeReading(evaluateCheck(e, [{ 'actor/entropy': 6.7e-10 }]).readings[0])).toBe('Policy entropy < 0.001 nats ≤ 0.200 nats');
    // A metric without a label reads as its key.
    const k = check({ all: [{ metric: 'perf/tis_s', op: '>=', value: 2 }], says: 'x' });
    expect(describeReading(evaluateCheck(k, [{ 'perf/tis_s': 3 }]).readings[0])).toBe('perf/tis_s 3.00 ≥ 2.00');
  });
});

describe('CheckSchema', () => {
  it('names what is wrong', () => {
    const r = CheckSchema.safeParse({ all: [{ metric: 'zero std', op: '>', value: 1 }], says: '' });
    expect(r.success).toBe(false);
    expect(r.error!.issues.length).toBeGreaterThanOrEqual(2);
    expect(CheckSchema.parse({ all: [{ metric: 'it', op: '>=', value: 3 }], says: 'x' }).for).toBe(3);
  });
});
