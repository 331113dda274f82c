/**
 * Rollout throughput of worker pools of different sizes on a grid env with the MLP policy
 * (target: 2 workers ≥ 1.7× the env-steps/s of 1 worker on a 2-core machine).
 *
 *   npx tsx bench/learn/poolScaling.ts [--env grid/empty-8x8] [--slots 64] [--rounds 8] [--warmup 3] [--json]
 *
 * Pools are measured interleaved (1, 2, 2, 1, 1, 2, ...) after a warm-up of a few seconds each,
 * so background load hits both alike; the ratio is the median of per-round ratios. Random-init
 * weights: the episodes are long (most run to the time limit), which is the worst case for the
 * lockstep. On a shared machine read the per-CPU-second numbers too: a wall-clock ratio of 1.7
 * needs 1.7 cores free for this process.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { initWeights } from '../../src/core/models/types.ts';
import { buildPoolModel, gridMlpSpec, type CollectRequest } from '../../src/core/rollout/stepPool.ts';
import { createNodeWorkerPool } from '../../src/runtime/pool/node.ts';
import type { WorkerRolloutPool } from '../../src/runtime/pool/workerPool.ts';

export interface ScalingResult {
  env: string;
  slots: number;
  /** Median env-steps/s per pool size, keyed by size. */
  envStepsPerS: Record<number, number>;
  /** Median over rounds of (steps/s with the larger pool) / (steps/s with 1 worker). */
  scaling: number;
  /**
   * Env steps per CPU-second (all threads of this process), per pool size. Equal values mean
   * the code scales and a wall-clock shortfall is cores taken by other processes.
   */
  envStepsPerCpuS: Record<number, number>;
  /**
   * Linux only: env steps per CPU-second of the pool's own threads (its workers), per pool size:
   * the rollout work proper, without the main thread and V8's shared helper threads.
   */
  envStepsPerWorkerCpuS?: Record<number, number>;
  /**
   * Linux only: where the process's CPU went while each pool ran, in cores (CPU-seconds per
   * wall second): the pool's workers, and the rest (main thread, V8 helpers: GC, wasm tier-up).
   */
  cores?: Record<number, { workers: number; rest: number }>;
  /**
   * Linux only: the ratio this machine's cores would give with nothing else running, from the
   * CPU cost per step measured here: a pool of W workers can run at most
   * min(cores × steps per process CPU-second, W × steps per worker-thread CPU-second).
   * On a shared machine the wall-clock ratio says little: with sched_autogroup (on here) each
   * session gets an equal share of the CPUs however many threads it runs, so while other
   * sessions are busy the larger pool gets no more CPU than the smaller one.
   */
  projectedScaling?: number;
  /** Load average (1 min) when the measurement started and ended. */
  loadavg: number;
  loadavgStart: number;
  /**
   * Linux only: for the larger pool's workers, the shares of wall time spent on a CPU and
   * runnable but waiting for one (/proc/self/task/<tid>/schedstat). On-CPU + waiting ≈ 1 means
   * the workers never block on each other: any shortfall is CPU contention.
   */
  workerThreads?: { onCpu: number; waiting: number }[];
}

