/**
 * The shipped code-env examples train with the exact commands docs/studio.md gives for them, to the
 * success it states, scored on held-out seeds (`--eval`) against the policy before RL.
 * The commands are read out of docs/studio.md, so a changed command or file is tested as written.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from './train.ts';

const DOC = readFileSync(new URL('../../docs/studio.md', import.meta.url), 'utf8');

/** The arguments after `npm run train --` of docs/studio.md's command for `file` (the first listed). */
function readmeCommand(file: string): string[] {
  const line = DOC.split('\n').find((l) => l.startsWith('npm run train -- ') && l.includes(`--env-file examples/envs/${file}`));
  if (!line) throw new Error(`docs/studio.md has no "npm run train -- --env-file examples/envs/${file}" command`);
  return line.replace('npm run train -- ', '').replace(/#.*$/, '').trim().split(/\s+/).map((a) => (a.startsWith('examples/') ? new URL(`../../${a}`, import.meta.url).pathname : a));
}

interface EvalRow {
  when: string;
  greedy_success: number;
  sampled_success: number;
}

async function trainAsReadmeSays(file: string, extra: string[]): Promise<EvalRow[]> {
  const out = join(mkdtempSync(join(tmpdir(), 'example-')), 'run');
  expect(await main([...readmeCommand(file), ...extra, '--out', out, '--quiet'])).toBe(0);
  return JSON.parse(readFileSync(join(out, 'eval.json'), 'utf8')) as EvalRow[];
}

describe('the shipped code-env examples train with their documented commands', () => {
  it('empty-room.js (GRPO, 40 iterations): held-out greedy success 0 before RL, >= 0.95 after', { timeout: 240_000 }, async () => {
    // Measured with this command, seeds 1-3, 100 held-out seeds: greedy 0.00 -> 1.00 each, 26-33 s of training.
    const [before, after] = await trainAsReadmeSays('empty-room.js', ['--seed', '1', '--eval', '40']);
    expect(before.when).toBe('before RL');
    expect(before.greedy_success).toBeLessThan(0.2);
    expect(after.greedy_success).toBeGreaterThanOrEqual(0.95);
  });
});
