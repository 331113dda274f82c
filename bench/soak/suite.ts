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

function setups(): { name: string; config: unknown; iterations: number; every?: number }[] {
  const doorKey = JSON.parse(readFileSync('presets/grid-door-key-ppo.json', 'utf8')) as { rollout: Record<string, unknown> } & Record<string, unknown>;
  const grid = (workers: number) => ({ ...doorKey, rollout: { ...doorKey.rollout, workers } });
  const token = {
    env: { id: 'tools/flaky-api', kwargs: { latencyMedianMs: 1 } },
    model: { kind: 'transformer', dModel: 16, nLayers: 1, nHeads: 2, dFF: 32, context: 256 },
    algo: { algo: 'grpo', groupSize: 4, tis: { enabled: true, cap: 2 } },
    rollout: { groups: 2, learnerBatch: 8, maxActionTokens: 8, mode: 'async', maxStaleness: 1, kvRows: 4, workers: 1 },
  };
  const empty = JSON.parse(readFileSync('presets/grid-empty-8x8-grpo.json', 'utf8')) as Record<string, unknown>;
  return [
    // The long one: 10,000 iterations of the first preset (sampled every 20th, after a full GC).
    { name: 'grid empty-8x8 GRPO, 10k its', config: empty, iterations: 10_000, every: 20 },
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
    const every = s.every ?? 1;
    const out = execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', 'bench/soak/child.ts', file, String(iterations), String(every)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 64 << 20 });
    const { samples, wallS } = JSON.parse(out.trim().split('\n').pop()!) as { samples: Sample[]; wallS: number };
    const late = samples.slice(Math.floor(samples.length / 2));
    // Per iteration: samples are `every` iterations apart.
    const kb = (k: keyof Sample) => floorSlope(late.map((x) => x[k])) / 1024 / every;
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
  o.print(`flat = the floor of heap grows < ${FLAT_HEAP_KB_PER_IT} KB/iteration and of external < ${FLAT_EXTERNAL_KB_PER_IT} KB/iteration over the second half (full GC before each sample)`);
  const minutes = o.quick ? 1 : Number(o.flags['browser-minutes'] ?? 10);
  const browser = minutes > 0 ? browserSoak(minutes, o) : null;
  return { suite: 'soak', quick: o.quick, flat: rows.every((r) => r.flat) && (browser?.flat ?? true), setups: rows, browser };
}

/** The page's heap floor may grow at most this much per minute over the browser soak's second half, MB. */
export const FLAT_BROWSER_HEAP_MB_PER_MIN = 0.5;

/**
 * Chromium, `minutes` of grid-empty-8x8 on WASM with storage on (e2e/soak.e2e.ts, through the
 * e2e harness: a production build served with COOP/COEP): the page's heap after a forced GC, the
 * whole tab (page + workers) as the browser measures it, and the origin's storage use, over time.
 */
function browserSoak(minutes: number, o: SuiteOptions) {
  o.progress(`soak: Chromium, ${minutes} min of grid-empty-8x8 GRPO on WASM with storage on`);
  execFileSync('npx', ['vitest', 'run', '--config', 'vitest.e2e.config.ts', 'e2e/soak.e2e.ts'], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, SOAK_MINUTES: String(minutes), SOAK_EVERY_S: String(minutes >= 5 ? 15 : 5) },
  });
  const { samples, errors } = JSON.parse(readFileSync('e2e/artifacts/soak-browser.json', 'utf8')) as { samples: BrowserSample[]; errors: string[] };
  const mb = (b: number) => b / 2 ** 20;
  const late = samples.slice(Math.floor(samples.length / 2));
  const spanMin = late.length > 1 ? (late[late.length - 1].t - late[0].t) / 60 : 1;
  // floorSlope is per sample; samples are evenly spaced in time ((n − 1) / spanMin per minute).
  const perMin = (k: 'heap' | 'tab') => (mb(floorSlope(late.map((x) => x[k]))) * (late.length - 1)) / Math.max(spanMin, 1e-9);
  const first = samples[0];
  const last = samples[samples.length - 1];
  const at1000 = samples.find((x) => x.iteration >= 1000);
  const r = {
    minutes,
    iterations: last.iteration,
    heapMb: [mb(first.heap), mb(last.heap)],
    heapMaxMb: mb(Math.max(...samples.map((x) => x.heap))),
    heapMbPerMin: perMin('heap'),
    tabMb: [mb(first.tab), mb(last.tab)],
    tabMbPerMin: perMin('tab'),
    storageMb: [mb(first.storage), mb(last.storage)],
    storageAt1000Its: at1000 ? { iteration: at1000.iteration, mb: mb(at1000.storage) } : null,
    errors,
    flat: perMin('heap') < FLAT_BROWSER_HEAP_MB_PER_MIN && errors.length === 0,
  };
  const f = (x: number) => +x.toFixed(1);
  o.print(
    table(
      ['Chromium', 'its', 'page heap MB start→end (max)', 'heap MB/min', 'tab MB start→end', 'tab MB/min', 'storage MB start→end', 'flat'],
      [[`${minutes} min`, r.iterations, `${f(r.heapMb[0])} → ${f(r.heapMb[1])} (${f(r.heapMaxMb)})`, r.heapMbPerMin.toFixed(2), `${f(r.tabMb[0])} → ${f(r.tabMb[1])}`, r.tabMbPerMin.toFixed(2), `${f(r.storageMb[0])} → ${f(r.storageMb[1])}`, r.flat ? 'yes' : 'NO']],
    ),
  );
  o.print(`Chromium flat = the page heap's floor grows < ${FLAT_BROWSER_HEAP_MB_PER_MIN} MB/min over the second half, and no page error`);
  return r;
}

type BrowserSample = { t: number; iteration: number; heap: number; tab: number; storage: number };
