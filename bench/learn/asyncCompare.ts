/**
 * Sync vs async scheduling at equal training iterations, grid +
 * MLP + GRPO, rollouts in a worker pool (the learner stays on the main thread):
 *
 *   npx tsx bench/learn/asyncCompare.ts [--env grid/empty-5x5] [--iterations 20] [--workers 1] [--staleness 0,1,2] [--json]
 *
 * Reports per staleness bound: success rate (mean of the last 3 iterations), episodes/s over the
 * whole run (wall clock, pool start-up excluded), mean learner/rollout idle ratios, staleness.
 */
import { defaultsFor } from '../../src/core/algos/config.ts';
import { createStepTrainer } from '../../src/core/trainer/stepCollector.ts';
import { DEFAULT_STEP_TRAINER } from '../../src/core/trainer/stepConfig.ts';
import { loadNodeEngine } from '../../src/runtime/engine/node.ts';
import { createNodeWorkerPool } from '../../src/runtime/pool/node.ts';

export interface AsyncCompareRow {
  maxStaleness: number;
  success: number;
  episodesPerS: number;
  wallS: number;
  learnerIdle: number;
  rolloutIdle: number;
  stalenessMean: number;
  partialRatio: number;
}

export async function compareSchedules(o: { env?: string; iterations?: number; workers?: number; staleness?: number[]; seed?: number } = {}): Promise<AsyncCompareRow[]> {
  const engine = await loadNodeEngine('ort-web-wasm');
  const rows: AsyncCompareRow[] = [];
  for (const s of o.staleness ?? [0, 1, 2]) {
    const trainer = await createStepTrainer(
      {
        ...DEFAULT_STEP_TRAINER,
        env: { id: o.env ?? 'grid/empty-5x5' },
        algo: { ...defaultsFor('grpo'), lr: 1e-3, tis: { enabled: true, cap: 2 } },
        groups: 8,
        learnerBatch: 512,
        seed: o.seed ?? 1,
        scheduling: { maxStaleness: s },
      },
      engine,
      (model, weights) => createNodeWorkerPool({ size: o.workers ?? 1, model, weights }),
    );
    // Warm the worker's session (its first batch) outside the timed run.
    await trainer.collector.pool.collect({ ...trainer.collector.requestFor(0), samplingSeed: 999 });
    const n = o.iterations ?? 20;
    const t0 = performance.now();
    const ms: Record<string, number>[] = [];
    for (let k = 0; k < n; k++) ms.push((await trainer.step()).metrics as Record<string, number>);
    const wallS = (performance.now() - t0) / 1000;
    await trainer.release();
    const avg = (key: string, from = 0) => ms.slice(from).reduce((a, m) => a + (m[key] ?? 0), 0) / (ms.length - from);
    rows.push({
      maxStaleness: s,
      success: avg('episode/success_rate', n - 3),
      episodesPerS: ms.reduce((a, m) => a + m['perf/episodes_per_s']! * m['perf/iteration_s']!, 0) / wallS,
      wallS,
      learnerIdle: avg('perf/learner_idle_ratio', 1),
      rolloutIdle: avg('perf/rollout_idle_ratio', 1),
      stalenessMean: avg('async/staleness_mean'),
      partialRatio: avg('async/partial_ratio'),
    });
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const arg = (name: string) => {
    const i = process.argv.indexOf(`--${name}`);
    return i >= 0 ? process.argv[i + 1] : undefined;
  };
  const rows = await compareSchedules({
    env: arg('env'),
    iterations: arg('iterations') ? Number(arg('iterations')) : undefined,
    workers: arg('workers') ? Number(arg('workers')) : undefined,
    staleness: arg('staleness')?.split(',').map(Number),
  });
  if (process.argv.includes('--json')) console.log(JSON.stringify(rows));
  else for (const r of rows) console.log(`s=${r.maxStaleness}: success ${r.success.toFixed(2)}, ${r.episodesPerS.toFixed(1)} episodes/s, ${r.wallS.toFixed(1)} s, learner idle ${r.learnerIdle.toFixed(2)}, rollout idle ${r.rolloutIdle.toFixed(2)}, staleness ${r.stalenessMean.toFixed(2)}, partial ${r.partialRatio.toFixed(2)}`);
}