/** Per-thread [on-CPU ns, runqueue-wait ns] of this process, or null off Linux. */
function schedstat(): Map<string, [number, number]> | null {
  try {
    const out = new Map<string, [number, number]>();
    for (const t of readdirSync('/proc/self/task')) {
      try {
        const [cpu, wait] = readFileSync(`/proc/self/task/${t}/schedstat`, 'utf8').split(' ').map(Number);
        out.set(t, [cpu, wait]);
      } catch {
        // The thread ended between the listing and the read.
      }
    }
    return out;
  } catch {
    return null;
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Per-pool accumulators over the measured rounds. */
interface Tally {
  rates: number[];
  steps: number;
  wallS: number;
  /** Process CPU-seconds (all threads). */
  cpuS: number;
  /** CPU-seconds of the pool's own threads (Linux). */
  workerCpuS: number;
  /** Per pool thread: [on-CPU ns, waiting ns]. */
  threads: Map<string, [number, number]>;
}

export async function measurePoolScaling(o: { env?: string; slots?: number; rounds?: number; sizes?: [number, number]; /** Seconds of warm-up per pool (default 10). */ warmupS?: number } = {}): Promise<ScalingResult> {
  const envId = o.env ?? 'grid/empty-8x8';
  // 64 = the grid presets' batch (grid-empty-8x8-grpo: 8 groups × 8 episodes per collect).
  const slots = o.slots ?? 64;
  const rounds = o.rounds ?? 8;
  const [small, large] = o.sizes ?? [1, 2];
  const warmupS = o.warmupS ?? 10;
  const loadavgStart = loadavg()[0];
  const spec = gridMlpSpec({ id: envId }, { hidden: [64, 64] });
  const weights = initWeights(buildPoolModel(spec), 1);
  // Threads each pool adds (its workers, and any loader thread they start), to charge CPU to it.
  const ownThreads: Set<string>[] = [];
  const pools: WorkerRolloutPool[] = [];
  try {
    for (const size of [small, large]) {
      const before = new Set(schedstat()?.keys() ?? []);
      pools.push(await createNodeWorkerPool({ size, model: spec, weights }));
      ownThreads.push(new Set([...(schedstat()?.keys() ?? [])].filter((t) => !before.has(t))));
    }
    const req = (r: number): CollectRequest => ({
      env: { id: envId },
      seeds: Array.from({ length: slots }, (_, i) => 1000 * r + i),
      groups: new Array(slots).fill(-1),
      samplingSeed: r,
    });
    // Warm up until V8 has (mostly) finished tiering up each worker's copy of the ORT wasm
    // module: TurboFan compiles hot functions on a background thread for ~5–15 s after start
    // (longer under load, it runs at low priority), and that CPU would be billed to the rounds.
    for (const p of pools) {
      const t0 = performance.now();
      for (let k = 0; k < 2 || performance.now() - t0 < warmupS * 1000; k++) await p.collect(req(-1 - k));
    }
    const tally: Tally[] = pools.map(() => ({ rates: [], steps: 0, wallS: 0, cpuS: 0, workerCpuS: 0, threads: new Map() }));
    for (let r = 0; r < rounds; r++) {
      // Alternate which pool goes first, so a drift in background load hits both alike.
      for (const k of r % 2 ? [1, 0] : [0, 1]) {
        const c0 = process.cpuUsage();
        const s0 = schedstat();
        const t0 = performance.now();
        const res = await pools[k].collect(req(r));
        const wallS = (performance.now() - t0) / 1000;
        const s1 = schedstat();
        const c = process.cpuUsage(c0);
        const t = tally[k];
        t.rates.push(res.envSteps / wallS);
        t.steps += res.envSteps;
        t.wallS += wallS;
        t.cpuS += (c.user + c.system) / 1e6;
        if (s0 && s1) {
          for (const tid of ownThreads[k]) {
            const a = s0.get(tid);
            const b = s1.get(tid);
            if (!a || !b) continue;
            t.workerCpuS += (b[0] - a[0]) / 1e9;
            const acc = t.threads.get(tid) ?? [0, 0];
            t.threads.set(tid, [acc[0] + b[0] - a[0], acc[1] + b[1] - a[1]]);
          }
        }
      }
    }
    const linux = tally.every((t) => t.threads.size > 0);
    const bySize = <T>(f: (t: Tally) => T): Record<number, T> => ({ [small]: f(tally[0]), [large]: f(tally[1]) });
    const cores = availableParallelism();
    const ceiling = (t: Tally, size: number) => Math.min((cores * t.steps) / t.cpuS, (size * t.steps) / t.workerCpuS);
    return {
      env: envId,
      slots,
      envStepsPerS: bySize((t) => median(t.rates)),
      scaling: median(tally[1].rates.map((x, i) => x / tally[0].rates[i])),
      envStepsPerCpuS: bySize((t) => t.steps / t.cpuS),
      envStepsPerWorkerCpuS: linux ? bySize((t) => t.steps / t.workerCpuS) : undefined,
      cores: linux ? bySize((t) => ({ workers: t.workerCpuS / t.wallS, rest: (t.cpuS - t.workerCpuS) / t.wallS })) : undefined,
      projectedScaling: linux ? ceiling(tally[1], large) / ceiling(tally[0], small) : undefined,
      loadavg: loadavg()[0],
      loadavgStart,
      workerThreads: linux
        ? [...tally[1].threads.values()]
            .sort((a, b) => b[0] - a[0])
            .slice(0, large)
            .map(([c, w]) => ({ onCpu: c / 1e9 / tally[1].wallS, waiting: w / 1e9 / tally[1].wallS }))
        : undefined,
    };
  } finally {
    await Promise.all(pools.map((p) => p.close()));
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const arg = (name: string) => {
    const i = process.argv.indexOf(`--${name}`);
    return i >= 0 ? process.argv[i + 1] : undefined;
  };
  const res = await measurePoolScaling({
    env: arg('env'),
    slots: arg('slots') ? Number(arg('slots')) : undefined,
    rounds: arg('rounds') ? Number(arg('rounds')) : undefined,
    warmupS: arg('warmup') ? Number(arg('warmup')) : undefined,
  });
  if (process.argv.includes('--json')) console.log(JSON.stringify(res));
  else {
    for (const [k, v] of Object.entries(res.envStepsPerS)) console.log(`${k} worker(s): ${v.toFixed(0)} env-steps/s`);
    for (const [k, v] of Object.entries(res.envStepsPerCpuS)) {
      const w = res.envStepsPerWorkerCpuS?.[Number(k)];
      const c = res.cores?.[Number(k)];
      console.log(`${k} worker(s): ${v.toFixed(0)} env-steps per CPU-second` + (w ? ` (${w.toFixed(0)} per worker-thread CPU-second; cores busy: workers ${c!.workers.toFixed(2)}, main + V8 helpers ${c!.rest.toFixed(2)})` : ''));
    }
    for (const [i, w] of (res.workerThreads ?? []).entries()) console.log(`busiest thread ${i + 1} of the larger pool: on-CPU ${w.onCpu.toFixed(2)}, runnable but waiting ${w.waiting.toFixed(2)} (shares of wall)`);
    console.log(`scaling ${res.scaling.toFixed(2)}× (${res.env}, ${res.slots} slots; load average ${res.loadavgStart.toFixed(1)} → ${res.loadavg.toFixed(1)})`);
    if (res.projectedScaling) console.log(`projected on ${availableParallelism()} idle cores from CPU cost per step: ${res.projectedScaling.toFixed(2)}×`);
  }
}
