/**
 * Suite `soak`: memory over a long run, per rollout setup: the grid door-key PPO preset with
 * rollouts in the training thread and in 1 and 2 worker threads, and a tool env with a token
 * rollout worker. Each setup runs in its own process; after every iteration a full GC, then
 * heap, external (+ array buffers) and RSS are sampled. The growth of each one's floor over the
 * second half (warm-up excluded: sessions, caches and JIT settle first; floorSlope) says whether
 * something accumulates per iteration: a leak that kept each batch alive grew the heap by
 * ~580 KB per iteration.
 * `flat` is true only when every setup's heap and external slopes are under the noise bounds.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { table } from '../lib/table.ts';
import type { SuiteOptions, SuiteResult } from '../lib/suite.ts';

/** Slopes under these are noise (KB per iteration), measured on setups without a leak. */
export const FLAT_HEAP_KB_PER_IT = 16;
export const FLAT_EXTERNAL_KB_PER_IT = 64;

type Sample = { heap: number; external: number; rss: number };

/**
 * Growth of the floor per step: (min of the later half − min of the earlier half) / the distance
 * between their centres. A leak raises the floor; garbage that a GC frees later (array buffers
 * are released asynchronously, so `external` swings by hundreds of MB) only adds spikes above it.
 */
export function floorSlope(ys: readonly number[]): number {
  const h = Math.floor(ys.length / 2);
  if (h < 1) return 0;
  return (Math.min(...ys.slice(ys.length - h)) - Math.min(...ys.slice(0, h))) / (ys.length - h);
}

function setups(): { name: string; config: unknown; iterations: number }[] {
  const doorKey = JSON.parse(readFileSync('presets/grid-door-key-ppo.json', 'utf8')) as { rollout: Record<string, unknown> } & Record<string, unknown>;
  const grid = (workers: number) => ({ ...doorKey, rollout: { ...doorKey.rollout, workers } });
  const token = {
    env: { id: 'tools/flaky-api', kwargs: { latencyMedianMs: 1 } },
    model: { kind: 'transformer', dModel: 16, nLayers: 1, nHeads: 2, dFF: 32, context: 256 },
    algo: { algo: 'grpo', groupSize: 4, tis: { enabled: true, cap: 2 } },
    rollout: { groups: 2, learnerBatch: 8, maxActionTokens: 8, mode: 'async', maxStaleness: 1, kvRows: 4, workers: 1 },
  };
  return [
    { name: 'grid door-key PPO, workers 0', config: grid(0), iterations: 120 },
    { name: 'grid door-key PPO, workers 1', config: grid(1), iterations: 120 },
    { name: 'grid door-key PPO, workers 2', config: grid(2), iterations: 120 },
    { name: 'flaky-api async, token worker', config: token, iterations: 120 },
  ];
}

export async function runSoak(o: SuiteOptions): Promise<SuiteResult> {
  const scale = o.quick ? 0.2 : Number(o.flags.scale ?? 1);
  const dir = mkdtempSync(join(tmpdir(), 'soak-'));
  const rows = [];
  for (const s of setups()) {
    const iterations = Math.max(10, Math.round(s.iterations * scale));
    const file = join(dir, `${rows.length}.json`);
    writeFileSync(file, JSON.stringify({ ...(s.config as Record<string, unknown>), iterations }));
    o.progress(`soak: ${s.name}, ${iterations} iterations`);
    const out = execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', 'bench/soak/child.ts', file, String(iterations)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 64 << 20 });
    const { samples, wallS } = JSON.parse(out.trim().split('\n').pop()!) as { samples: Sample[]; wallS: number };
    const late = samples.slice(Math.floor(samples.length / 2));
    const kb = (k: keyof Sample) => floorSlope(late.map((x) => x[k])) / 1024;
    const first = samples[0];
    const last = samples[samples.length - 1];
    const heapKbPerIt = kb('heap');
    const externalKbPerIt = kb('external');
    rows.push({
      setup: s.name,
      iterations,
      wallS,
      heapKbPerIt,
      externalKbPerIt,
      rssKbPerIt: kb('rss'),
      heapMb: [first.heap / 2 ** 20, last.heap / 2 ** 20],
      externalMb: [first.external / 2 ** 20, last.external / 2 ** 20],
      rssMb: [first.rss / 2 ** 20, last.rss / 2 ** 20],
      flat: heapKbPerIt < FLAT_HEAP_KB_PER_IT && externalKbPerIt < FLAT_EXTERNAL_KB_PER_IT,
    });
  }
  const f = (x: number) => +x.toFixed(1);
  o.print(
    table(
      ['setup', 'its', 'heap KB/it', 'ext KB/it', 'rss KB/it', 'heap MB start→end', 'rss MB start→end', 'flat'],
      rows.map((r) => [r.setup, r.iterations, f(r.heapKbPerIt), f(r.externalKbPerIt), f(r.rssKbPerIt), `${f(r.heapMb[0])} → ${f(r.heapMb[1])}`, `${f(r.rssMb[0])} → ${f(r.rssMb[1])}`, r.flat ? 'yes' : 'NO']),
    ),
  );
  o.print(`flat = the floor of heap grows < ${FLAT_HEAP_KB_PER_IT} KB/iteration and of external < ${FLAT_EXTERNAL_KB_PER_IT} KB/iteration over the second half (full GC each iteration)`);
  return { suite: 'soak', quick: o.quick, flat: rows.every((r) => r.flat), setups: rows };
}
