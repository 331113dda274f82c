import { describe, expect, it } from 'vitest';
import { parseRunConfig, type RunConfig } from '../presets/schema.ts';
import '../envs/index.ts';
import {
  configDiff,
  metricsToCsv,
  metricsToJsonl,
  parseCliFolder,
  parseImport,
  parseRunFile,
  runToFile,
  seedGroupKey,
  statusText,
  trajectoriesToJsonl,
  type MetricRow,
  type RunData,
  type TrajectoryLine,
} from './format.ts';

import { CHECKPOINT_FORMAT, CHECKPOINT_VERSION, checkpointToJson, type Checkpoint } from './checkpoint.ts';
import presetJson from '../../../presets/grid-empty-8x8-grpo.json';
import { rewardVersions } from '../reward/versions.ts';

const preset = structuredClone(presetJson) as typeof presetJson & Record<string, unknown>;
const config = (over: Record<string, unknown> = {}): RunConfig => {
  const r = parseRunConfig({ ...preset, ...over });
  if (!r.ok) throw new Error(r.messages.join('; '));
  return r.config;
};

const rows: MetricRow[] = [
  { iteration: 0, wall_s: 0.5, 'episode/success_rate': 0.25, 'reward/mean': 0.1, 'actor/kl_ref': NaN } as MetricRow,
  { iteration: 1, wall_s: 1.25, 'episode/success_rate': 0.5, 'reward/mean': 0.3, 'actor/kl_ref': NaN } as MetricRow,
];
const traj: TrajectoryLine = { iteration: 1, env: 'grid/empty-8x8', seed: 7, group: 0, reward: 0.9, advantage: 0.2, env_rewards: [0, 0.9], terminated: true, truncated: false, success: true, actions: [2, 2], logprobs: [-0.1, -0.2], versions: [1, 1] };
const run = (): RunData => ({
  info: { name: 'my run', tags: ['a'], note: 'hi', createdAt: Date.UTC(2026, 0, 2), updatedAt: Date.UTC(2026, 0, 3), status: 'finished', error: null, liveEdits: [{ iteration: 1, path: 'algo.lr', value: 0.002 }], source: 'browser' },
  config: config(),
  metrics: rows,
  trajectories: [traj],
});

describe('export', () => {
  it('CSV: header iteration, wall_s then sorted keys; NaN as empty cells; one line per iteration', () => {
    const csv = metricsToCsv(rows);
    const lines = csv.trim().split('\n');
    expect(lines[0]).toBe('iteration,wall_s,actor/kl_ref,episode/success_rate,reward/mean');
    expect(lines[1]).toBe('0,0.5,,0.25,0.1');
    expect(lines).toHaveLength(3);
    expect(metricsToCsv([{ iteration: 0, wall_s: 0, 'a,b': 1 } as MetricRow]).split('\n')[0]).toBe('iteration,wall_s,"a,b"');
  });

  it('JSONL: the CLI shape, NaN as null', () => {
    const lines = metricsToJsonl(rows).trim().split('\n').map((l) => JSON.parse(l));
    expect(lines[0]).toEqual({ iteration: 0, wall_s: 0.5, 'episode/success_rate': 0.25, 'reward/mean': 0.1, 'actor/kl_ref': null });
    expect(Object.keys(lines[0]).slice(0, 2)).toEqual(['iteration', 'wall_s']);
    expect(JSON.parse(trajectoriesToJsonl([traj]).trim())).toEqual(traj);
  });

  it('a run file round-trips: config, metrics (NaN kept), trajectories, name, tags, note, live edits', () => {
    const text = runToFile(run());
    const f = JSON.parse(text);
    expect(f.format).toBe('agentic-rl-playground/run');
    expect(f.checkpoint).toBeNull();
    expect(f.rewardCode).toBeNull();
    const back = parseRunFile(text);
    if (!back.ok) throw new Error(back.messages.join('\n'));
    expect(back.run.config).toEqual(run().config);
    expect(back.run.metrics[1]['reward/mean']).toBe(0.3);
    expect(back.run.metrics[0]['actor/kl_ref']).toBeNaN();
    expect(back.run.trajectories).toEqual([traj]);
    expect(back.run.info).toMatchObject({ name: 'my run', tags: ['a'], note: 'hi', status: 'finished', createdAt: Date.UTC(2026, 0, 2), source: 'import', liveEdits: [{ iteration: 1, path: 'algo.lr', value: 0.002 }] });
  });
});

