import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { creditRuns, parseSeeds, parseSet, runFolder, summarizeSweep, sweepConfigs } from './sweep.ts';
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
    expect(runFolder(cs[0].key, 2)).toMatch(/^lr=0\.001_groupSize=4-[0-9a-f]{8}_seed2$/);
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
    const results = [0.9, 0.8, 1.0, 0.2, 0.3, 0.1].map((score, i) => ({ config: cs[i < 3 ? 0 : 1].name, key: cs[i < 3 ? 0 : 1].key, seed: (i % 3) + 1, folder: '', exit: 0, wallS: 1, score }));
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
    const folders = (report as unknown as { runs: { folder: string }[] }).runs.map((r) => r.folder.replace(/^.*\//, '')).sort();
    expect(folders.map((f) => f.replace(/-[0-9a-f]{8}_/, '_'))).toEqual(['lr=0.001_seed1', 'lr=0.001_seed2', 'lr=0.003_seed1', 'lr=0.003_seed2']);
    for (const f of folders) {
      expect(existsSync(join(out, f, 'metrics.jsonl'))).toBe(true);
      expect(readFileSync(join(out, f, 'metrics.jsonl'), 'utf8').trim().split('\n')).toHaveLength(2);
    }
    expect(JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'))).toMatchObject({ sweep: { runs: 4 } });
    expect(r.stdout).toMatch(/P\(lr=0\.001 > lr=0\.003\) = /);
  });

  it('values the folder name folds together (maps differing in # vs ~) get their own folders and config files, and each is credited from its own config.json', { timeout: 300_000 }, () => {
    const dir = mkdtempSync(join(tmpdir(), 'sweep-collide-'));
    const base = { ...(readRunConfigJson('grid-map-grpo-shaped').json as Record<string, unknown>), iterations: 1, rollout: { groups: 2, learnerBatch: 512 } };
    writeFileSync(join(dir, 'base.json'), JSON.stringify(base));
    const walled = '#####/#>.G#/##..#/#####';
    const lava = '#####/#>.G#/#~..#/#####';
    const out = join(dir, 's');
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/sweep.ts', '--config', join(dir, 'base.json'), '--seeds', '1', '--set', `env.kwargs.map=${walled},${lava}`, '--parallel', '1', '--out', out, '--json'], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout.trim().split('\n').pop()!) as { configs: { name: string; key: string; runs: number }[]; runs: { config: string; key: string; folder: string; exit: number }[] };
    expect(report.configs.map((c) => [c.name, c.runs])).toEqual([[`map=${walled}`, 1], [`map=${lava}`, 1]]);
    expect(new Set(report.configs.map((c) => c.key)).size).toBe(2);
    expect(new Set(report.runs.map((x) => x.folder)).size).toBe(2);
    for (const run of report.runs) {
      // The run trained the map it is listed under: its own config.json says so.
      const own = JSON.parse(readFileSync(join(run.folder, 'config.json'), 'utf8')) as { env: { kwargs: { map: string } } };
      expect(run.config).toBe(`map=${own.env.kwargs.map}`);
      expect(JSON.parse(readFileSync(join(out, 'configs', `${run.key}.json`), 'utf8')).env.kwargs.map).toBe(own.env.kwargs.map);
    }
  });
});

describe('npm run sweep: credit from each run\'s own config.json', () => {
  it('a run is credited to the config its config.json holds; one that matches none is left out, named', () => {
    const cs = sweepConfigs(base(), [parseSet('algo.lr=1e-3,3e-3')], 'g');
    const job = (i: number, folder: string) => ({ config: cs[i].name, key: cs[i].key, seed: 1, folder, exit: 0, wallS: 1, score: 0.5 });
    const files: Record<string, unknown> = { a: { ...cs[1].config, seed: 1, iterations: 3 }, b: { ...cs[1].config, algo: { ...(cs[1].config.algo as object), lr: 0.5 } }, c: null };
    const { results, problems } = creditRuns(cs, [job(0, 'a'), job(1, 'b'), job(0, 'c')], (f) => files[f]);
    expect(results.map((x) => [x.folder, x.config])).toEqual([['a', 'lr=0.003'], ['c', 'lr=0.001']]);
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/a was queued as lr=0\.001 but its config\.json is lr=0\.003's/);
    expect(problems[1]).toMatch(/b\/config\.json matches none/);
  });
});
