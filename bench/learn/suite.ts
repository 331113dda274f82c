/**
 * `npm run bench -- learn [--json] [--quick] [--presets a,b] [--budget S] [--eval N] [--parts learn,async,pool] [--cache DIR] [--engine ort-web-wasm|ort-node]`
 *
 * Learning speed: each preset trains headless (CLI core, one thread of ort-web
 * WASM as in the browser, or of onnxruntime-node with --engine ort-node) until its target success rate holds for 3 iterations in a row or its time budget runs
 * out. Reports success (mean of the last 3 iterations' sampled episodes), wall seconds to the
 * target (or the budget; an imitation warm start counts) and iterations. Then sync vs async
 * token training on flaky-api at equal iterations (tokenAsync.ts; plus the same comparison on
 * the grid with the MLP as `async_grid`), and 1 vs 2 rollout workers on the grid with the MLP.
 *
 * Presets with an imitation warm start also score N held-out seeds (--eval, default 512) right
 * after the warm start and after the preset's RL iterations (`heldout` in their row): what RL
 * added on top of imitation, greedy and sampled.
 *
 * Last line with --json:
 *   {"suite":"learn","results":[{"preset":...,"success":0.97,"wall_s":41,"iterations":120,"target":...,"met":true}],
 *    "async":{"speedup":...,"success_sync":...,"success_async":...},"pool":{"scaling":...}}
 */
import { loadavg } from 'node:os';
import { heldOutSeeds } from '../../src/core/util/rng.ts';
import { createTrainer } from '../../src/core/trainer/createTrainer.ts';
import type { RunTrainer } from '../../src/core/trainer/api.ts';
import { loadNodeEngine, type NodeEngineName } from '../../src/runtime/engine/node.ts';
import { createNodeWorkerPool } from '../../src/runtime/pool/node.ts';
import { compareSchedules } from './asyncCompare.ts';
import { measurePoolScaling } from './poolScaling.ts';
import { loadRunConfig } from '../../src/cli/presets.ts';
import { compareTokenSchedules } from './tokenAsync.ts';
import { pairedFlips, sig, type PairedFlips } from '../lib/stats.ts';
import type { SuiteOptions, SuiteResult } from '../lib/suite.ts';
import { UsageError } from '../lib/suite.ts';

/** The learning targets on a 2-core machine, CLI, no GPU. */
const TARGETS: Record<string, { success: number; budgetS: number }> = {
  'grid-empty-8x8-grpo': { success: 0.95, budgetS: 60 },
  'grid-door-key-ppo': { success: 0.9, budgetS: 300 },
  'calc-grpo': { success: 0.9, budgetS: 600 },
  'kv-lookup-grpo': { success: 0.8, budgetS: 600 },
  // Set from CLI runs, not yet run through this bench: the 800-step warm start takes 200-320 s
  // on 2 busy cores; the training batches then succeed 0.93-0.94 (seeds 1, 2) but only 0.53
  // (seed 3, the preset's seed; its copy formed late) after 10 iterations (src/core/envs/tools/README.md).
  'memory-grpo': { success: 0.6, budgetS: 600 },
};

/** Presets the default run covers (the token ones take most of the 10 min budget each). */
const DEFAULT_PRESETS = Object.keys(TARGETS);

/** Held-out exact-success rates of one policy: greedy (temperature 0) and sampled (temperature 1). */
export interface HeldOutRates {
  greedy: number;
  sampled: number;
}

/** Per-seed outcomes behind HeldOutRates, for the paired comparison. */
interface HeldOutOutcomes {
  greedy: boolean[];
  sampled: boolean[];
}

export interface LearnRow {
  preset: string;
  success: number;
  wall_s: number;
  iterations: number;
  target: number;
  budget_s: number;
  met: boolean;
  /**
   * Presets with an imitation warm start: the same held-out seeds scored right after the warm
   * start and after the preset's RL iterations (RL should improve on the warm start).
   * Evaluation time is not billed to wall_s; iterations past the target are not either.
   */
  heldout?: {
    seeds: number;
    warm_start: HeldOutRates;
    after_rl: HeldOutRates;
    rl_iterations: number;
    /** after_rl − warm_start, sampled (what the policy does as it acts, the RL objective). */
    gain_sampled: number;
    gain_greedy: number;
    /** Seeds that went wrong → right and right → wrong, with the exact sign-test p (same seeds, same sampling streams). */
    flips_sampled: PairedFlips;
    flips_greedy: PairedFlips;
  };
}