describe('a run file records which reward-code version scored which iteration', () => {
  const V1 = 'export const stepCost = (step) => -0.01;\n';
  const V2 = 'export const stepCost = (step) => -0.1;\n';
  it('the start code and reward.code live edits round-trip, and give the same versions back', () => {
    const r = run();
    r.config = config({ reward: { code: V1 } });
    r.info.liveEdits = [{ iteration: 1, path: 'algo.lr', value: 0.002 }, { iteration: 5, path: 'reward.code', value: V2 }];
    const back = parseRunFile(runToFile(r));
    if (!back.ok) throw new Error(back.messages.join('\n'));
    expect(rewardVersions(back.run.config.reward.code, back.run.info.liveEdits)).toEqual([
      { version: 1, iteration: 0, code: V1 },
      { version: 2, iteration: 5, code: V2 },
    ]);
  });

  it("the run file lists every version under rewardCode; a file with only that list (no live edits) gets them back as edits", () => {
    const r = run();
    r.config = config({ reward: { code: V1 } });
    r.info.liveEdits = [{ iteration: 5, path: 'reward.code', value: V2 }];
    const file = JSON.parse(runToFile(r));
    expect(file.rewardCode).toEqual([
      { version: 1, iteration: 0, code: V1 },
      { version: 2, iteration: 5, code: V2 },
    ]);
    file.run.liveEdits = [{ iteration: 1, path: 'algo.lr', value: 0.002 }];
    const back = parseRunFile(JSON.stringify(file));
    if (!back.ok) throw new Error(back.messages.join('\n'));
    expect(back.run.info.liveEdits).toEqual([
      { iteration: 1, path: 'algo.lr', value: 0.002 },
      { iteration: 5, path: 'reward.code', value: V2 },
    ]);
  });

  it('a rewardCode list that disagrees with the live edits, or does not start with the config\'s code, is refused', () => {
    const r = run();
    r.config = config({ reward: { code: V1 } });
    r.info.liveEdits = [{ iteration: 5, path: 'reward.code', value: V2 }];
    const file = JSON.parse(runToFile(r));
    file.rewardCode[1].iteration = 6;
    const a = parseRunFile(JSON.stringify(file), 'x.json');
    expect(a.ok).toBe(false);
    if (!a.ok) expect(a.messages).toEqual(['x.json: rewardCode: disagrees with run.liveEdits\' reward.code edits (which code scored which iteration is ambiguous)']);
    file.rewardCode = [{ version: 1, iteration: 0, code: V2 }];
    file.run.liveEdits = [];
    const b = parseRunFile(JSON.stringify(file), 'x.json');
    expect(b.ok).toBe(false);
    if (!b.ok) expect(b.messages[0]).toMatch(/^x\.json: rewardCode: does not fit config\.reward\.code/);
  });

  it("a CLI folder's reward-versions.json becomes the run's reward.code edits", () => {
    const c = config({ reward: { code: V1 } });
    const files = [
      { name: 'run/config.json', text: JSON.stringify(c) },
      { name: 'run/metrics.jsonl', text: metricsToJsonl(rows) },
      { name: 'run/reward-versions.json', text: JSON.stringify([{ version: 1, iteration: 0, code: V1 }, { version: 2, iteration: 1, code: V2 }]) },
    ];
    const back = parseCliFolder(files, null);
    if (!back.ok) throw new Error(back.messages.join('\n'));
    expect(back.run.info.liveEdits).toEqual([{ iteration: 1, path: 'reward.code', value: V2 }]);
    const bad = parseCliFolder([...files.slice(0, 2), { name: 'reward-versions.json', text: JSON.stringify([{ version: 1, iteration: 0, code: 7 }]) }], null);
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.messages).toEqual([expect.stringMatching(/^reward-versions\.json: \[0\]\.code: /)]);
  });

  it('an older file (no reward section, no live edits) imports with no versions', () => {
    const file = JSON.parse(runToFile(run()));
    delete file.config.reward;
    delete file.run.liveEdits;
    const back = parseRunFile(JSON.stringify(file));
    if (!back.ok) throw new Error(back.messages.join('\n'));
    expect(rewardVersions(back.run.config.reward.code, back.run.info.liveEdits)).toEqual([]);
  });

  it('a reward.code edit that is not text is refused with its field', () => {
    const file = JSON.parse(runToFile(run()));
    file.run.liveEdits = [{ iteration: 2, path: 'reward.code', value: 42 }];
    const back = parseRunFile(JSON.stringify(file), 'x.json');
    expect(back.ok).toBe(false);
    if (!back.ok) expect(back.messages).toEqual([expect.stringMatching(/^x\.json: run\.liveEdits\[0\]\.value: a reward\.code edit's value must be the reward module's text/)]);
  });
});

