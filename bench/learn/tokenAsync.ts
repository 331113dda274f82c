/**
 * Sync vs async token training on a slow, flaky tool: the flaky-api-async
 * preset (log-normal call latency, median 20 ms, σ 1.7, waited for in real time), one imitation
 * warm start shared by both runs, then the same number of GRPO iterations with the same batch
 * (groups × groupSize episodes per update) at maxStaleness 0 (synchronous: the batch waits for
 * its slowest call) and at maxStaleness s, both decoding where the preset says (its
 * rollout.workers: 1 = a token rollout worker, which overlaps the learner only when async).
 *
 * Episodes/s = trained episodes / wall seconds of the training loop (warm start excluded).
 * Success is measured twice: the sampled episodes of the last 5 iterations, and after training
 * on held-out seeds (greedy and sampled), so "equal training steps" compares like with like.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Weights } from '../../src/core/models/types.ts';
import type { Engine } from '../../src/core/engine/types.ts';
import { RealClock } from '../../src/core/envs/clock.ts';
import { createContinuousTrainer } from '../../src/core/trainer/continuousCollector.ts';
import { initialTokenWeights } from '../../src/core/trainer/createTrainer.ts';
import { mixSeed } from '../../src/core/util/rng.ts';
import { DEFAULT_TOKEN_TRAINER } from '../../src/core/trainer/tokenConfig.ts';
import { loadRunConfig } from '../../src/cli/presets.ts';
import type { NodeEngineName } from '../../src/runtime/engine/node.ts';
import { nodeTokenWorkerOn } from '../../src/runtime/tokenWorker/node.ts';

export interface TokenScheduleRow {
  max_staleness: number;
  episodes_per_s: number;
  wall_s: number;
  iterations: number;
  /** Mean sampled success over the last 5 iterations. */
  success_train: number;
  /** Held-out seeds after training, greedy and sampled. */
  success_eval_greedy: number;
  success_eval_sampled: number;
  staleness_mean: number;
  staleness_max: number;
  kv_cache_hit_rate: number;
  kv_evictions: number;
  episodes_aborted: number;
  /** Share of the loop's wall time in which no row could decode (all waiting on the tool). */
  tool_wait_ratio: number;
  /** Mean seconds per iteration the learner waited for finished groups, and trained. */
  wait_s: number;
  train_s: number;
  /** Mean seconds per iteration of train_s spent before the update: reference and proximal forwards. */
  prep_s: number;
}

