/**
 * examples/verl/prepare_data.py checks it can write parquet before it plays any episode: without
 * pandas/pyarrow it stops at once with what to install (it used to play every seed first), and
 * --jsonl needs neither. `python3 -S` leaves site-packages off the path, so pandas is missing
 * whether or not this machine has it.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { startServer } from '../server/server.ts';
import { hasPython } from './testPython.ts';

describe('examples/verl/prepare_data.py', () => {
  it.skipIf(!hasPython)('stops before playing when it cannot write parquet; --jsonl writes with the standard library', { timeout: 60_000 }, async () => {
    const server = await startServer({ envs: ['tools/calculator'], host: '127.0.0.1', port: 0, latency: 'skip' });
    let resets = 0;
    server.http.prependListener('request', (req) => {
      if (req.url?.startsWith('/reset')) resets++;
    });
    const out = mkdtempSync(join(tmpdir(), 'prepare-'));
    const args = ['-S', 'examples/verl/prepare_data.py', '--server', server.url, '--out', out, '--train-seeds', '0-3', '--val-seeds', '10-11', '--workers', '2'];
    try {
      const failed = await promisify(execFile)('python3', args).then(
        () => null,
        (e: { code: number; stderr: string }) => e,
      );
      expect(failed?.code).toBe(1);
      expect(failed?.stderr).toMatch(/writing parquet needs pandas and pyarrow .*or pass --jsonl/);
      expect(resets).toBe(0);
      expect(existsSync(join(out, 'train.parquet'))).toBe(false);

      await promisify(execFile)('python3', [...args, '--jsonl']);
      expect(resets).toBe(6);
      const rows = readFileSync(join(out, 'train.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { extra_info: { seed: number } });
      expect(rows.map((r) => r.extra_info.seed)).toEqual([0, 1, 2, 3]);
    } finally {
      await server.close();
    }
  });
});
