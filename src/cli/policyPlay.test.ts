import { describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer } from '../server/server.ts';

/** Runs a command to its end without blocking this thread (the server answers it from here). */
function run(cmd: string, args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('close', (code) => resolve({ code, out, err }));
  });
}

describe('examples/policy/play.mjs: a trained policy.onnx + policy.json played against npm run serve', () => {
  it('a CLI run of the first preset plays the env served over HTTP from outside the project, and reaches the goal', { timeout: 300_000 }, async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'play-')), 'run');
    const train = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/train.ts', '--config', 'grid-empty-8x8-grpo', '--iterations', '15', '--out', dir, '--quiet'], { encoding: 'utf8' });
    expect(train.status, train.stderr).toBe(0);
    const server = await startServer({ envs: ['grid/empty-8x8'], host: '127.0.0.1', port: 0 });
    try {
      // Plain node: the example imports only onnxruntime-node and node built-ins.
      const r = await run(process.execPath, ['examples/policy/play.mjs', dir, '--url', server.url, '--episodes', '4', '--seed', '1000']);
      expect(r.code, r.err).toBe(0);
      const lines = r.out.trim().split('\n');
      expect(lines.slice(0, 4).every((l) => /^seed 100\d: return -?\d+\.\d{3} in \d+ steps, /.test(l))).toBe(true);
      const summary = JSON.parse(lines.at(-1)!) as { episodes: number; play: string; mean_return: number; success_rate: number };
      expect(summary).toMatchObject({ episodes: 4, play: 'sampled' });
      // The run reached 100% sampled success in training: features built from policy.json's
      // layout must give the same policy, or it would wander for the episode's 256 steps.
      expect(summary.success_rate).toBeGreaterThanOrEqual(0.75);
      expect(summary.mean_return).toBeGreaterThan(0.5);
    } finally {
      await server.close();
    }
  });
});
