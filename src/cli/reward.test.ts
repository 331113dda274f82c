/**
 * `npm run train -- --reward FILE`: user reward terms from a file, run sandboxed. The failing
 * cases run the real command in a child process and time it from spawn to exit (the bar: a
 * looping or escaping term ends the CLI non-zero within 10 s, naming the term).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { describe, expect, it, vi } from 'vitest';
import { rewardCodeHash } from '../core/reward/versions.ts';
import { parseCliFolder } from '../core/runs/format.ts';
import { main } from './train.ts';

const TERMS = `// Two terms for grid/empty-8x8.
export const stepCost = (step) => -0.01;

export function closer(step) {
  const d = step.state.goalDistance;
  return d === null ? 0 : -0.01 * d;
}
`;

function write(dir: string, name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

/** Runs the CLI in a child process; resolves with its exit code, output and wall time. */
function runCli(args: string[]): Promise<{ code: number | null; out: string; ms: number }> {
  const t0 = performance.now();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/train.ts', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, out, ms: performance.now() - t0 })));
}

describe('npm run train -- --reward FILE', () => {
  it('writes reward/<term>/mean for each exported term and stores the code in config.json', { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'train-reward-'));
    const file = write(dir, 'terms.js', TERMS);
    const logged: string[] = [];
    const log = vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void logged.push(a.map(String).join(' ')));
    try {
      expect(await main(['--config', 'grid-empty-8x8-grpo', '--reward', file, '--iterations', '5', '--out', join(dir, 'run'), '--quiet'])).toBe(0);
    } finally {
      log.mockRestore();
    }
    const printed = logged.find((l) => l.startsWith('reward code '));
    const lines = readFileSync(join(dir, 'run', 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(lines).toHaveLength(5);
    for (const m of lines) {
      for (const term of ['stepCost', 'closer']) {
        expect(m[`reward/${term}/mean`], term).toBeTypeOf('number');
        expect(m[`reward/${term}/mean`], term).toBeLessThan(0);
      }
      expect(m['reward/version']).toBe(1);
      expect(Number.isFinite(m['adv/abs_mean'])).toBe(true);
    }
    // Each step costs 0.01: the term's mean is −0.01 × the mean episode length.
    expect(lines[0]['reward/stepCost/mean']).toBeCloseTo(-0.01 * lines[0]['episode/length_mean'], 9);
    const config = JSON.parse(readFileSync(join(dir, 'run', 'config.json'), 'utf8'));
    expect(config.reward).toEqual({ code: TERMS, onNonFinite: 'skip', callTimeoutMs: 100, logOnly: [], evalTerms: [] });
    // The CLI prints the code's hash; the browser's Runs view hashes the code in a run's config with
    // the same helper, so the folder imported there (or the same code applied in a browser run) shows it too.
    const hash = await rewardCodeHash(TERMS);
    expect(hash).toMatch(/^[0-9a-f]{12}$/);
    expect(printed).toContain(`reward code ${hash} `);
    const imported = parseCliFolder(['config.json', 'metrics.jsonl'].map((name) => ({ name, text: readFileSync(join(dir, 'run', name), 'utf8') })), null);
    if (!imported.ok) throw new Error(imported.messages.join('\n'));
    expect(await rewardCodeHash(imported.run.config.reward.code)).toBe(hash);
  });

  it('works for a tool run: terms read the tool facts of each turn (info.malformed, info.toolCall)', { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'train-reward-tool-'));
    // A small tool config (the calculator with a tiny transformer, no warm start) so the test takes seconds.
    const cfg = write(dir, 'calc-tiny.json', JSON.stringify({
      id: 'calc-tiny',
      env: { id: 'tools/calculator' },
      model: { kind: 'transformer', dModel: 16, nLayers: 1, nHeads: 2, dFF: 32, context: 128 },
      algo: { algo: 'grpo', lr: 0.003, groupSize: 4 },
      rollout: { groups: 2, learnerBatch: 8, maxActionTokens: 12 },
      iterations: 10,
      seed: 5,
    }));
    const terms = "export const formatBonus = (s) => (s.info.malformed ? -1 : 0);\nexport const calcCall = (s) => (s.info.toolCall === 'calc' ? 0.5 : 0);\n";
    const file = write(dir, 'tool-terms.js', terms);
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    try {
      expect(await main(['--config', cfg, '--reward', file, '--iterations', '2', '--out', join(dir, 'run'), '--quiet'])).toBe(0);
    } finally {
      log.mockRestore();
    }
    const lines = readFileSync(join(dir, 'run', 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(lines).toHaveLength(2);
    for (const m of lines) {
      expect(m['reward/formatBonus/mean']).toBeTypeOf('number');
      expect(m['reward/calcCall/mean']).toBeTypeOf('number');
      expect(m['reward/formatBonus/mean']).toBeLessThanOrEqual(0);
      expect(m['reward/calcCall/mean']).toBeGreaterThanOrEqual(0);
      expect(m['reward/version']).toBe(1);
    }
    // The untrained policy writes malformed actions: the term is felt from the first iteration.
    expect(lines[0]['reward/formatBonus/mean']).toBeLessThan(0);
    expect(JSON.parse(readFileSync(join(dir, 'run', 'config.json'), 'utf8')).reward.code).toBe(terms);
  });

  it('a term that loops forever ends the CLI non-zero within 10 s, naming the term', { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'train-reward-loop-'));
    const file = write(dir, 'loop.js', 'export const fine = () => 0;\nexport const spin = (step) => {\n  while (true) {}\n};\n');
    const r = await runCli(['--config', 'grid-empty-8x8-grpo', '--reward', file, '--iterations', '5', '--out', join(dir, 'run')]);
    console.log(`looping term: exit ${r.code} after ${(r.ms / 1000).toFixed(1)} s`);
    expect(r.code).toBe(1);
    expect(r.ms).toBeLessThan(10_000);
    expect(r.out).toMatch(/reward term 'spin' \(line 2\) ran past its 100 ms limit per call at step 0 of the episode with seed \d+ and was stopped/);
  });

  for (const [name, body] of [
    ['process', "process.exit(0)"],
    ['require', "require('node:fs').readFileSync('/etc/passwd', 'utf8').length"],
    ['fetch', "fetch('http://127.0.0.1:1/')"],
  ] as const) {
    it(`a term reaching for ${name} ends the CLI non-zero within 10 s, naming the term`, { timeout: 60_000 }, async () => {
      const dir = mkdtempSync(join(tmpdir(), `train-reward-${name}-`));
      const file = write(dir, 'escape.js', `export const escape = (step) => ${body};\n`);
      const r = await runCli(['--config', 'grid-empty-8x8-grpo', '--reward', file, '--iterations', '5', '--out', join(dir, 'run')]);
      expect(r.code).toBe(1);
      expect(r.ms).toBeLessThan(10_000);
      expect(r.out).toMatch(new RegExp(`reward term 'escape' threw ReferenceError: '?${name}'? is not defined \\(line 1\\) at step 0 of the episode with seed \\d+`));
    });
  }

  it('a module that does not load is refused before training, with the reason and the line', { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'train-reward-bad-'));
    await expect(main(['--config', 'grid-empty-8x8-grpo', '--reward', write(dir, 'syntax.js', 'export const a = (s) => {\n'), '--out', join(dir, 'a'), '--quiet'])).rejects.toThrow(/reward module: SyntaxError/);
    await expect(main(['--config', 'grid-empty-8x8-grpo', '--reward', write(dir, 'num.js', 'export const a = 1;\n'), '--out', join(dir, 'b'), '--quiet'])).rejects.toThrow(/export 'a' \(line 1\) is a number, not a function/);
    await expect(main(['--config', 'grid-empty-8x8-grpo', '--reward', join(dir, 'missing.js'), '--out', join(dir, 'c'), '--quiet'])).rejects.toThrow(/--reward .*missing\.js: cannot read it/);
    await expect(main(['--config', 'grid-empty-8x8-grpo', '--reward', write(dir, 'big.js', `export const a = () => 0;\n//${'x'.repeat(70_000)}`), '--out', join(dir, 'd'), '--quiet'])).rejects.toThrow(/reward\.code: must be at most 65,536 characters/);
  });
});
