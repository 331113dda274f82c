/**
 * Rollout throughput of worker pools of different sizes on a grid env with the MLP policy
 * (issue 4 §8: 2 workers ≥ 1.7× the env-steps/s of 1 worker on a 2-core machine).
 *
 *   npx tsx src/runtime/pool/scaling.ts [--env grid/empty-8x8] [--slots 32] [--rounds 8] [--json]
 *
 * Pools are measured interleaved (1, 2, 1, 2, ...) after a warm-up batch each, so background
 * load hits both alike; the ratio is the median of per-round ratios. Random-init weights: the
 * episodes are long (most run to the time limit), which is the worst case for the lockstep.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { initWeights } from '../../core/models/types.ts';
import { buildPoolModel, gridMlpSpec, type CollectRequest } from '../../core/trainer/pool.ts';
import { createNodeWorkerPool } from './node.ts';

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
  /** Load average (1 min) when the measurement ended. */
  loadavg: number;
  /**
   * Linux only: for the larger pool's busiest threads (its workers), the shares of wall time
   * spent on a CPU and runnable but waiting for one (/proc/self/task/<tid>/schedstat). On-CPU +
   * waiting ≈ 1 means the workers never block on each other: any shortfall is CPU contention.
   */
  workerThreads?: { onCpu: number; waiting: number }[];
}

/** Per-thread [on-CPU ns, runqueue-wait ns] of this process, or null off Linux. */
function schedstat(): Map<string, [number, number]> | null {
  try {
    const out = new Map<string, [number, number]>();
    for (const t of readdirSync('/proc/self/task')) {
      const [cpu, wait] = readFileSync(`/proc/self/task/${t}/schedstat`, 'utf8').split(' ').map(Number);
      out.set(t, [cpu, wait]);
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

export async function measurePoolScaling(o: { env?: string; slots?: number; rounds?: number; sizes?: [number, number] } = {}): Promise<ScalingResult> {
  const envId = o.env ?? 'grid/empty-8x8';
  const slots = o.slots ?? 32;
  const rounds = o.rounds ?? 8;
  const [small, large] = o.sizes ?? [1, 2];
  const spec = gridMlpSpec({ id: envId }, { hidden: [64, 64] });
  const weights = initWeights(buildPoolModel(spec), 1);
  const pools = [await createNodeWorkerPool({ size: small, model: spec, weights }), await createNodeWorkerPool({ size: large, model: spec, weights })];
  try {
    const req = (r: number): CollectRequest => ({
      env: { id: envId },
      seeds: Array.from({ length: slots }, (_, i) => 1000 * r + i),
      groups: new Array(slots).fill(-1),
      samplingSeed: r,
    });
    for (const p of pools) await p.collect(req(-1)); // sessions and JIT warm
    const rates: number[][] = [[], []];
    const cpu = [0, 0];
    const steps = [0, 0];
    const sched = new Map<string, [number, number]>();
    let largeWallNs = 0;
    for (let r = 0; r < rounds; r++) {
      for (let k = 0; k < 2; k++) {
        const c0 = process.cpuUsage();
        const s0 = k === 1 ? schedstat() : null;
        const t0 = performance.now();
        const res = await pools[k].collect(req(r));
        rates[k].push(res.envSteps / ((performance.now() - t0) / 1000));
        const s1 = s0 ? schedstat() : null;
        if (s0 && s1) {
          largeWallNs += (performance.now() - t0) * 1e6;
          for (const [t, [c, w]] of s1) {
            const [c0_, w0] = s0.get(t) ?? [c, w];
            const acc = sched.get(t) ?? [0, 0];
            sched.set(t, [acc[0] + c - c0_, acc[1] + w - w0]);
          }
        }
        const c = process.cpuUsage(c0);
        cpu[k] += (c.user + c.system) / 1e6;
        steps[k] += res.envSteps;
      }
    }
    return {
      env: envId,
      slots,
      envStepsPerS: { [small]: median(rates[0]), [large]: median(rates[1]) },
      scaling: median(rates[1].map((x, i) => x / rates[0][i])),
      envStepsPerCpuS: { [small]: steps[0] / cpu[0], [large]: steps[1] / cpu[1] },
      loadavg: loadavg()[0],
      workerThreads: largeWallNs
        ? [...sched.values()]
            .sort((a, b) => b[0] - a[0])
            .slice(0, large)
            .map(([c, w]) => ({ onCpu: c / largeWallNs, waiting: w / largeWallNs }))
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
  });
  if (process.argv.includes('--json')) console.log(JSON.stringify(res));
  else {
    for (const [k, v] of Object.entries(res.envStepsPerS)) console.log(`${k} worker(s): ${v.toFixed(0)} env-steps/s`);
    for (const [k, v] of Object.entries(res.envStepsPerCpuS)) console.log(`${k} worker(s): ${v.toFixed(0)} env-steps per CPU-second`);
    for (const [i, w] of (res.workerThreads ?? []).entries()) console.log(`busiest thread ${i + 1} of the larger pool: on-CPU ${w.onCpu.toFixed(2)}, runnable but waiting ${w.waiting.toFixed(2)} (shares of wall)`);
    console.log(`scaling ${res.scaling.toFixed(2)}× (${res.env}, ${res.slots} slots; load average ${res.loadavg.toFixed(1)})`);
  }
}