describe('a run file carries its last checkpoint', () => {
  const cp = (): Checkpoint => ({
    format: CHECKPOINT_FORMAT,
    version: CHECKPOINT_VERSION,
    trainer: 'step',
    iteration: 2,
    policyVersion: 2,
    learner: { updates: 2, tensors: { 'l0.w': Float32Array.of(0.1, -0, 3), 'adam.step': Float32Array.of(2) } },
    hyper: { lr: 0.001 },
    rng: { minibatch: [1, 2, 3, 4294967295] },
    ema: { value: 0, initialized: false },
    schedule: null,
    rewardWeights: { outcome: 1, progress: 0, format: 0, toolCost: 0, length: 0, potential: 0 },
  });

  it('exports the checkpoint and imports it back bit for bit', () => {
    const text = runToFile({ ...run(), checkpoint: cp() });
    expect(JSON.parse(text).checkpoint.learner.tensors['l0.w']).toMatchObject({ dtype: 'float32', length: 3 });
    const back = parseRunFile(text, 'x.run.json');
    if (!back.ok) throw new Error(back.messages.join('\n'));
    expect(back.run.checkpoint?.iteration).toBe(2);
    expect(new Uint32Array(back.run.checkpoint!.learner.tensors['l0.w'].buffer)).toEqual(new Uint32Array(cp().learner.tensors['l0.w'].buffer));
  });

  it('a bad checkpoint in a run file is refused with its field, and nothing is imported', () => {
    const f = JSON.parse(runToFile({ ...run(), checkpoint: cp() }));
    f.checkpoint.learner.tensors['l0.w'].length = 4;
    const r = parseRunFile(JSON.stringify(f), 'x.run.json');
    expect(!r.ok && r.messages.join('\n')).toMatch(/^x\.run\.json: checkpoint\.learner\.tensors\["l0\.w"\]\.base64: holds 3 values, but length says 4$/m);
  });

  it('a CLI folder\'s checkpoint.json is imported with it', () => {
    const files = [
      { name: 'r/config.json', text: JSON.stringify(config()) },
      { name: 'r/metrics.jsonl', text: metricsToJsonl(rows) },
      { name: 'r/checkpoint.json', text: JSON.stringify(checkpointToJson(cp())) },
    ];
    const r = parseImport(files);
    expect(r.ok && r.run.checkpoint?.policyVersion).toBe(2);
    files[2].text = '{"format": 1}';
    const bad = parseImport(files);
    expect(!bad.ok && bad.messages.join('\n')).toMatch(/checkpoint\.json: format: /);
  });
});

