import { describe, expect, it } from 'vitest';
import { addSamplingRound, groupStats, hasSpread, initDynamicSampling, samplingStats, splitGroups, type DynamicSamplingConfig } from './sampling.ts';

const on: DynamicSamplingConfig = { enabled: true, maxRounds: 3, spreadTol: 1e-9 };
const g = (...rewards: number[]) => ({ rewards });

describe('group statistics', () => {
  it('frac_zero_std and reward_std_mean', () => {
    // Groups [1,1] (std 0), [0,1] (sample std √0.5 = 0.7071068), [0,0] (0).
    // frac_zero_std = 2/3; reward_std_mean = 0.7071068/3 = 0.2357023.
    const s = groupStats(splitGroups([1, 1, 0, 1, 0, 0], 2));
    expect(s.nGroups).toBe(3);
    expect(s.zeroStdGroups).toBe(2);
    expect(s.fracZeroStd).toBeCloseTo(2 / 3, 12);
    expect(s.rewardStdMean).toBeCloseTo(0.2357023, 7);
  });

  it('spread tolerance absorbs float noise', () => {
    expect(hasSpread([0.1 + 0.2, 0.3])).toBe(true); // 5.6e-17 apart: a strict check sees spread
    expect(hasSpread([0.1 + 0.2, 0.3], 1e-9)).toBe(false);
    expect(() => splitGroups([1, 2, 3], 2)).toThrow(/groups of 2/);
  });
});

describe('dynamic sampling', () => {
  it('drops zero-spread groups and samples again until the batch is full', () => {
    // Round 1: [1,1] dropped, [0,1] kept, [0,0] dropped -> 1 of 2, continue, need 1.
    const r1 = addSamplingRound(initDynamicSampling(), [g(1, 1), g(0, 1), g(0, 0)], 2, on);
    expect(r1.decision).toBe('continue');
    expect(r1.needGroups).toBe(1);
    expect(r1.state.droppedGroups).toBe(2);
    // Round 2: [1,0] kept, [0.5,0.5] dropped -> full with [0,1], [1,0].
    const r2 = addSamplingRound(r1.state, [g(1, 0), g(0.5, 0.5)], 2, on);
    expect(r2.decision).toBe('full');
    expect(r2.batch!.map((x) => x.rewards)).toEqual([[0, 1], [1, 0]]);
    expect(r2.state.droppedGroups).toBe(3);
    expect(r2.state.rounds).toBe(2);
    // Over all 5 sampled groups: 3 with zero spread -> 0.6; stds 0, .7071068, 0, .7071068, 0 -> 0.2828427.
    const s = samplingStats(r2.state);
    expect(s.fracZeroStd).toBeCloseTo(0.6, 12);
    expect(s.rewardStdMean).toBeCloseTo(0.2828427, 7);
  });

  it('stops at the round cap with a partial (here empty) batch', () => {
    const cfg = { ...on, maxRounds: 2 };
    const r1 = addSamplingRound(initDynamicSampling(), [g(1, 1)], 1, cfg);
    expect(r1.decision).toBe('continue');
    const r2 = addSamplingRound(r1.state, [g(0, 0)], 1, cfg);
    expect(r2.decision).toBe('cap');
    expect(r2.batch).toEqual([]);
    expect(r2.needGroups).toBe(1);
  });

  it('discards surplus groups beyond the target', () => {
    const r = addSamplingRound(initDynamicSampling(), [g(0, 1), g(1, 0), g(1, 1)], 1, on);
    expect(r.decision).toBe('full');
    expect(r.batch!.map((x) => x.rewards)).toEqual([[0, 1]]);
    expect(r.surplusGroups).toBe(1);
  });

  it('disabled: keeps zero-spread groups and never asks for another round', () => {
    const off = { ...on, enabled: false };
    const r = addSamplingRound(initDynamicSampling(), [g(1, 1), g(0, 1)], 2, off);
    expect(r.decision).toBe('full');
    expect(r.batch!.length).toBe(2);
    expect(r.state.droppedGroups).toBe(0);
    expect(samplingStats(r.state).fracZeroStd).toBe(0.5);
    expect(addSamplingRound(initDynamicSampling(), [g(0, 1)], 2, off).decision).toBe('cap');
  });
});
