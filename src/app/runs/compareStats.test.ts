import { describe, expect, it } from 'vitest';
import { loadRunConfig } from '../../cli/presets.ts';
import type { RunConfig } from '../../core/presets/schema.ts';
import { compareStats } from './compareStats.ts';
import type { ChartRun } from './RunCharts.tsx';

const base = loadRunConfig('grid-empty-8x8-grpo');
/** A run whose success is `late` over its last 10 of 100 iterations and 0 before. */
function run(id: string, config: RunConfig, late: number): ChartRun {
  const rows = Array.from({ length: 100 }, (_, i) => ({ iteration: i, wall_s: i, 'episode/success_rate': i >= 90 ? late : 0 }));
  return { id, name: `${config.title ?? 'run'} · seed ${config.seed}`, config, rows };
}
const withLr = (lr: number, seed: number): RunConfig => ({ ...base, seed, algo: { ...base.algo, lr } });

describe("Compare's statistics", () => {
  it('groups seeds of one config, labels configs by the field that differs, scores by the last 10% of iterations', () => {
    const runs = [run('a', withLr(1e-3, 1), 0.9), run('b', withLr(1e-3, 2), 0.7), run('c', withLr(3e-3, 1), 0.2), run('d', withLr(3e-3, 2), 0.4), run('e', withLr(1e-3, 3), 0.8)];
    const s = compareStats(runs, 'episode/success_rate');
    expect(s.groups.map((g) => [g.label, g.summary.runs])).toEqual([['lr=0.001', 3], ['lr=0.003', 2]]);
    s.groups[0].runs.forEach((r, i) => expect(r.score).toBeCloseTo([0.9, 0.7, 0.8][i], 12));
    // IQM of 3 scores drops none (floor(3/4) = 0): the mean.
    expect(s.groups[0].summary.iqm.value).toBeCloseTo(0.8, 12);
    expect(s.groups[1].summary.mean.value).toBeCloseTo(0.3, 12);
    // Every run of lr=0.001 beats every run of lr=0.003.
    expect(s.improvement.find((p) => p.x === 'lr=0.001')!.p).toEqual({ value: 1, lo: 1, hi: 1 });
    // Profile thresholds run from just below the lowest score (0.2 − 0.07) to the highest (0.9).
    expect(s.profile[0].tau).toBeCloseTo(0.13, 12);
    expect(s.profile.at(-1)!.tau).toBeCloseTo(0.9, 12);
    expect(s.profile[0].fractions['lr=0.001'].value).toBe(1);
    expect(s.profile[0].fractions['lr=0.003'].value).toBe(1);
    // τ = 0.27 (the third threshold): lr=0.003's 0.2 is under it, its 0.4 above.
    expect(s.profile[2].tau).toBeCloseTo(0.27, 12);
    expect(s.profile[2].fractions['lr=0.003'].value).toBe(0.5);
  });

  it('one config: labelled by its run name without the seed; no pairs', () => {
    const s = compareStats([run('a', withLr(1e-3, 1), 0.5), run('b', withLr(1e-3, 2), 0.5)], 'episode/success_rate');
    expect(s.groups).toHaveLength(1);
    expect(s.groups[0].label).not.toMatch(/seed/);
    expect(s.improvement).toEqual([]);
  });
});
