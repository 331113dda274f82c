/** RewardScoring under a progressive schedule: live weight edits and the stage step. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_SHAPING, type ShapingSchedule } from '../reward/shaping.ts';
import { RewardScoring } from './rewards.ts';

const schedule: ShapingSchedule = {
  stages: [
    { name: 'early', weights: { progress: 0.7, outcome: 0.3 }, advance: { afterIterations: 2 } },
    { name: 'late', weights: { progress: 0, outcome: 1 } },
  ],
};

describe('RewardScoring with a schedule', () => {
  it('a live edit made while an iteration runs holds from the next iteration on, as a checkpoint taken then resumes', () => {
    const r = new RewardScoring(DEFAULT_SHAPING, schedule, false);
    expect([r.weights.progress, r.weights.outcome, r.weights.length]).toEqual([0.7, 0.3, DEFAULT_SHAPING.length.weight]);
    r.begin();
    // Mid-iteration: the person raises the length penalty's weight (a term no stage sets).
    r.setWeights({ length: 0.25 });
    const m: Record<string, number> = { 'episode/success_rate': 0 };
    r.advance(m);
    expect(m['schedule/stage']).toBe(0);
    expect([r.weights.progress, r.weights.outcome, r.weights.length]).toEqual([0.7, 0.3, 0.25]);
    // A run resumed from a checkpoint taken now shapes its next iteration the same way.
    const resumed = new RewardScoring(DEFAULT_SHAPING, schedule, false);
    resumed.prepareRestore({ ...r.checkpoint() } as Parameters<RewardScoring['prepareRestore']>[0], 'test')();
    expect(resumed.weights).toEqual(r.weights);
    // The stage change keeps the edit too.
    r.advance({ 'episode/success_rate': 0 });
    expect([r.weights.progress, r.weights.outcome, r.weights.length]).toEqual([0, 1, 0.25]);
  });
});
