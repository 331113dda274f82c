import { describe, expect, it } from 'vitest';
import { configKeys, isFieldPath, KEY_NAME_CHARS, parseValues, runFolder, sweepConfigs, sweepJobs, sweepRunName, type SweepConfig } from './sweep.ts';
import '../envs/index.ts';

describe("a sweep's grid and names (shared by npm run sweep and the tab)", () => {
  it('values: JSON where they parse, strings as written; empty and repeated values refused', () => {
    expect(parseValues('algo.lr', ' 1e-3 , 3e-3')).toEqual([0.001, 0.003]);
    expect(parseValues('algo.algo', 'grpo, rloo')).toEqual(['grpo', 'rloo']);
    expect(() => parseValues('algo.lr', '1e-3,,3e-3')).toThrow(/algo\.lr: an empty value/);
    expect(() => parseValues('algo.lr', '0.001, 1e-3')).toThrow(/listed twice/);
    // Infinity would be named lr=null (JSON writes it so): the value as written is named instead.
    expect(() => parseValues('algo.lr', '1e-3, 1e400')).toThrow(/^algo\.lr: 1e400 is too large for a number/);
    expect([isFieldPath('algo.lr'), isFieldPath('algo..lr'), isFieldPath('constructor.x')]).toEqual([true, false, false]);
  });

  it('every config on every seed, configs outer; names and folders agree', () => {
    const configs: SweepConfig[] = [
      { name: 'lr=0.001', key: 'k1', values: {}, config: { seed: 0, x: 1 } },
      { name: 'lr=0.003', key: 'k3', values: {}, config: { seed: 0, x: 2 } },
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
    expect(jobs.map((j) => j.configKey)).toEqual(['k1', 'k1', 'k3', 'k3']);
    expect(runFolder('lr=0.003_groupSize=4-0a1b2c3d', 2)).toBe('lr=0.003_groupSize=4-0a1b2c3d_seed2');
  });

  it('keys never collide where names fold together: * vs / in code, # vs ~ in a map, 1 vs "1"; long values are cut', () => {
    const keys = configKeys([
      { name: 'code=a*b', values: { 'reward.code': 'a*b' } },
      { name: 'code=a/b', values: { 'reward.code': 'a/b' } },
      { name: 'map=#.G', values: { 'env.kwargs.map': '#.G' } },
      { name: 'map=~.G', values: { 'env.kwargs.map': '~.G' } },
      { name: 'x=1', values: { x: 1 } },
      { name: 'x=1', values: { x: '1' } },
      { name: `map=${'#'.repeat(700)}`, values: { 'env.kwargs.map': '#'.repeat(700) } },
    ]);
    expect(new Set(keys).size).toBe(keys.length);
    // The readable part still reads as the value does, made folder-safe.
    expect(keys[0]).toMatch(/^code=a-b-[0-9a-f]{8}$/);
    expect(keys[1]).toMatch(/^code=a-b-[0-9a-f]{8}$/);
    for (const k of keys) expect(k).toMatch(/^[\w.=+-]+$/);
    expect(keys[6].length).toBe(KEY_NAME_CHARS + 9);
    // The same values give the same key (a rerun's folders line up).
    expect(configKeys([{ name: 'code=a*b', values: { 'reward.code': 'a*b' } }])[0]).toBe(keys[0]);
  });

  it('sweepConfigs: each config its key; a sweep of no field keeps its bare name', () => {
    const base = { id: 'g', env: { id: 'grid/custom' }, model: { kind: 'mlp' }, algo: { algo: 'grpo' } };
    const cs = sweepConfigs(base, [{ path: 'env.kwargs.map', values: ['#####/#>.G#/##..#/#####', '#####/#>.G#/#~..#/#####'] }], 'g');
    expect(cs.map((c) => c.name)).toEqual(['map=#####/#>.G#/##..#/#####', 'map=#####/#>.G#/#~..#/#####']);
    expect(cs[0].key).not.toBe(cs[1].key);
    expect(sweepJobs(cs, [1]).map((j) => j.configKey)).toEqual(cs.map((c) => c.key));
    expect(sweepConfigs(base, [], 'grid-map-grpo-shaped')[0].key).toBe('grid-map-grpo-shaped');
  });
});
