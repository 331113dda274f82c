/**
 * Asynchronous scheduling with bounded staleness on the grid trainer.
 * Reference for "s = 0 is synchronous": a driver that collects batch k with version k's
 * weights and only then trains on it (trainOn), with no scheduler involved.
 */
import { describe, expect, it } from 'vitest';
import { defaultsFor } from '../../core/algos/config.ts';
import { createStepTrainer } from '../../core/trainer/stepCollector.ts';
import type { StepTrainerConfig } from '../../core/trainer/stepConfig.ts';
import { DEFAULT_STEP_TRAINER } from '../../core/trainer/stepConfig.ts';
import { initWeights, type Weights } from '../../core/models/types.ts';
import { buildPoolModel, gridMlpSpec } from '../../core/rollout/stepPool.ts';
import { loadNodeEngine } from '../engine/node.ts';
import { createNodeWorkerPool } from './node.ts';

function config(maxStaleness: number, over: Partial<StepTrainerConfig> = {}): StepTrainerConfig {
  const grpo = defaultsFor('grpo');
  return {
    ...DEFAULT_STEP_TRAINER,
    env: { id: 'grid/empty-5x5' },
    algo: { ...grpo, lr: 1e-3, tis: { enabled: true, cap: 2 } },
    groups: 8,
    learnerBatch: 512,
    seed: 1,
    scheduling: { maxStaleness },
    ...over,
  };
}

function sameWeights(a: Weights, b: Weights): boolean {
  return Object.keys(a).every((k) => a[k].length === b[k].length && a[k].every((x, i) => x === b[k][i]));
}

