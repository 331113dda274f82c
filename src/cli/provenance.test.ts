/**
 * Reward provenance across the browser and the CLI: a run whose reward code changed mid-run
 * (what the reward lab's Apply records as live edits) is exported as a run file, resumed by the
 * CLI with the version in force at its checkpoint, and its folder imports back with every
 * version; a run whose code is gone is refused, never trained without it.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { main } from './train.ts';
import { parseCliFolder, runToFile, type RunData } from '../core/runs/format.ts';
import { rewardCodeHash, rewardVersions } from '../core/reward/versions.ts';

const V1 = 'export const stepCost = (step) => -0.01;\n';
const V2 = 'export const stepCost = (step) => -0.1;\n';
const V3 = 'export const stepCost = (step) => -1;\n';

/** A small grid run: 2 groups of 8 episodes, so 4 iterations take seconds. */
const SMALL = { id: 'provenance', env: { id: 'grid/empty-8x8' }, model: { kind: 'mlp', hidden: [16], activation: 'tanh' }, algo: { algo: 'grpo', groupSize: 8, lr: 0.001 }, rollout: { groups: 2, learnerBatch: 128 }, seed: 3 };

const folder = (dir: string) => readdirSync(dir).map((f) => ({ name: f, text: readFileSync(join(dir, f), 'utf8') }));
const rowsOf = (dir: string) =>
  readFileSync(join(dir, 'metrics.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, number>);

describe('reward provenance: browser run file → CLI resume → import back', () => {
  it('the CLI resumes with the version in force at the checkpoint, numbered as before, and its folder lists every version', { timeout: 180_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'provenance-'));
    const cfg = join(dir, 'small.json');
    writeFileSync(cfg, JSON.stringify(SMALL));
    const rewardFile = join(dir, 'v1.js');
    writeFileSync(rewardFile, V1);
    // Two iterations with v1, checkpoint at 2: the run as a browser would have recorded it so far.
    const a = join(dir, 'a');
    expect(await main(['--config', cfg, '--reward', rewardFile, '--iterations', '2', '--out', a, '--quiet'])).toBe(0);
    expect(JSON.parse(readFileSync(join(a, 'reward-versions.json'), 'utf8'))).toEqual([{ version: 1, iteration: 0, code: V1 }]);
    const recorded = parseCliFolder(folder(a), 'browser run');
    if (!recorded.ok) throw new Error(recorded.messages.join('\n'));
    // v2 applied at the checkpoint (it scores iteration 2 on); v3 came later, past the checkpoint,
    // so its rows are trained again and it is not part of the resumed run.
    const run: RunData = { ...recorded.run, info: { ...recorded.run.info, source: 'browser', liveEdits: [{ iteration: 2, path: 'reward.code', value: V2 }, { iteration: 3, path: 'reward.code', value: V3 }] } };
    const file = join(dir, 'browser.run.json');
    writeFileSync(file, runToFile(run));
    expect(JSON.parse(readFileSync(file, 'utf8')).rewardCode.map((v: { version: number }) => v.version)).toEqual([1, 2, 3]);

    const b = join(dir, 'b');
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    try {
      expect(await main(['--resume', file, '--iterations', '4', '--out', b, '--quiet'])).toBe(0);
      const printed = log.mock.calls.map((c) => String(c[0])).join('\n');
      expect(printed).toContain(`reward code ${await rewardCodeHash(V2)} (v2 of 2, in force since iteration 2;`);
    } finally {
      log.mockRestore();
    }
    const rows = rowsOf(b);
    expect(rows.map((r) => r.iteration)).toEqual([0, 1, 2, 3]);
    expect(rows.map((r) => r['reward/version'])).toEqual([1, 1, 2, 2]);
    // The term pays -0.01 per step under v1 and -0.1 under v2: its mean over episodes is that
    // times the mean episode length.
    for (const r of rows) {
      const perStep = r['reward/stepCost/mean'] / r['episode/length_mean'];
      expect(perStep).toBeCloseTo(r['reward/version'] === 1 ? -0.01 : -0.1, 6);
    }
    expect(JSON.parse(readFileSync(join(b, 'reward-versions.json'), 'utf8'))).toEqual([
      { version: 1, iteration: 0, code: V1 },
      { version: 2, iteration: 2, code: V2 },
    ]);
    // config.json keeps the code the run started with; the versions file the rest; policy.json
    // names the code the exported policy was last trained with.
    expect(JSON.parse(readFileSync(join(b, 'config.json'), 'utf8')).reward.code).toBe(V1);
    expect(JSON.parse(readFileSync(join(b, 'policy.json'), 'utf8'))).toMatchObject({ iteration: 4, rewardCodeHash: await rewardCodeHash(V2), onnx: { inputs: [{ name: 'obs', shape: [1, 984] }] } });

    // The folder imports back into the browser with both versions where they took effect.
    const back = parseCliFolder(folder(b), null);
    if (!back.ok) throw new Error(back.messages.join('\n'));
    expect(rewardVersions(back.run.config.reward.code, back.run.info.liveEdits)).toEqual([
      { version: 1, iteration: 0, code: V1 },
      { version: 2, iteration: 2, code: V2 },
    ]);
    expect(back.run.metrics.map((r) => r['reward/version'])).toEqual([1, 1, 2, 2]);

    // The folder resumes in place with v2 still in force.
    expect(await main(['--resume', b, '--iterations', '5', '--quiet'])).toBe(0);
    expect(rowsOf(b).map((r) => r['reward/version'])).toEqual([1, 1, 2, 2, 2]);

    // checkpoint.json carries every version in force up to it, with the iteration it took effect;
    // a folder that lost everything else but config.json (which holds only v1) resumes with v2.
    const cp = JSON.parse(readFileSync(join(b, 'checkpoint.json'), 'utf8')) as { iteration: number; rewardCode: unknown };
    expect(cp.iteration).toBe(5);
    expect(cp.rewardCode).toEqual([
      { version: 1, iteration: 0, code: V1 },
      { version: 2, iteration: 2, code: V2 },
    ]);
    const c = join(dir, 'c');
    mkdirSync(c);
    for (const f of ['config.json', 'checkpoint.json']) copyFileSync(join(b, f), join(c, f));
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      expect(await main(['--resume', c, '--iterations', '7', '--quiet'])).toBe(0);
      expect(warn.mock.calls.map((x) => String(x[0])).join('\n')).toMatch(/rows of iterations 0–4 are lost/);
    } finally {
      warn.mockRestore();
    }
    const resumed = rowsOf(c);
    expect(resumed.map((r) => [r.iteration, r['reward/version']])).toEqual([
      [5, 2],
      [6, 2],
    ]);
    for (const r of resumed) expect(r['reward/stepCost/mean'] / r['episode/length_mean']).toBeCloseTo(-0.1, 6);
    expect(JSON.parse(readFileSync(join(c, 'reward-versions.json'), 'utf8'))).toEqual(cp.rewardCode);
  });

  it('a run file whose rows were scored by code it no longer carries is refused, and nothing is written', { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'provenance-lost-'));
    const cfg = join(dir, 'small.json');
    writeFileSync(cfg, JSON.stringify(SMALL));
    const rewardFile = join(dir, 'v1.js');
    writeFileSync(rewardFile, V1);
    const a = join(dir, 'a');
    expect(await main(['--config', cfg, '--reward', rewardFile, '--iterations', '2', '--out', a, '--quiet'])).toBe(0);
    const recorded = parseCliFolder(folder(a), null);
    if (!recorded.ok) throw new Error(recorded.messages.join('\n'));
    // What older exports did: the code lived elsewhere and the file carried none of it. A CLI
    // checkpoint now carries the versions, so the run still resumes with v1...
    const noCode = { ...recorded.run, config: { ...recorded.run.config, reward: { ...recorded.run.config.reward, code: '' } } };
    expect(recorded.run.checkpoint?.rewardCode).toEqual([{ version: 1, iteration: 0, code: V1 }]);
    const saved = join(dir, 'saved.run.json');
    writeFileSync(saved, runToFile(noCode));
    const kept = join(dir, 'kept');
    expect(await main(['--resume', saved, '--iterations', '3', '--out', kept, '--quiet'])).toBe(0);
    expect(rowsOf(kept).map((r) => r['reward/version'])).toEqual([1, 1, 1]);
    // ...and is refused only when its checkpoint carries none either (written before they were kept).
    const lost = { ...noCode, checkpoint: { ...recorded.run.checkpoint!, rewardCode: undefined } };
    const file = join(dir, 'lost.run.json');
    writeFileSync(file, runToFile(lost));
    const out = join(dir, 'never');
    await expect(main(['--resume', file, '--iterations', '4', '--out', out, '--quiet'])).rejects.toThrow(
      /lost\.run\.json: iteration 0 was scored by reward code v1, but the run carries no code for v1 \(it carries none at all\); resuming would train without it/,
    );
    expect(existsSync(out)).toBe(false);
  });
});