async function heldOutOutcomes(trainer: RunTrainer, seeds: readonly number[]): Promise<HeldOutOutcomes> {
  const wins = (eps: readonly { success: boolean }[]) => eps.map((e) => e.success);
  return { greedy: wins(await trainer.evaluate(seeds, 0)), sampled: wins(await trainer.evaluate(seeds, 1)) };
}

function rates(o: HeldOutOutcomes): HeldOutRates {
  const rate = (xs: readonly boolean[]) => Number((xs.filter(Boolean).length / Math.max(1, xs.length)).toFixed(3));
  return { greedy: rate(o.greedy), sampled: rate(o.sampled) };
}

async function learnPreset(id: string, target: number, budgetS: number, engineName: NodeEngineName, evalSeeds: number, progress: (t: string) => void): Promise<LearnRow> {
  const config = loadRunConfig(id);
  const engine = await loadNodeEngine(engineName);
  // The clock starts before the trainer exists: a warm start is part of the time to the target.
  const t0 = performance.now();
  const trainer = await createTrainer({ ...config, iterations: 1_000_000 }, engine, {
    workerPool: (size) => (model, weights) => createNodeWorkerPool({ size, model, weights }),
    onWarmStart: (r, total) => {
      if (r.step % 200 === 0) progress(`  ${id}: warm start ${r.step}/${total}, ${((performance.now() - t0) / 1000).toFixed(0)} s`);
    },
  });
  const seeds = config.warmStart && evalSeeds > 0 ? heldOutSeeds(evalSeeds) : [];
  let evalMs = 0;
  const evaluate = async (when: string): Promise<HeldOutOutcomes> => {
    const e0 = performance.now();
    const o = await heldOutOutcomes(trainer, seeds);
    evalMs += performance.now() - e0;
    const r = rates(o);
    progress(`  ${id}: held-out (${seeds.length} seeds) ${when}: greedy ${r.greedy.toFixed(3)}, sampled ${r.sampled.toFixed(3)}`);
    return o;
  };
  const warm = seeds.length ? await evaluate('after the warm start') : undefined;
  const elapsed = () => (performance.now() - t0 - evalMs) / 1000;
  const recent: number[] = [];
  let iterations = 0;
  let wall: number;
  let met = false;
  let heldout: LearnRow['heldout'];
  try {
    while ((wall = elapsed()) < budgetS) {
      const r = await trainer.step();
      iterations++;
      recent.push(r.metrics['episode/success_rate'] ?? 0);
      if (recent.length > 3) recent.shift();
      if (iterations % 5 === 0) progress(`  ${id}: it ${iterations}, ${wall.toFixed(1)} s, success ${recent[recent.length - 1].toFixed(2)}`);
      if (recent.length === 3 && Math.min(...recent) >= target) {
        met = true;
        wall = elapsed();
        break;
      }
    }
    if (warm) {
      // The warm-start comparison is at the preset's own RL length, whenever the target was met.
      let rlIterations = iterations;
      if (met) {
        for (; rlIterations < config.iterations; rlIterations++) {
          await trainer.step();
          if ((rlIterations + 1) % 25 === 0) progress(`  ${id}: it ${rlIterations + 1}/${config.iterations} (past the target, untimed)`);
        }
      }
      const after = await evaluate(`after ${rlIterations} RL iterations`);
      const [w, a] = [rates(warm), rates(after)];
      const flips = (x: readonly boolean[], y: readonly boolean[]) => {
        const f = pairedFlips(x, y);
        return { ...f, p: sig(f.p, 2) };
      };
      heldout = {
        seeds: seeds.length,
        warm_start: w,
        after_rl: a,
        rl_iterations: rlIterations,
        gain_sampled: Number((a.sampled - w.sampled).toFixed(3)),
        gain_greedy: Number((a.greedy - w.greedy).toFixed(3)),
        flips_sampled: flips(warm.sampled, after.sampled),
        flips_greedy: flips(warm.greedy, after.greedy),
      };
    }
  } finally {
    await trainer.release();
  }
  const success = recent.reduce((a, b) => a + b, 0) / Math.max(1, recent.length);
  return { preset: id, success: Number(success.toFixed(3)), wall_s: Number(wall.toFixed(1)), iterations, target, budget_s: budgetS, met, ...(heldout ? { heldout } : {}) };
}

