/**
 * GDPO against hand-worked groups: per-term normalisation tells apart reward vectors that GRPO,
 * normalising their sum, cannot.
 */
import { describe, expect, it } from 'vitest';
import { defaultsFor } from './config.ts';
import { gdpoAdvantages } from './gdpo.ts';
import { sequenceAdvantages } from './registry/index.ts';

const grpo = { ...defaultsFor('grpo'), groupSize: 4, stdEps: 1e-9 };

// One group of four; terms (a, b): (1, 0), (0, 1), (1, 0), (1, 1).
const terms = [[1, 0], [0, 1], [1, 0], [1, 1]];

describe('GDPO (normalize_then_sum)', () => {
  it('GRPO on the sums [1, 1, 1, 2] gives (1, 0) and (0, 1) the same advantage: (1 − 1.25)/0.5 = −0.5', () => {
    const a = sequenceAdvantages(grpo, terms.map((t) => t[0] + t[1])).advantages;
    expect(a[0]).toBeCloseTo(-0.5, 7);
    expect(a[1]).toBeCloseTo(a[0], 12);
  });
  it('GDPO gives them different ones: term a [1,0,1,1] → [0.5, −1.5, 0.5, 0.5], term b [0,1,0,1] → ±0.5/0.57735, summed, standardised', () => {
    const sa = [0.5, -1.5, 0.5, 0.5];
    const sb = [-1, 1, -1, 1].map((x) => (0.5 * x) / Math.sqrt(1 / 3));
    const sum = sa.map((x, i) => x + sb[i]); // [−0.3660, −0.6340, −0.3660, 1.3660], mean 0
    const sd = Math.sqrt(sum.reduce((a, x) => a + x * x, 0) / 3);
    const want = sum.map((x) => x / sd); // [−0.3981, −0.6896, −0.3981, 1.4858]
    const got = gdpoAdvantages(grpo, terms, 4);
    want.forEach((w, i) => expect(got[i]).toBeCloseTo(w, 7));
    expect(got[0]).toBeCloseTo(-0.3981, 3);
    expect(got[1]).toBeCloseTo(-0.6896, 3);
    expect(Math.abs(got[0] - got[1])).toBeGreaterThan(0.2);
  });
  it('one term: GDPO is GRPO up to the batch standardisation (same order, zero mean, unit sample std)', () => {
    const r = [3, 1, 0, 2, 5, 5, 1, 1];
    const g = gdpoAdvantages({ ...grpo, groupSize: 4 }, r.map((x) => [x]), 4);
    const a = sequenceAdvantages({ ...grpo, groupSize: 4 }, r).advantages;
    const m = a.reduce((x, y) => x + y, 0) / a.length;
    const s = Math.sqrt(a.reduce((x, y) => x + (y - m) ** 2, 0) / (a.length - 1));
    a.forEach((x, i) => expect(g[i]).toBeCloseTo((x - m) / s, 7));
  });
  it('groups are normalised apart: a term constant within each group adds nothing', () => {
    const t = [[1, 7], [0, 7], [1, 9], [0, 9]];
    const g = gdpoAdvantages({ ...grpo, groupSize: 2 }, t, 2);
    const only = gdpoAdvantages({ ...grpo, groupSize: 2 }, t.map((x) => [x[0]]), 2);
    g.forEach((x, i) => expect(x).toBeCloseTo(only[i], 7));
  });
});

describe('GDPO in the advantage phase and the config', () => {
  it("computeAdvantages with rewardAggregation 'gdpo' reads each episode's terms, not its total", async () => {
    const { computeAdvantages } = await import('../update/batchAdvantages.ts');
    const { placeRewards } = await import('../update/positionRewards.ts');
    const { EMA_BASELINE_INIT } = await import('./advantages.ts');
    const n = 4;
    const b = {
      n, starts: Int32Array.from([0, 1, 2, 3]), lengths: Int32Array.from([1, 1, 1, 1]), size: n, mask: new Float32Array(n).fill(1),
      mu: new Float32Array(n), versions: new Int32Array(n), values: new Float32Array(n), turnEnd: new Uint8Array(n).fill(1),
      bootstrap: new Float64Array(n), terminated: new Uint8Array(n).fill(1), groups: new Int32Array(n), horizon: 1,
      rewards: new Float64Array(n), scores: new Float64Array(n), stepCounts: new Int32Array(n), termScores: {},
      feed: { kind: 'rows' as const, D: 1, obs: new Float32Array(n), actions: new Int32Array(n) },
    };
    const shaped = terms.map(([a, c]) => ({ total: a + c, terms: { outcome: a, myTerm: c } as never, raw: {} as never, perStep: Float64Array.from([a + c]) }));
    placeRewards(b, shaped);
    const r = computeAdvantages({ ...grpo, rewardAggregation: 'gdpo' }, b, EMA_BASELINE_INIT, { groupSize: 4 });
    const want = gdpoAdvantages(grpo, terms, 4);
    want.forEach((w, i) => expect(r.adv[i]).toBeCloseTo(w, 12));
    const plain = computeAdvantages({ ...grpo, rewardAggregation: 'sum' }, b, EMA_BASELINE_INIT, { groupSize: 4 });
    expect(plain.adv[0]).toBeCloseTo(plain.adv[1], 12);
    expect(r.adv[0]).not.toBeCloseTo(r.adv[1], 3);
  });
  it('the schema refuses gdpo where no group std normalises the terms, and a KL penalty it would not read', async () => {
    const { parseAlgoConfig } = await import('./config.ts');
    const msg = (x: object) => {
      const r = parseAlgoConfig(x);
      return r.ok ? [] : r.messages;
    };
    expect(msg({ algo: 'grpo', rewardAggregation: 'gdpo' })).toEqual([]);
    expect(msg({ algo: 'rloo', rewardAggregation: 'gdpo' })[0]).toMatch(/^rewardAggregation: 'gdpo' normalises each reward term by its group's std: .*algo is 'rloo'$/);
    expect(msg({ algo: 'grpo', rewardAggregation: 'gdpo', normalizeStd: false })[0]).toMatch(/with normalizeStd off$/);
    expect(msg({ algo: 'grpo', rewardAggregation: 'gdpo', klCoef: 0.1, klMode: 'reward', klEstimator: 'k1' })[0]).toMatch(/^klMode: 'reward' subtracts the KL penalty/);
    expect(msg({ algo: 'grpo', rewardAggregation: 'mean' })[0]).toMatch(/^rewardAggregation: must be one of 'sum', 'gdpo'/);
  });
});
