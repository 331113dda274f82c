import { describe, expect, it } from 'vitest';
import { isFieldPath, parseValues, runFolder, sweepJobs, sweepRunName, type SweepConfig } from './sweep.ts';

describe("a sweep's grid and names (shared by npm run sweep and the tab)", () => {
  it('values: JSON where they parse, strings as written; empty and repeated values refused', () => {
    expect(parseValues('algo.lr', ' 1e-3 , 3e-3')).toEqual([0.001, 0.003]);
    expect(parseValues('algo.algo', 'grpo, rloo')).toEqual(['grpo', 'rloo']);
    expect(() => parseValues('algo.lr', '1e-3,,3e-3')).toThrow(/algo\.lr: an empty value/);
    expect(() => parseValues('algo.lr', '0.001, 1e-3')).toThrow(/listed twice/);
    expect([isFieldPath('algo.lr'), isFieldPath('algo..lr'), isFieldPath('constructor.x')]).toEqual([true, false, false]);
  });

  it('every config on every seed, configs outer; names and folders agree', () => {
    const configs: SweepConfig[] = [
      { name: 'lr=0.001', values: {}, config: { seed: 0, x: 1 } },
      { name: 'lr=0.003', values: {}, config: { seed: 0, x: 2 } },
    ];
    const jobs = sweepJobs(configs, [2, 5]);
    expect(jobs.map((j) => [j.name, j.config.seed, j.config.x])).toEqual([
      ['lr=0.001 · seed 2', 2, 1],
      ['lr=0.001 · seed 5', 5, 1],
      ['lr=0.003 · seed 2', 2, 2],
      ['lr=0.003 · seed 5', 5, 2],
    ]);
    expect(configs[0].config.seed).toBe(0);
    expect(sweepRunName('lr=0.003 · groupSize=4', 2)).toBe('lr=0.003 · groupSize=4 · seed 2');
    expect(runFolder('lr=0.003 · groupSize=4', 2)).toBe('lr=0.003_groupSize=4_seed2');
  });
});
