import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseSeeds, parseSet, runFolder, summarizeSweep, sweepConfigs } from './sweep.ts';
import { loadRunConfig, readRunConfigJson } from './presets.ts';

const base = () => loadRunConfig('grid-empty-8x8-grpo') as unknown as Record<string, unknown>;

describe('npm run sweep: arguments', () => {
  it('seeds: ranges, lists and both; bad ones named', () => {
    expect(parseSeeds('1-4')).toEqual([1, 2, 3, 4]);
    expect(parseSeeds('1-3,9,2')).toEqual([1, 2, 3, 9]);
    expect(() => parseSeeds('4-1')).toThrow(/runs backwards/);
    expect(() => parseSeeds('one')).toThrow(/neither a seed/);
  });

  it('--set: JSON values where they parse, strings otherwise; paths checked', () => {
    expect(parseSet('algo.lr=1e-3,3e-3')).toEqual({ path: 'algo.lr', values: [0.001, 0.003] });
    expect(parseSet('algo.algo=grpo,rloo')).toEqual({ path: 'algo.algo', values: ['grpo', 'rloo'] });
    expect(parseSet('algo.tis.enabled=true,false').values).toEqual([true, false]);
    expect(() => parseSet('algo.lr')).toThrow(/expected path=v1,v2/);
    expect(() => parseSet('__proto__.x=1')).toThrow(/not a config field path/);
    expect(() => parseSet('algo.lr=1,1')).toThrow(/listed twice/);
  });

  it('every combination is a validated config, named after what it varies; all problems at once', () => {
    const cs = sweepConfigs(base(), [parseSet('algo.lr=1e-3,3e-3'), parseSet('algo.groupSize=4,8')], 'grid-empty-8x8-grpo');
    expect(cs.map((c) => c.name)).toEqual(['lr=0.001 · groupSize=4', 'lr=0.001 · groupSize=8', 'lr=0.003 · groupSize=4', 'lr=0.003 · groupSize=8']);
    expect((cs[3].config.algo as { lr: number; groupSize: number }).groupSize).toBe(8);
    expect(runFolder(cs[0].name, 2)).toBe('lr=0.001_groupSize=4_seed2');
    expect(() => sweepConfigs(base(), [parseSet('algo.lr=-1,abc')], 'x')).toThrow(/2 problem\(s\)[\s\S]*lr=-1: [\s\S]*lr=abc: /);
  });

  it('varying algo.algo gives each algorithm its own defaults (the config as written is overridden, not the parsed one)', () => {
    const raw = readRunConfigJson('grid-empty-8x8-grpo').json as Record<string, unknown>;
    const cs = sweepConfigs(raw, [parseSet('algo.algo=grpo,rloo,ppo')], 'g');
    const algo = (i: number) => cs[i].config.algo as { normalizeStd: boolean; lr: number; epochs: number };
    expect(cs.map((c) => c.name)).toEqual(['algo=grpo', 'algo=rloo', 'algo=ppo']);
    expect([algo(0).normalizeStd, algo(1).normalizeStd, algo(2).normalizeStd]).toEqual([true, false, false]);
    expect(algo(2).lr).toBe(0.001);
    // The parsed base carries grpo's std division into rloo, which refuses it.
    expect(() => sweepConfigs(base(), [parseSet('algo.algo=grpo,rloo')], 'g')).toThrow(/rloo: algo\.normalizeStd/);
  });

  it('summary: per-config IQM and mean with intervals, and P(X > Y) for each ordered pair', () => {
    const cs = sweepConfigs(base(), [parseSet('algo.lr=1e-3,3e-3')], 'g');
    const results = [0.9, 0.8, 1.0, 0.2, 0.3, 0.1].map((score, i) => ({ config: cs[i < 3 ? 0 : 1].name, seed: (i % 3) + 1, folder: '', exit: 0, wallS: 1, score }));
    const s = summarizeSweep(cs, results, 'episode/success_rate');
    expect(s.configs.map((c) => c.runs)).toEqual([3, 3]);
    expect(s.configs[0].iqm.value).toBeCloseTo(0.9, 12);
    expect(s.improvement).toHaveLength(2);
    expect(s.improvement[0]).toMatchObject({ x: 'lr=0.001', y: 'lr=0.003', p: { value: 1 } });
    expect(s.improvement[1].p.value).toBe(0);
  });
});

describe('npm run sweep: a real sweep', () => {
  it('runs 2 configs × 2 seeds two at a time, one folder per run, and prints the JSON summary last', { timeout: 300_000 }, () => {
    const out = join(mkdtempSync(join(tmpdir(), 'sweep-')), 's');
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/sweep.ts', '--config', 'grid-empty-8x8-grpo', '--seeds', '1-2', '--set', 'algo.lr=1e-3,3e-3', '--iterations', '2', '--parallel', '2', '--out', out, '--json'], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout.trim().split('\n').pop()!) as { sweep: { runs: number; finished: number; parallel: number }; configs: { name: string; runs: number; iqm: { value: number; lo: number; hi: number } }[]; improvement: unknown[] };
    expect(report.sweep).toMatchObject({ runs: 4, finished: 4, parallel: 2 });
    expect(report.configs.map((c) => [c.name, c.runs])).toEqual([['lr=0.001', 2], ['lr=0.003', 2]]);
    for (const c of report.configs) expect(c.iqm.lo).toBeLessThanOrEqual(c.iqm.value);
    expect(report.improvement).toHaveLength(2);
    for (const f of ['lr=0.001_seed1', 'lr=0.001_seed2', 'lr=0.003_seed1', 'lr=0.003_seed2']) {
      expect(existsSync(join(out, f, 'metrics.jsonl'))).toBe(true);
      expect(readFileSync(join(out, f, 'metrics.jsonl'), 'utf8').trim().split('\n')).toHaveLength(2);
    }
    expect(JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'))).toMatchObject({ sweep: { runs: 4 } });
    expect(r.stdout).toMatch(/P\(lr=0\.001 > lr=0\.003\) = /);
  });
});
