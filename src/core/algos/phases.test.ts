/**
 * The estimators that the trainer phases share, against hand-worked examples: per-sequence
 * aggregation weights, KL as a per-step reward penalty, and the dynamic-sampling driver.
 */
import { describe, expect, it } from 'vitest';
import { sequenceAggregationWeights } from './advantages.ts';
import { aggregationWeightsOf } from '../update/batchAdvantages.ts';
import { paddedLayout } from '../update/batch.ts';
import { klK1, klK3, klPenalizeSteps } from './losses.ts';
import { sampleWithDynamicSampling, type RewardGroup } from './sampling.ts';

describe('sequenceAggregationWeights', () => {
  // Three sequences of 2, 0 and 4 policy tokens: 6 tokens, 2 non-empty sequences.
  const counts = [2, 0, 4];
  it("'token': 1/N_tokens on every non-empty sequence", () => {
    expect(Array.from(sequenceAggregationWeights(counts, 'token', 10))).toEqual([1 / 6, 0, 1 / 6]);
  });
  it("'sequence': 1/(len · non-empty sequences)", () => {
    expect(Array.from(sequenceAggregationWeights(counts, 'sequence', 10))).toEqual([1 / 4, 0, 1 / 8]);
  });
  it("'constant': 1/(B · L), B counting every sequence", () => {
    expect(Array.from(sequenceAggregationWeights(counts, 'constant', 10))).toEqual([1 / 30, 0, 1 / 30]);
  });
  it('all zero without policy tokens; a constant length ≤ 0 is refused', () => {
    expect(Array.from(sequenceAggregationWeights([0, 0], 'token', 1))).toEqual([0, 0]);
    expect(() => sequenceAggregationWeights([1], 'constant', 0)).toThrow(RangeError);
  });
  it('is what aggregationWeightsOf spreads over a padded batch', () => {
    const mask = Float32Array.from([1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1]);
    const w = aggregationWeightsOf(paddedLayout(3, 4, mask), { aggregation: 'sequence', aggregationLen: null });
    expect(Array.from(w)).toEqual([1 / 4, 1 / 4, 0, 0, 0, 0, 0, 0, 1 / 8, 1 / 8, 1 / 8, 1 / 8]);
  });
});

describe('klPenalizeSteps', () => {
  it('k1: each step loses β·(log μ − log π_ref), and so does the total', () => {
    const r = { perStep: Float64Array.from([0, 1]), total: 1 };
    // log μ − log π_ref = −0.5 − (−1) = 0.5 and −2 − (−1) = −1; β = 0.1
    klPenalizeSteps(r, [-0.5, -2], [-1, -1], 0.1, 'k1');
    expect(r.perStep[0]).toBeCloseTo(-0.05, 12);
    expect(r.perStep[1]).toBeCloseTo(1.1, 12);
    expect(r.total).toBeCloseTo(1.05, 12);
  });
  it('k3: ρ − 1 − log ρ with ρ = π_ref/μ (≥ 0), the same function as the loss term', () => {
    const r = { perStep: Float64Array.from([0.5]), total: 0.5 };
    klPenalizeSteps(r, [-0.5], [-1], 2, 'k3');
    const k3 = Math.exp(-0.5) - 1 + 0.5;
    expect(k3).toBeCloseTo(klK3(-0.5, -1), 15);
    expect(r.perStep[0]).toBeCloseTo(0.5 - 2 * k3, 12);
    expect(r.total).toBeCloseTo(0.5 - 2 * k3, 12);
    expect(klK1(-0.5, -1)).toBe(0.5);
  });
  it('refuses log-probs of another length than the rewards', () => {
    expect(() => klPenalizeSteps({ perStep: new Float64Array(2), total: 0 }, [0], [0], 1, 'k1')).toThrow(RangeError);
  });
});

describe('sampleWithDynamicSampling', () => {
  const g = (...rewards: number[]): RewardGroup => ({ rewards });
  const cfg = { enabled: true, maxRounds: 3, spreadTol: 1e-9 };

  it('drops zero-spread groups and asks for the missing ones until the batch is full', async () => {
    const asked: [number, number][] = [];
    const rounds = [[g(1, 1), g(0, 1), g(0, 0)], [g(1, 0), g(2, 2)], [g(0, 3)]];
    const r = await sampleWithDynamicSampling(async (round, need) => {
      asked.push([round, need]);
      return rounds[round];
    }, 3, cfg);
    expect(asked).toEqual([[0, 3], [1, 2], [2, 1]]);
    expect(r.batch.map((x) => Array.from(x.rewards))).toEqual([[0, 1], [1, 0], [0, 3]]);
    expect(r.state.rounds).toBe(3);
    expect(r.state.droppedGroups).toBe(3);
  });

  it('stops at the round cap with what it has (maybe nothing)', async () => {
    const r = await sampleWithDynamicSampling(async () => [g(1, 1)], 2, { ...cfg, maxRounds: 2 });
    expect(r.batch).toEqual([]);
    expect(r.state.rounds).toBe(2);
  });

  it('disabled: one round, every group kept', async () => {
    let calls = 0;
    const r = await sampleWithDynamicSampling(async () => (calls++, [g(1, 1), g(0, 1)]), 2, { ...cfg, enabled: false });
    expect(calls).toBe(1);
    expect(r.batch.length).toBe(2);
  });
});
