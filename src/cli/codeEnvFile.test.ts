import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { main } from './train.ts';

const ROOM = readFileSync(new URL('../../examples/envs/empty-room.js', import.meta.url), 'utf8');
/** The example shrunk to a 5×5 room (3×3 inside, 64 steps) so a test run learns in seconds. */
const SMALL_ROOM = ROOM.replace('const SIZE = 8,', 'const SIZE = 5,').replace('maxSteps: 256,', 'maxSteps: 64,').replace("title: 'Empty room 8x8 (code)'", "title: 'Empty room 5x5 (code)'");

describe('npm run train -- --env-file FILE.js', () => {
  it('trains GRPO on a code env to success >= 0.9, and config.json carries the code', { timeout: 180_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'code-env-'));
    const file = join(dir, 'room.js');
    writeFileSync(file, SMALL_ROOM);
    const config = join(dir, 'run.json');
    writeFileSync(config, JSON.stringify({ env: { id: 'grid/empty-8x8' }, model: { kind: 'mlp', hidden: [64, 64], activation: 'tanh' }, algo: { algo: 'grpo', groupSize: 8, lr: 0.003, entropyCoef: 0.01 }, rollout: { groups: 8, learnerBatch: 512 }, seed: 1 }));
    const out = join(dir, 'run');
    expect(await main(['--env-file', file, '--config', config, '--iterations', '12', '--out', out, '--quiet'])).toBe(0);
    const saved = JSON.parse(readFileSync(join(out, 'config.json'), 'utf8'));
    expect(saved.env).toEqual({ id: 'code/custom', kwargs: { code: SMALL_ROOM } });
    const rows = readFileSync(join(out, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, number>);
    expect(rows).toHaveLength(12);
    const last = rows.slice(-2).map((r) => r['episode/success_rate']);
    expect(Math.min(...last)).toBeGreaterThanOrEqual(0.9);
    expect(rows[0]['episode/success_rate']).toBeLessThan(0.9);
  });

  // Before the V8 sandbox ran in a process of its own, this allocation aborted the whole process
  // (V8's fatal "heap out of memory": exit 134, no checkpoint, no policy).
  it('a late new Array(5e7) in reset() stops the run with the reason; policy and the last finished iteration\'s checkpoint are written', { timeout: 180_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'code-env-'));
    const file = join(dir, 'late.js');
    // The 150th reset of the module's process (the counter is on the sandbox's global, shared by its instances): past the check, in iteration 1 or 2.
    writeFileSync(file, SMALL_ROOM.replace('export function reset(_seed) {', 'export function reset(_seed) {\n  globalThis.resets = (globalThis.resets || 0) + 1;\n  if (globalThis.resets === 150) globalThis.keep = new Array(5e7).fill(1);'));
    const out = join(dir, 'run');
    const errors: string[] = [];
    const spy = vi.spyOn(console, 'error').mockImplementation((m: unknown) => void errors.push(String(m)));
    try {
      expect(await main(['--env-file', file, '--iterations', '6', '--checkpoint-every', '0', '--out', out, '--quiet'])).toBe(1);
    } finally {
      spy.mockRestore();
    }
    const failed = /^error in iteration (\d+): reset\(\) ran out of memory \(limit 64 MiB\)/.exec(errors[0]);
    expect(failed, errors.join('\n')).not.toBeNull();
    const k = Number(failed![1]);
    expect(k).toBeGreaterThanOrEqual(1);
    expect(errors[1]).toMatch(new RegExp(`^stopped after ${k} iterations \\(the code env failed, see the error above\\); .*checkpoint.json: the state after iteration ${k - 1}, the last finished one; continue with npm run train -- --resume`));
    expect(JSON.parse(readFileSync(join(out, 'checkpoint.json'), 'utf8')).iteration).toBe(k);
    expect(readFileSync(join(out, 'metrics.jsonl'), 'utf8').trim().split('\n')).toHaveLength(k);
    expect(readFileSync(join(out, 'policy.onnx')).length).toBeGreaterThan(1000);
  });

  it('refuses a code env that fails its check, naming FILE:LINE and the rule; nothing trains', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'code-env-bad-'));
    const file = join(dir, 'room.js');
    const bad = ROOM.replace('x = 1; y = 1; dir = 0;', 'x = 1; y = 1;\n  dir = Math.floor(Math.random() * 4);');
    writeFileSync(file, bad);
    const line = bad.split('\n').findIndex((l) => l.includes('Math.random')) + 1;
    await expect(main(['--env-file', file, '--iterations', '1', '--out', join(dir, 'run'), '--quiet'])).rejects.toThrow(new RegExp(`${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:${line}: \\[determinism\\] the same seed must give the same episode`));
  });

  it('a NaN reward the check does not reach (only on seeds over 2000) stops training with its line and exit status 1, not skipped updates and 0', { timeout: 180_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'code-env-nan-'));
    const file = join(dir, 'room.js');
    const code = SMALL_ROOM.replace('export function reset(_seed) {', 'let seedNow = 0;\nexport function reset(_seed) {\n  seedNow = _seed;').replace('const reward = success ? 1 - (0.9 * steps) / env.maxSteps : 0;', 'const reward = success ? (seedNow > 2000 ? NaN : 1 - (0.9 * steps) / env.maxSteps) : 0;');
    writeFileSync(file, code);
    const errors = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      expect(await main(['--env-file', file, '--iterations', '3', '--out', join(dir, 'run'), '--quiet'])).toBe(1);
      const said = errors.mock.calls.map((c) => String(c[0])).join('\n');
      const line = code.split('\n').findIndex((l) => l.includes('seedNow > 2000 ? NaN')) + 1;
      expect(said).toMatch(new RegExp(`error in iteration 0: step\\(\\) returned reward NaN on a success, at step \\d+ of the episode; a reward must be a finite number \\(line ${line}\\)`));
    } finally {
      errors.mockRestore();
    }
  });

  it('refuses a file that is neither a code env nor a map, saying what it expected', async () => {
    await expect(main(['--env-file', 'presets/grid-empty-8x8-grpo.json', '--iterations', '1', '--quiet'])).rejects.toThrow(/not a valid map:\n {2}- kind: must be "grid-map"/);
    await expect(main(['--env-file', 'README.md', '--iterations', '1', '--quiet'])).rejects.toThrow(/unsupported kind of env file "\.md"; supported: \.json .* and \.js/);
  });
});
