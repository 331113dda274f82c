import { describe, expect, it } from 'vitest';
import fixture from './stats.fixture.json';
import { bootstrapInterval, finalScore, fractionAbove, iqm, iqmOf, meanScore, percentile, performanceProfile, probabilityOfImprovement, probabilityOfImprovementInterval, probabilityOfImprovementOne, summarize } from './stats.ts';

// Reference values from numpy and scipy: scripts/statsFixture.py wrote stats.fixture.json.
const column = (x: readonly number[]) => x.map((v) => [v]);

describe('aggregate statistics (rliable definitions, checked against numpy/scipy)', () => {
  it('percentile equals numpy.percentile (linear interpolation)', () => {
    for (const c of fixture.percentile) expect(percentile(c.x, c.q)).toBeCloseTo(c.value, 12);
  });

  it('IQM equals scipy.stats.trim_mean(x, 0.25), including sizes not divisible by 4', () => {
    for (const c of fixture.iqm) expect(iqmOf(c.x)).toBeCloseTo(c.value, 12);
    // By hand: 8 scores drop 2 at each end.
    expect(iqmOf([9, 1, 2, 3, 4, 5, 6, 100])).toBe((3 + 4 + 5 + 6) / 4);
  });

  it('probability of improvement equals the normalised Mann–Whitney U from scipy, averaged over tasks', () => {
    for (const c of fixture.poi) expect(probabilityOfImprovement(c.x, c.y)).toBeCloseTo(c.value, 12);
    // By hand: X = {1, 2}, Y = {1, 0}: pairs (1>1 tie ½, 1>0, 2>1, 2>0) = 3.5 / 4.
    expect(probabilityOfImprovementOne([1, 2], [1, 0])).toBe(3.5 / 4);
    expect(probabilityOfImprovement(column([1, 2]), column([1, 0])) + probabilityOfImprovement(column([1, 0]), column([1, 2]))).toBe(1);
  });

  it('bootstrap intervals of the mean and the IQM agree with a 100,000-replicate numpy bootstrap', () => {
    for (const c of fixture.bootstrap) {
      const m = column(c.x);
      const mean = bootstrapInterval(m, meanScore, { reps: 20000, seed: 3 });
      const q = bootstrapInterval(m, iqm, { reps: 20000, seed: 3 });
      expect(mean.value).toBeCloseTo(c.mean[0], 12);
      expect(q.value).toBeCloseTo(c.iqm[0], 12);
      // Monte-Carlo error of a 2.5th percentile with 20k and 100k replicates: well under 0.01 here.
      expect(Math.abs(mean.lo - c.mean[1])).toBeLessThan(0.01);
      expect(Math.abs(mean.hi - c.mean[2])).toBeLessThan(0.01);
      expect(Math.abs(q.lo - c.iqm[1])).toBeLessThan(0.015);
      expect(Math.abs(q.hi - c.iqm[2])).toBeLessThan(0.015);
    }
  });

  it('bootstrap by hand: two runs scoring 0 and 1 give the interval [0, 1]; one run gives the point', () => {
    // Resampled means are 0, ½, 1 with chances ¼, ½, ¼: both 2.5% tails sit on the ends.
    const two = bootstrapInterval(column([0, 1]), meanScore, { reps: 4000 });
    expect([two.value, two.lo, two.hi]).toEqual([0.5, 0, 1]);
    const one = bootstrapInterval(column([0.7]), meanScore);
    expect([one.value, one.lo, one.hi]).toEqual([0.7, 0.7, 0.7]);
  });

  it('stratified: runs are resampled within each task, never across tasks', () => {
    // Task 0 always scores 0, task 1 always 1: any within-task resample has mean exactly ½.
    const m = [
      [0, 1],
      [0, 1],
      [0, 1],
    ];
    const r = bootstrapInterval(m, meanScore, { reps: 500 });
    expect([r.lo, r.hi]).toEqual([0.5, 0.5]);
  });

  it('is deterministic for a seed, and intervals contain their point estimate', () => {
    const x = column([0.1, 0.4, 0.35, 0.8, 0.9, 0.2]);
    const y = column([0.05, 0.3, 0.1, 0.5, 0.2, 0.15]);
    expect(summarize(x, { seed: 7 })).toEqual(summarize(x, { seed: 7 }));
    const p = probabilityOfImprovementInterval(x, y, { seed: 7 });
    expect(p.value).toBe(probabilityOfImprovement(x, y));
    expect(p.lo).toBeLessThanOrEqual(p.value);
    expect(p.hi).toBeGreaterThanOrEqual(p.value);
    expect(p.value).toBeGreaterThan(0.5);
  });

  it('performance profile: fraction of runs above each threshold, falling with it', () => {
    const m = column([0.1, 0.5, 0.5, 0.9]);
    expect(fractionAbove(m, 0.5)).toBe(0.25);
    const prof = performanceProfile(m, [0, 0.3, 0.6, 1], { reps: 200 });
    expect(prof.map((p) => p.fraction.value)).toEqual([1, 0.75, 0.25, 0]);
  });

  it('a run\'s final score is the mean of its last 10% of iterations, ignoring missing values', () => {
    const rows = Array.from({ length: 20 }, (_, i) => ({ 'episode/success_rate': i < 18 ? 0 : 1 }));
    expect(finalScore(rows, 'episode/success_rate')).toBe(1);
    expect(finalScore([...rows, { other: 1 }], 'episode/success_rate')).toBe(1);
    expect(finalScore(rows.slice(0, 5), 'episode/success_rate')).toBe(0);
    expect(Number.isNaN(finalScore([], 'x'))).toBe(true);
  });
});
