/**
 * `npm run check-env -- FILE`: the env check alone on a code env (.js) or a map (.json); exit 0
 * when every file passes, 1 with FILE:LINE messages when one fails, 2 on a usage error. The
 * command is spawned as npm runs it (package.json's script), so the exit status is the real one.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { callTimeoutFromEnv } from '../runtime/codeEnv/node.ts';
import { checkEnvFile } from './checkEnvFile.ts';

const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> };
const ROOM_PATH = 'examples/envs/empty-room.js';
const ROOM = readFileSync(ROOM_PATH, 'utf8');
const tmp = mkdtempSync(join(tmpdir(), 'check-env-'));
const file = (name: string, text: string) => {
  const p = join(tmp, name);
  writeFileSync(p, text);
  return p;
};
const lineOf = (code: string, text: string) => code.split('\n').findIndex((l) => l.includes(text)) + 1;
/** The command as `npm run check-env -- …` runs it. */
const checkEnv = (...files: string[]) => {
  const [node, ...args] = pkg.scripts['check-env'].split(' ');
  expect(node).toBe('node');
  return spawnSync(process.execPath, [...args, ...files], { encoding: 'utf8' });
};

describe('npm run check-env -- FILE', () => {
  it('exits 0 on the shipped examples (a code env and a map), 1 with FILE:LINE on a code env with a NaN reward, 2 on a file it cannot check', { timeout: 120_000 }, () => {
    const ok = checkEnv(ROOM_PATH, 'examples/envs/four-rooms.json');
    expect(ok.status, ok.stderr).toBe(0);
    expect(ok.stdout).toContain('examples/envs/empty-room.js: code env "Empty room 8x8 (code)" passes its check');
    expect(ok.stdout).toContain('examples/envs/four-rooms.json: map "Four rooms 11x11", 11x11, solvable in 19 steps (step limit 100): passes');

    const code = ROOM.replace('const reward = success ?', 'const reward = steps > 3 ? NaN : success ?');
    const bad = file('nan.js', code);
    const r = checkEnv(bad);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`${bad}: the code env fails its check (1 problem):\n  - ${bad}:${lineOf(code, 'const reward = steps > 3 ? NaN')}: [reward] step() returned reward NaN at step 4 of the episode; a reward must be a finite number`);

    const other = checkEnv(file('env.txt', 'hello'));
    expect(other.status).toBe(2);
    expect(other.stderr).toMatch(/env\.txt: unsupported kind of env file "\.txt"/);
    expect(checkEnv().status).toBe(2);
  });

  it('reports an unsolvable map and an unreadable file, and passes a map file that is fine', async () => {
    const walled = file('walled.json', JSON.stringify({ kind: 'grid-map', rows: ['######', '#>.#G#', '######'] }));
    const w = await checkEnvFile(walled);
    expect(w.ok).toBe(false);
    expect(w.lines.join('\n')).toMatch(/walled\.json: this map cannot be solved: the goal is walled off/);
    await expect(checkEnvFile(join(tmp, 'missing.js'))).rejects.toThrow(/missing\.js: cannot read it \(ENOENT\)/);
    const v = await checkEnvFile('examples/envs/lava-crossing.json');
    expect(v.ok).toBe(true);
  });

  it('a slow step is refused with the deadline and CODE_ENV_CALL_TIMEOUT_MS, which must be a whole number of ms', async () => {
    const code = ROOM.replace('  steps++;\n', '  steps++;\n  const t0 = Date.now(); while (Date.now() - t0 < 50) {}\n');
    const slow = file('slow.js', code);
    const v = await checkEnvFile(slow);
    expect(v.ok).toBe(false);
    expect(v.lines[1]).toMatch(new RegExp(`^  - ${slow.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:${lineOf(code, 'while (Date.now()')}: \\[speed\\] step\\(\\) takes \\d+\\.\\d ms`));
    expect(v.lines[1]).toContain('whose deadline is 1000 ms, so a step over 15.6 ms stops it');
    expect(v.lines[1]).toMatch(new RegExp(`CODE_ENV_CALL_TIMEOUT_MS=\\d+ npm run train -- --env-file ${slow.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} `));
    expect(callTimeoutFromEnv(undefined)).toBeUndefined();
    expect(callTimeoutFromEnv('4000')).toBe(4000);
    for (const bad of ['0', '1.5', 'soon', '700000']) expect(() => callTimeoutFromEnv(bad)).toThrow(/CODE_ENV_CALL_TIMEOUT_MS=.*: the code env sandbox's deadline for one call must be a whole number of milliseconds from 1 to 600000/);
  });
});
