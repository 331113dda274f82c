/**
 * `npm run train -- --metric-names trl|verl`: metrics.jsonl under the anchors' names, the same
 * numbers as a run in ours with the same seed, kept through --resume, and read back into ours.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from './train.ts';
import { parseCliFolder } from '../core/runs/format.ts';

const rows = (dir: string) => readFileSync(join(dir, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, number | null>);
const run = async (out: string, ...extra: string[]) => expect(await main(['--config', 'grid-empty-8x8-grpo', '--iterations', '2', '--seed', '4', '--out', out, '--quiet', ...extra])).toBe(0);

describe('--metric-names', () => {
  it('trl writes TRL GRPOTrainer names with the numbers of the same run in ours', { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'names-'));
    await run(join(dir, 'ours'));
    await run(join(dir, 'trl'), '--metric-names', 'trl');
    const [o, t] = [rows(join(dir, 'ours')), rows(join(dir, 'trl'))];
    expect(t).toHaveLength(2);
    // TRL's own names (GRPOTrainer._metrics), each the number of our key in the same-seed run.
    const pairs: [string, string][] = [
      ['reward', 'reward/mean'],
      ['reward_std', 'reward/std'],
      ['frac_reward_zero_std', 'groups/frac_zero_std'],
      ['rewards/outcome/mean', 'reward/outcome/mean'],
      ['rewards/outcome/std', 'reward/outcome/std'],
      ['entropy', 'actor/entropy'],
      ['grad_norm', 'actor/grad_norm'],
      ['learning_rate', 'actor/lr'],
      ['clip_ratio/low_mean', 'actor/clipfrac_low'],
      ['clip_ratio/high_mean', 'actor/clipfrac_high'],
      ['clip_ratio/region_mean', 'actor/clipfrac'],
      ['policy_loss', 'actor/pg_loss'],
      ['completions/mean_length', 'episode/length_mean'],
      ['sampling/sampling_logp_difference/max', 'mismatch/logprob_abs_diff_max'],
    ];
    for (let i = 0; i < 2; i++) {
      expect(t[i].iteration).toBe(i);
      expect(t[i].wall_s).toBeTypeOf('number');
      for (const [trl, ours] of pairs) {
        expect(t[i][trl], trl).toBeTypeOf('number');
        expect(t[i][trl], trl).toBe(o[i][ours]);
        expect(t[i][ours], `${ours} is renamed, not repeated`).toBeUndefined();
      }
      // region_mean is the two one-sided cuts together (disjoint sets of tokens).
      expect(t[i]['clip_ratio/region_mean']).toBeCloseTo((o[i]['actor/clipfrac_low'] as number) + (o[i]['actor/clipfrac_high'] as number), 12);
      // No TRL name: kept as ours.
      expect(t[i]['episode/success_rate']).toBe(o[i]['episode/success_rate']);
      expect(Object.keys(t[i])).toHaveLength(Object.keys(o[i]).length);
      // A grid run logs no tool keys under any naming.
      expect(Object.keys(o[i]).filter((k) => k.startsWith('tools/'))).toEqual([]);
    }
  });

  it('verl: --resume keeps the folder in veRL names, and an import reads it back into ours', { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'names-verl-'));
    const out = join(dir, 'run');
    await run(out, '--metric-names', 'verl', '--checkpoint-every', '1');
    expect(await main(['--resume', out, '--iterations', '3', '--quiet'])).toBe(0);
    const r = rows(out);
    expect(r.map((x) => x.iteration)).toEqual([0, 1, 2]);
    for (const row of r) {
      expect(row['critic/score/mean']).toBeTypeOf('number');
      expect(row['actor/ppo_kl']).toBeTypeOf('number');
      expect(row['actor/pg_clipfrac']).toBeTypeOf('number');
      expect(row['response_length/mean']).toBeTypeOf('number');
      expect(row['reward/mean']).toBeUndefined();
      expect(row['actor/approx_kl']).toBeUndefined();
    }
    const files = ['config.json', 'metrics.jsonl'].map((name) => ({ name, text: readFileSync(join(out, name), 'utf8') }));
    const imported = parseCliFolder(files, null);
    if (!imported.ok) throw new Error(imported.messages.join('\n'));
    expect(imported.run.metrics.map((m) => m['reward/mean'])).toEqual(r.map((x) => x['critic/score/mean']));
    expect(imported.run.metrics.every((m) => m['critic/score/mean'] === undefined)).toBe(true);
  });

  it('refuses a naming it does not know, and --help names the choice', async () => {
    await expect(main(['--config', 'grid-empty-8x8-grpo', '--metric-names', 'wandb'])).rejects.toThrow(/--metric-names must be ours, trl, verl, got wandb/);
    const logs: string[] = [];
    const orig = console.log;
    console.log = (s: string) => logs.push(s);
    try {
      expect(await main(['--help'])).toBe(0);
    } finally {
      console.log = orig;
    }
    expect(logs.join('\n')).toMatch(/--metric-names trl\|verl {3}write metrics\.jsonl under TRL's GRPOTrainer or veRL's names/);
  });
});
