/**
 * Rollout correction in real grid runs (ort-web WASM in Node): with the mismatch mode off the
 * rollout and the learner hold the same weights, so every ratio π_old/μ is 1 up to float32
 * rounding and the correction changes nothing; with fp8 rollouts the ratios leave 1, the
 * effective sample size falls below 1 and χ² and the perplexity gap leave 0.
 */
import { describe, expect, it } from 'vitest';
import { parseRunConfig } from '../../core/presets/schema.ts';
import { createTrainer } from '../../core/trainer/createTrainer.ts';
import { loadNodeEngine } from './node.ts';

async function run(mismatch: string): Promise<Record<string, number>[]> {
  const parsed = parseRunConfig({
    env: { id: 'grid/empty-5x5' },
    model: { kind: 'mlp', hidden: [16], activation: 'tanh' },
    algo: { algo: 'grpo', groupSize: 4, lr: 0.01, rolloutCorrection: { is: 'token', rs: 'token_k1', rsHigh: 1.001, mismatch } },
    rollout: { groups: 2, learnerBatch: 64 },
    iterations: 3,
    seed: 5,
  });
  if (!parsed.ok) throw new Error(parsed.messages.join('\n'));
  const trainer = await createTrainer(parsed.config, await loadNodeEngine('ort-web-wasm'));
  const rows: Record<string, number>[] = [];
  for (let i = 0; i < 3; i++) rows.push((await trainer.step()).metrics);
  await trainer.release();
  return rows;
}

describe('rollout correction in a grid run', () => {
  it('mismatch off: ratios are 1 to float32 rounding (|log ρ| < 1e-6), ESS 1 to 1e-9, nothing rejected even at [1/1.001, 1.001]', { timeout: 60_000 }, async () => {
    for (const m of await run('off')) {
      expect(m['correction/log_ppl_abs_diff']).toBeLessThan(1e-6);
      expect(Math.abs(m['correction/chi_squared_token'])).toBeLessThan(1e-5);
      expect(Math.abs(m['correction/is_ess'] - 1)).toBeLessThan(1e-9);
      expect(m['correction/is_ratio_fraction_high']).toBe(0);
      expect(m['correction/rs_masked_fraction']).toBe(0);
      expect(m['mismatch/logprob_abs_diff_max']).toBeLessThan(1e-5);
    }
  });
  it('fp8 rollouts: μ ≠ π_old on the steps, the ESS falls below 1, χ² and the perplexity gap leave 0, and the tight RS bounds reject steps', { timeout: 60_000 }, async () => {
    const rows = await run('fp8');
    for (const m of rows) {
      expect(m['mismatch/logprob_abs_diff_mean']).toBeGreaterThan(1e-4);
      expect(m['correction/is_ess']).toBeLessThan(1 - 1e-9);
      expect(m['correction/log_ppl_abs_diff']).toBeGreaterThan(1e-5);
      expect(m['correction/chi_squared_token']).not.toBe(0);
    }
    expect(Math.max(...rows.map((m) => m['correction/rs_masked_fraction']))).toBeGreaterThan(0);
  });
});