export async function compareTokenSchedules(o: {
  engine: Engine;
  /** The engine's name, for the rollout worker to load the same. */
  engineName: NodeEngineName;
  preset?: string;
  iterations: number;
  staleness: number;
  evalSeeds: number;
  progress: (t: string) => void;
  /** Directory to keep the warm-start weights in between runs (keyed by the config's hash). */
  cacheDir?: string;
}): Promise<{ preset: string; warm_start_s: number; rows: TokenScheduleRow[] }> {
  const preset = o.preset ?? 'flaky-api-async';
  const config = loadRunConfig(preset);
  if (config.model.kind !== 'transformer') throw new Error(`${preset}: not a token preset`);
  const t0 = performance.now();
  const key = createHash('sha256').update(JSON.stringify([config.env, config.model, config.warmStart, config.seed])).digest('hex').slice(0, 16);
  const cachePath = o.cacheDir ? join(o.cacheDir, `warm-${preset}-${key}.json`) : null;
  let start: { weights: Weights; reference: Weights | undefined };
  let warmS: number;
  if (cachePath && existsSync(cachePath)) {
    const saved = JSON.parse(readFileSync(cachePath, 'utf8')) as { warmS: number; weights: Record<string, number[]> };
    const weights: Weights = Object.fromEntries(Object.entries(saved.weights).map(([k, v]) => [k, Float32Array.from(v)]));
    start = { weights, reference: config.warmStart ? weights : undefined };
    warmS = saved.warmS;
    o.progress(`  warm start from ${cachePath} (it took ${warmS} s)`);
  } else {
    start = await initialTokenWeights(config, o.engine, (r, total) => {
      if ((r.step + 1) % 100 === 0 || r.step + 1 === total) o.progress(`  warm start ${r.step + 1}/${total}: ce ${r.ceLoss.toFixed(3)}, p(expert token) ${r.targetProb.toFixed(3)}`);
    });
    warmS = round((performance.now() - t0) / 1000);
    if (cachePath) {
      mkdirSync(dirname(cachePath), { recursive: true });
      writeFileSync(cachePath, JSON.stringify({ warmS, weights: Object.fromEntries(Object.entries(start.weights).map(([k, v]) => [k, Array.from(v)])) }));
    }
  }
  const { weights, reference } = start;
  const evalSeeds = Array.from({ length: o.evalSeeds }, (_, i) => mixSeed(config.seed, 0xe7a1, i));
  const rows: TokenScheduleRow[] = [];
  for (const s of [0, o.staleness]) {
    const trainer = await createContinuousTrainer(
      {
        ...DEFAULT_TOKEN_TRAINER,
        env: config.env,
        model: config.model,
        algo: config.algo,
        shaping: config.shaping,
        groups: config.rollout.groups,
        episodes: config.rollout.episodes,
        learnerBatch: config.rollout.learnerBatch,
        maxActionTokens: config.rollout.maxActionTokens,
        seed: config.seed,
        scheduling: { maxStaleness: s, kvRows: config.rollout.kvRows },
      },
      o.engine,
      new RealClock(),
      weights,
      config.algo.klCoef > 0 ? reference : undefined,
      config.rollout.workers > 0 ? nodeTokenWorkerOn(o.engineName) : undefined,
    );
    const ms: Record<string, number>[] = [];
    const start = performance.now();
    for (let k = 0; k < o.iterations; k++) {
      ms.push((await trainer.step()).metrics as Record<string, number>);
      const m = ms[k];
      if ((k + 1) % 5 === 0) o.progress(`  staleness ≤ ${s}: it ${k + 1}, success ${m['episode/success_rate'].toFixed(2)}, ${m['perf/episodes_per_s'].toFixed(1)} episodes/s`);
    }
    const wallS = (performance.now() - start) / 1000;
    const greedy = await trainer.evaluate(evalSeeds, 0);
    const sampled = await trainer.evaluate(evalSeeds, 1);
    await trainer.release();
    const sum = (key: string) => ms.reduce((a, m) => a + (m[key] ?? 0), 0);
    const last = ms.slice(-5);
    const rate = (eps: { success: boolean }[]) => eps.filter((e) => e.success).length / eps.length;
    rows.push({
      max_staleness: s,
      episodes_per_s: round(sum('train/batch_episodes') / wallS),
      wall_s: round(wallS),
      iterations: o.iterations,
      success_train: round(last.reduce((a, m) => a + m['episode/success_rate'], 0) / last.length),
      success_eval_greedy: round(rate(greedy)),
      success_eval_sampled: round(rate(sampled)),
      staleness_mean: round(sum('async/staleness_mean') / ms.length),
      staleness_max: Math.max(...ms.map((m) => m['async/staleness_max'])),
      kv_cache_hit_rate: round(sum('perf/kv_cache_hit_rate') / ms.length),
      kv_evictions: sum('async/kv_evictions'),
      episodes_aborted: sum('async/episodes_aborted'),
      tool_wait_ratio: round(sum('perf/tool_wait_s') / wallS),
      wait_s: round(sum('perf/rollout_s') / ms.length),
      train_s: round(sum('perf/train_s') / ms.length),
      prep_s: round(sum('perf/tis_s') / ms.length),
    });
  }
  return { preset, warm_start_s: warmS, rows };
}

function round(x: number): number {
  return Number(x.toFixed(3));
}