export async function runLearn(opts: SuiteOptions): Promise<SuiteResult> {
  const presets = typeof opts.flags.presets === 'string' ? opts.flags.presets.split(',') : DEFAULT_PRESETS;
  const parts = typeof opts.flags.parts === 'string' ? opts.flags.parts.split(',') : ['learn', 'async', 'pool'];
  for (const p of parts) if (!['learn', 'async', 'pool'].includes(p)) throw new UsageError(`learn: unknown part '${p}' (parts: learn, async, pool)`);
  const engineFlag = opts.flags.engine ?? 'ort-web-wasm';
  if (engineFlag !== 'ort-web-wasm' && engineFlag !== 'ort-node') throw new UsageError(`learn: --engine must be ort-web-wasm or ort-node, got '${String(engineFlag)}'`);
  const engineName: NodeEngineName = engineFlag;
  for (const p of presets) if (!TARGETS[p]) throw new UsageError(`learn: no target for preset '${p}' (known: ${Object.keys(TARGETS).join(', ')})`);
  const evalSeeds = typeof opts.flags.eval === 'string' ? Number(opts.flags.eval) : opts.quick ? 32 : 512;
  if (!(Number.isInteger(evalSeeds) && evalSeeds >= 0)) throw new UsageError('learn: --eval must be a whole number of held-out seeds (0 = none)');
  const budgetOverride = typeof opts.flags.budget === 'string' ? Number(opts.flags.budget) : undefined;
  if (budgetOverride !== undefined && !(budgetOverride > 0)) throw new UsageError(`learn: --budget must be a positive number of seconds`);
  const results: LearnRow[] = [];
  for (const id of parts.includes('learn') ? presets : []) {
    const t = TARGETS[id];
    const budget = budgetOverride ?? (opts.quick ? Math.min(20, t.budgetS) : t.budgetS);
    opts.progress(`learn: ${id} (target success ≥ ${t.success} within ${budget} s)`);
    results.push(await learnPreset(id, t.success, budget, engineName, evalSeeds, opts.progress));
  }
  opts.print(
    ['preset                 success  wall_s  iters  target        met', ...results.map((r) => `${r.preset.padEnd(22)} ${r.success.toFixed(3).padStart(7)} ${r.wall_s.toFixed(1).padStart(7)} ${String(r.iterations).padStart(6)}  ≥${r.target} in ${r.budget_s}s  ${r.met ? 'yes' : 'NO'}`)].join('\n'),
  );
  for (const r of results) {
    const h = r.heldout;
    if (!h) continue;
    const f = (x: number) => x.toFixed(3);
    const signed = (x: number) => `${x >= 0 ? '+' : ''}${f(x)}`;
    const moved = (x: PairedFlips) => `${x.fixed} seeds fixed, ${x.broken} broken, p ${x.p}`;
    opts.print(
      `${r.preset}: held-out exact success on ${h.seeds} seeds, warm start -> after ${h.rl_iterations} RL iterations: ` +
        `sampled ${f(h.warm_start.sampled)} -> ${f(h.after_rl.sampled)} (${signed(h.gain_sampled)}; ${moved(h.flips_sampled)}), ` +
        `greedy ${f(h.warm_start.greedy)} -> ${f(h.after_rl.greedy)} (${signed(h.gain_greedy)}; ${moved(h.flips_greedy)})`,
    );
  }

  let asyncResult: Record<string, unknown> | null = null;
  let asyncGrid: Record<string, unknown> | null = null;
  if (parts.includes('async')) {
    opts.progress('learn: sync vs async token training (flaky-api-async: warm start, then GRPO at staleness 0 and 2)');
    const engine = await loadNodeEngine(engineName);
    const cacheDir = typeof opts.flags.cache === 'string' ? opts.flags.cache : undefined;
    const cmp = await compareTokenSchedules({ engine, engineName, iterations: opts.quick ? 6 : 30, staleness: 2, evalSeeds: opts.quick ? 32 : 128, progress: opts.progress, cacheDir });
    const [sy, as] = cmp.rows;
    asyncResult = {
      env: 'tools/flaky-api',
      engine: engineName,
      max_staleness: 2,
      speedup: Number((as.episodes_per_s / sy.episodes_per_s).toFixed(2)),
      success_sync: sy.success_eval_sampled,
      success_async: as.success_eval_sampled,
      warm_start_s: cmp.warm_start_s,
      sync: sy,
      async: as,
    };
    opts.print(
      `async (staleness ≤ 2) vs sync on flaky-api: ${String(asyncResult.speedup)}× episodes/s (${as.episodes_per_s} vs ${sy.episodes_per_s}); ` +
        `held-out success sampled ${as.success_eval_sampled} vs ${sy.success_eval_sampled}, greedy ${as.success_eval_greedy} vs ${sy.success_eval_greedy}; ` +
        `async KV hit rate ${as.kv_cache_hit_rate} (${as.kv_evictions} evictions), ${as.episodes_aborted} episodes aborted as too stale`,
    );

    opts.progress('learn: sync vs async (grid/empty-5x5, GRPO, 1 rollout worker)');
    const rows = await compareSchedules({ iterations: opts.quick ? 6 : 20, staleness: [0, 2], workers: 1 });
    const sync = rows.find((r) => r.maxStaleness === 0)!;
    const asyn = rows.find((r) => r.maxStaleness === 2)!;
    asyncGrid = {
      env: 'grid/empty-5x5',
      max_staleness: 2,
      speedup: Number((asyn.episodesPerS / sync.episodesPerS).toFixed(2)),
      success_sync: Number(sync.success.toFixed(3)),
      success_async: Number(asyn.success.toFixed(3)),
      staleness_mean: Number(asyn.stalenessMean.toFixed(2)),
    };
    opts.print(`grid async (staleness ≤ 2) vs sync: ${String(asyncGrid.speedup)}× episodes/s; success ${String(asyncGrid.success_async)} vs ${String(asyncGrid.success_sync)}`);
  }

  let pool: Record<string, unknown> | null = null;
  if (parts.includes('pool')) {
    opts.progress('learn: rollout pool 1 vs 2 workers (grid/empty-8x8, MLP)');
    const scaling = await measurePoolScaling({ rounds: opts.quick ? 3 : 8, warmupS: opts.quick ? 3 : 10 });
    pool = {
      env: scaling.env,
      scaling: Number(scaling.scaling.toFixed(2)),
      // From CPU cost per env step (Linux): what the pair would reach on otherwise idle cores.
      // Under shared load the wall ratio cannot show it (sched_autogroup splits the CPUs per session).
      projected_scaling: scaling.projectedScaling === undefined ? null : Number(scaling.projectedScaling.toFixed(2)),
      env_steps_per_s: scaling.envStepsPerS,
      env_steps_per_cpu_s: scaling.envStepsPerCpuS,
      env_steps_per_worker_cpu_s: scaling.envStepsPerWorkerCpuS ?? null,
      loadavg: [Number(scaling.loadavgStart.toFixed(2)), Number(scaling.loadavg.toFixed(2))],
    };
    opts.print(`pool: 2 workers = ${String(pool.scaling)}× the env-steps/s of 1 (per CPU-second: ${JSON.stringify(pool.env_steps_per_cpu_s)})`);
  }
  return { suite: 'learn', quick: opts.quick, results, async: asyncResult, async_grid: asyncGrid, pool, machine: { loadavg1m: Number(loadavg()[0].toFixed(2)) } };
}