describe('import validation names the field', () => {
  const file = () => JSON.parse(runToFile(run()));
  const messages = (v: unknown) => {
    const r = parseRunFile(JSON.stringify(v), 'x.json');
    expect(r.ok).toBe(false);
    return r.ok ? [] : r.messages;
  };

  it('not JSON, wrong format, newer version', () => {
    const r = parseRunFile('{oops', 'x.json');
    expect(!r.ok && r.messages[0]).toMatch(/^x\.json: not valid JSON/);
    expect(messages({ ...file(), format: 'other' })[0]).toMatch(/^x\.json: format: /);
    expect(messages({ ...file(), version: 9 })[0]).toMatch(/version: 9 was written by a newer playground/);
  });

  it('a bad metric, a bad config field, a bad trajectory: each with its path', () => {
    const f = file();
    f.metrics[1].iteration = 'one';
    f.metrics[0]['reward/mean'] = 'high';
    f.config.algo.lr = -1;
    f.trajectories[0].seed = 1.5;
    const m = messages(f);
    expect(m).toContain('x.json: metrics[1].iteration: Invalid input: expected number, received string');
    expect(m).toContain('x.json: metrics[0].reward/mean: expected a number (or null)');
    expect(m.some((s) => s.startsWith('x.json: metrics[0].reward/mean: '))).toBe(true);
    expect(m.some((s) => s.startsWith('x.json: config.algo.lr: '))).toBe(true);
    expect(m.some((s) => s.startsWith('x.json: trajectories[0].seed: '))).toBe(true);
  });

  it('iterations must increase; missing run name; unknown top-level key', () => {
    const f = file();
    f.metrics[1].iteration = 0;
    expect(messages(f)).toContain('x.json: metrics[1].iteration: 0 does not follow 0 (iterations must increase)');
    const g = file();
    delete g.run.name;
    g.extra = 1;
    const m = messages(g);
    expect(m.some((s) => s.startsWith('x.json: run.name: '))).toBe(true);
    expect(m.some((s) => /extra/.test(s))).toBe(true);
  });

  it('caps a flood of problems', () => {
    const f = file();
    f.metrics = Array.from({ length: 100 }, () => ({ iteration: 'x' }));
    const m = messages(f);
    expect(m.length).toBe(13);
    expect(m[12]).toMatch(/and \d+ more problems/);
  });
});

describe('CLI folder import', () => {
  const files = (over: Record<string, string> = {}) =>
    Object.entries({ 'out/config.json': JSON.stringify(config({ iterations: 2 })), 'out/metrics.jsonl': metricsToJsonl(rows), 'out/trajectories.jsonl': trajectoriesToJsonl([traj]), 'out/policy.onnx': '\u0000', ...over }).map(([name, text]) => ({ name, text }));

  it('reads config.json + metrics.jsonl + trajectories.jsonl', () => {
    const r = parseImport(files());
    if (!r.ok) throw new Error(r.messages.join('\n'));
    expect(r.run.info.name).toBe('out');
    expect(r.run.info.status).toBe('finished');
    expect(r.run.metrics).toHaveLength(2);
    expect(r.run.trajectories).toHaveLength(1);
  });

  it('names the file and line of a bad row, and a missing file', () => {
    const bad = parseImport(files({ 'out/metrics.jsonl': metricsToJsonl(rows) + '{"iteration": 2, "reward/mean": "x"}\nnot json\n' }));
    expect(bad.ok).toBe(false);
    if (!bad.ok) {
      expect(bad.messages.some((m) => m.startsWith('metrics.jsonl line 3: reward/mean: '))).toBe(true);
      expect(bad.messages.some((m) => m.startsWith('metrics.jsonl line 4: not valid JSON'))).toBe(true);
    }
    const missing = parseCliFolder([{ name: 'metrics.jsonl', text: '' }], null);
    expect(!missing.ok && missing.messages[0]).toMatch(/^config\.json: missing/);
  });

  it('files picked without their folder are named after the config', () => {
    const r = parseImport(files().map((f) => ({ ...f, name: f.name.replace('out/', '') })));
    expect(r.ok && r.run.info.name).toBe('grid-empty-8x8-grpo · seed 1 (CLI)');
  });

  it('a CLI run stopped early imports as interrupted', () => {
    const r = parseImport(files({ 'out/config.json': JSON.stringify(config({ iterations: 10 })) }));
    expect(r.ok && r.run.info.status).toBe('interrupted');
  });
});

describe('configs', () => {
  it('diff lists only the fields that differ', () => {
    const d = configDiff([config(), config({ seed: 5 }), config({ algo: { ...preset.algo, lr: 0.01 } })]);
    expect(d.map((r) => r.path)).toEqual(['algo.lr', 'seed']);
    expect(d.find((r) => r.path === 'seed')!.values).toEqual([1, 5, 1]);
  });

  it('seeds of one config share a group key; another lr does not', () => {
    expect(seedGroupKey(config({ seed: 3 }))).toBe(seedGroupKey(config({ seed: 4, iterations: 9 })));
    expect(seedGroupKey(config({ seed: 3 }))).not.toBe(seedGroupKey(config({ algo: { ...preset.algo, lr: 0.01 } })));
  });

  it('status text', () => {
    expect(statusText('interrupted', 12)).toBe('interrupted at iteration 12');
    expect(statusText('finished', 40)).toBe('finished');
  });
});