describe('step pool collector scheduling', () => {
  it('with max staleness 0 equals collect-then-train (synchronous), and s = 1 does not', async () => {
    const engine = await loadNodeEngine('ort-web-wasm');
    const cfg = { ...config(0), groups: 2 };
    const scheduled = await createStepTrainer(cfg, engine);
    const manual = await createStepTrainer(cfg, engine);
    const overlapped = await createStepTrainer({ ...cfg, scheduling: { maxStaleness: 1 } }, engine);
    for (let k = 0; k < 3; k++) {
      const a = await scheduled.step();
      manual.collector.supply(k, await manual.collector.pool.collect(manual.collector.requestFor(k)));
      const b = await manual.step();
      await overlapped.step();
      expect(a.episodes.map((e) => e.actions.join())).toEqual(b.episodes.map((e) => e.actions.join()));
      for (const key of ['reward/mean', 'actor/pg_loss', 'actor/entropy', 'episode/length_mean'] as const) expect(a.metrics[key]).toBe(b.metrics[key]);
      expect(a.metrics['async/staleness_max']).toBe(0);
      expect(a.metrics['async/partial_ratio']).toBe(0);
      expect(a.metrics['async/is_ratio_max']).toBe(1);
      expect(a.metrics['train/stale_rows']).toBe(0);
    }
    expect(sameWeights(await scheduled.getWeights(), await manual.getWeights())).toBe(true);
    expect(sameWeights(await scheduled.getWeights(), await overlapped.getWeights())).toBe(false);
    await Promise.all([scheduled.release(), manual.release(), overlapped.release()]);
  });

  it('with s = 2 (in-thread pool) staleness never exceeds 2, stale steps get IS ratios, and it learns grid/empty-5x5', async () => {
    const engine = await loadNodeEngine('ort-web-wasm');
    const trainer = await createStepTrainer(config(2), engine);
    const reports = [];
    for (let k = 0; k < 20; k++) reports.push(await trainer.step());
    const m = reports.map((r) => r.metrics);
    for (const x of m) {
      expect(x['async/staleness_max']).toBeLessThanOrEqual(2);
      expect(x['async/is_ratio_max']).toBeGreaterThan(0);
      expect(x['actor/pg_loss']).toBeTypeOf('number');
      // Where reported (rows sampled by the learner's current version), rollout = trainer.
      if (x['mismatch/logprob_abs_diff_max'] !== undefined) expect(x['mismatch/logprob_abs_diff_max']).toBeLessThanOrEqual(1e-4);
    }
    // The schedule really ran ahead: some trained steps were sampled by older weights.
    expect(Math.max(...m.map((x) => x['async/staleness_max']!))).toBeGreaterThan(0);
    expect(m.filter((x) => x['mismatch/logprob_abs_diff_max'] !== undefined).length).toBeGreaterThan(0);
    expect(m.some((x) => x['train/stale_rows']! > 0 && x['async/is_ratio_mean'] !== 1)).toBe(true);
    expect(m[0]['episode/success_rate']).toBeLessThan(0.7);
    expect(m[19]['episode/success_rate']).toBeGreaterThanOrEqual(0.85);
    expect(m[19]['episode/length_mean']).toBeLessThan(m[0]['episode/length_mean']! / 2);
    // Greedy evaluation on held-out seeds.
    const evalEps = await trainer.evaluate([101, 102, 103, 104, 105, 106, 107, 108]);
    expect(evalEps.filter((e) => e.success).length).toBeGreaterThanOrEqual(7);
    await trainer.release();
  });

  it('dynamic sampling refills zero-spread groups within the staleness bound', async () => {
    const engine = await loadNodeEngine('ort-web-wasm');
    const base = config(1, { groups: 4 });
    const trainer = await createStepTrainer({ ...base, algo: { ...base.algo, dynamicSampling: { enabled: true, maxRounds: 3, spreadTol: 1e-9 } } }, engine);
    for (let k = 0; k < 3; k++) {
      const r = await trainer.step();
      const rounds = r.metrics['groups/sampling_rounds']!;
      expect(rounds).toBeGreaterThanOrEqual(1);
      expect(rounds).toBeLessThanOrEqual(3);
      expect(r.metrics['async/staleness_max']).toBeLessThanOrEqual(1);
      // Kept groups are whole, re-indexed 0..g−1, and (when the batch filled) each has reward spread.
      const G = base.algo.groupSize;
      expect(r.episodes.length % G).toBe(0);
      for (let g = 0; g < r.episodes.length / G; g++) {
        const totals = Array.from(r.episodeRewards.subarray(g * G, (g + 1) * G));
        expect(r.episodes.slice(g * G, (g + 1) * G).every((ep) => ep.group === g && ep.seed === r.episodes[g * G].seed)).toBe(true);
        if (r.episodes.length === base.groups * G) expect(Math.max(...totals) - Math.min(...totals)).toBeGreaterThan(1e-9);
      }
    }
    await trainer.release();

    // A policy that only turns never reaches the goal: every group has zero spread, every round
    // is dropped, and at the cap the iteration trains nothing and makes no new version.
    const model = buildPoolModel(gridMlpSpec(base.env, { hidden: base.model.hidden }));
    const turner = initWeights(model, 3);
    turner['pi.b'] = new Float32Array(model.numActions);
    turner['pi.b'][0] = 30;
    const stuck = await createStepTrainer({ ...base, algo: { ...base.algo, dynamicSampling: { enabled: true, maxRounds: 2, spreadTol: 1e-9 } } }, engine, undefined, turner);
    const r = await stuck.step();
    expect(r.metrics['groups/sampling_rounds']).toBe(2);
    expect(r.metrics['groups/dropped']).toBe(2 * base.groups);
    expect(r.episodes).toHaveLength(0);
    expect(stuck.version).toBe(0);
    expect(stuck.iteration).toBe(1);
    await stuck.release();
  });

  it('with a worker pool and s = 1, rollouts overlap the learner and the bound holds', async () => {
    const engine = await loadNodeEngine('ort-web-wasm');
    const trainer = await createStepTrainer(config(1, { groups: 4 }), engine, (model, weights) => createNodeWorkerPool({ size: 1, model, weights }));
    const reports = [];
    for (let k = 0; k < 6; k++) reports.push(await trainer.step());
    for (const r of reports) {
      expect(r.metrics['async/staleness_max']).toBeLessThanOrEqual(1);
      for (const ep of r.episodes) expect(Math.min(...ep.versions)).toBeGreaterThanOrEqual(r.iteration - 1);
    }
    // Batch k+1 ran while the learner trained on batch k: some of it is one version old.
    expect(reports.slice(1).some((r) => r.metrics['async/staleness_mean']! > 0)).toBe(true);
    for (const key of ['perf/learner_idle_ratio', 'perf/rollout_idle_ratio', 'async/partial_ratio', 'async/is_clipfrac'] as const) {
      for (const r of reports) {
        // Shares of time or of episodes/steps: in [0, 1] (a NaN fails both).
        expect(r.metrics[key], key).toBeGreaterThanOrEqual(0);
        expect(r.metrics[key], key).toBeLessThanOrEqual(1);
      }
    }
    await trainer.release();
  });
});
