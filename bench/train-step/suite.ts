/**
 * Suite `train-step`: milliseconds per full train step (forward, PPO loss, backward, Adam) at
 * batch 64, for our ONNX train-step graph against the peers, on the same model, loss, weights
 * and batch. Implementations are interleaved round-robin (lib/interleave.ts).
 */
import os from 'node:os';
import { interleave } from '../lib/interleave.ts';
import { quantile, sig, summarize } from '../lib/stats.ts';
import type { Summary } from '../lib/stats.ts';
import { table } from '../lib/table.ts';
import { UsageError } from '../lib/suite.ts';
import type { SuiteOptions, SuiteResult } from '../lib/suite.ts';
import { MODELS, initParams, makeBatch, paramCount } from './models.ts';
import { withoutWorker } from './worker-guard.ts';
import type { Batch, ModelConfig, Params, TrainStep } from './models.ts';

export const IMPLS = ['ort-web-wasm', 'tfjs-wasm', 'jax-js-wasm', 'ort-node'] as const;
/** Run only when named in --impls: tfjs with its stock MatMul gradient (not in the ratios). */
export const EXTRA_IMPLS = ['tfjs-wasm-stock'] as const;
export type ImplName = (typeof IMPLS)[number] | (typeof EXTRA_IMPLS)[number];

/** Ours: the engine's train-step graph on onnxruntime-web WASM. */
export const OURS: ImplName = 'ort-web-wasm';

type Factory = (cfg: ModelConfig, params: Params, batch: Batch) => Promise<TrainStep>;

/** Loaded lazily so that one impl's missing piece does not stop the others from running. */
const FACTORIES: Record<ImplName, () => Promise<Factory>> = {
  'ort-web-wasm': async () => (await import('./ort.ts')).ortFactory('web-wasm'),
  'ort-node': async () => (await import('./ort.ts')).ortFactory('node'),
  'tfjs-wasm': async () => (await import('./tfjs.ts')).createTfjsTrainStep,
  'tfjs-wasm-stock': async () => {
    const { createTfjsTrainStep } = await import('./tfjs.ts');
    return (cfg, params, batch) => createTfjsTrainStep(cfg, params, batch, 'stock');
  },
  // jax-js must first be evaluated with no global Worker (worker-guard.ts).
  'jax-js-wasm': () => withoutWorker(async () => (await import('./jax.ts')).createJaxTrainStep),
};

export const BENCH_MODELS = ['mlp-76k', 'transformer-1m'] as const;
type BenchModel = (typeof BENCH_MODELS)[number];

/**
 * Rounds per model. The transformer step (64 x 32 = 2048 tokens, ~12 GFLOP) takes about a
 * second per implementation on a 2-core machine, so it gets fewer rounds than the MLP.
 */
const ROUNDS: Record<BenchModel, { full: { warmup: number; rounds: number }; quick: { warmup: number; rounds: number } }> = {
  'mlp-76k': { full: { warmup: 30, rounds: 300 }, quick: { warmup: 3, rounds: 10 } },
  'transformer-1m': { full: { warmup: 3, rounds: 20 }, quick: { warmup: 1, rounds: 2 } },
};

/** Ratio targets: peer time / our time must be at least `min`; ours / ort-node at most `max`. */
const TARGETS = [
  { key: 'tfjs/ours', num: 'tfjs-wasm', den: OURS, min: 3 },
  { key: 'jax/ours', num: 'jax-js-wasm', den: OURS, min: 1.2 },
  { key: 'ours/ortnode', num: OURS, den: 'ort-node', max: 2 },
] as const satisfies readonly { key: string; num: ImplName; den: ImplName; min?: number; max?: number }[];

export interface RatioResult {
  /** Ratio of the two medians; pass/fail is judged on this. */
  value: number | null;
  /**
   * Median over rounds of the per-round ratio. Both runs of a round saw about the same
   * background load, so this is steadier than `value` on a busy machine. null when unpaired.
   */
  paired: number | null;
  target: string;
  /** null when one side did not run. */
  pass: boolean | null;
}

/** Ratios against the targets from per-impl samples (ms, aligned by round). */
export function computeRatios(samples: Partial<Record<ImplName, readonly number[]>>): Record<string, RatioResult> {
  const out: Record<string, RatioResult> = {};
  for (const t of TARGETS) {
    const a = samples[t.num];
    const b = samples[t.den];
    const target = 'min' in t ? `>=${t.min}` : `<=${t.max}`;
    if (!a?.length || !b?.length) {
      out[t.key] = { value: null, paired: null, target, pass: null };
      continue;
    }
    const value = sig(quantile(a, 0.5) / quantile(b, 0.5));
    const paired = a.length === b.length ? sig(quantile(a.map((x, i) => x / b[i]), 0.5)) : null;
    const pass = 'min' in t ? value >= t.min : value <= t.max;
    out[t.key] = { value, paired, target, pass };
  }
  return out;
}

function parseList<T extends string>(flag: string | true | undefined, defaults: readonly T[], what: string, extra: readonly T[] = []): T[] {
  const allowed = [...defaults, ...extra];
  if (flag === undefined) return [...defaults];
  if (flag === true) throw new UsageError(`--${what} needs a comma-separated list (one of: ${allowed.join(', ')})`);
  const items = flag.split(',').map((s) => s.trim());
  const bad = items.filter((s) => !(allowed as readonly string[]).includes(s));
  if (bad.length > 0) throw new UsageError(`--${what}: unknown ${bad.join(', ')} (known: ${allowed.join(', ')})`);
  return items as T[];
}

function parseCount(flag: string | true | undefined, what: string): number | undefined {
  if (flag === undefined) return undefined;
  const n = Number(flag);
  if (flag === true || !Number.isInteger(n) || n < 0) throw new UsageError(`--${what} needs a non-negative integer, got ${String(flag)}`);
  return n;
}

/** Machine context for reading the numbers: a loaded 2-core box inflates every median. */
function machine(): Record<string, unknown> {
  return { node: process.version, cpus: os.cpus().length, cpu: os.cpus()[0]?.model ?? 'unknown', loadavg1m: sig(os.loadavg()[0]) };
}

export async function runTrainStep(opts: SuiteOptions): Promise<SuiteResult> {
  const models = parseList(opts.flags.models, BENCH_MODELS, 'models');
  const impls = parseList<ImplName>(opts.flags.impls, IMPLS, 'impls', EXTRA_IMPLS);
  const roundsOverride = parseCount(opts.flags.rounds, 'rounds');
  const warmupOverride = parseCount(opts.flags.warmup, 'warmup');
  const envStart = machine();
  const schedule: Record<string, { warmup: number; rounds: number }> = {};
  const results: ({ model: string; impl: ImplName } & Summary)[] = [];
  const skipped: { model: string; impl: ImplName; reason: string }[] = [];
  const meta: Partial<Record<ImplName, TrainStep['meta']>> = {};
  const ratios: Record<string, Record<string, RatioResult>> = {};
  const rows: (string | number)[][] = [];

  for (const model of models) {
    const cfg = MODELS[model];
    // Same weights and batch for every implementation (seeded; see models.ts).
    const params = initParams(cfg, 1);
    const batch = makeBatch(cfg, 2);
    const steps = new Map<ImplName, TrainStep>();
    for (const impl of impls) {
      try {
        const step = await (await FACTORIES[impl]())(cfg, params, batch);
        steps.set(impl, step);
        meta[impl] = step.meta;
      } catch (e) {
        const reason = e instanceof Error ? e.message : String(e);
        skipped.push({ model, impl, reason });
        opts.progress(`train-step: ${model} ${impl} skipped: ${reason}`);
      }
    }
    // A step that fails or yields a non-finite loss would time an error path, not a step.
    const firstLoss = new Map<ImplName, number>();
    for (const [impl, s] of steps) {
      const loss = await s.step();
      if (!Number.isFinite(loss)) throw new Error(`train-step: ${model} ${impl} returned loss ${loss}`);
      firstLoss.set(impl, loss);
    }
    const preset = ROUNDS[model][opts.quick ? 'quick' : 'full'];
    const warmup = warmupOverride ?? preset.warmup;
    const rounds = Math.max(1, roundsOverride ?? preset.rounds);
    schedule[model] = { warmup, rounds };
    opts.progress(`train-step: ${model} (${paramCount(cfg)} params): ${[...steps.keys()].join(', ')}; ${warmup} warmup + ${rounds} rounds`);
    const samples = await interleave(
      [...steps].map(([key, s]) => ({ key, run: () => s.step() })),
      {
        warmup,
        rounds,
        onRound: (r) => {
          if (r % Math.max(1, Math.round(rounds / 5)) === 0) opts.progress(`  ${model}: round ${r}/${rounds}`);
        },
      },
    );
    for (const [impl, xs] of samples) {
      const s = summarize(xs);
      const r = { model, impl: impl as ImplName, ms: sig(s.ms), p10: sig(s.p10), p90: sig(s.p90), n: s.n };
      results.push(r);
      rows.push([model, impl, r.ms, r.p10, r.p90, r.n, sig(firstLoss.get(impl as ImplName)!, 7)]);
    }
    for (const s of steps.values()) s.dispose();
    ratios[model] = computeRatios(Object.fromEntries(samples) as Partial<Record<ImplName, number[]>>);
  }

  opts.print(table(['model', 'impl', 'median ms', 'p10', 'p90', 'n', 'loss@step1'], rows));
  const ratioRows = Object.entries(ratios).flatMap(([model, rs]) =>
    Object.entries(rs).map(([k, r]) => [model, k, r.value ?? '-', r.paired ?? '-', r.target, r.pass === null ? 'n/a' : r.pass ? 'pass' : 'FAIL']),
  );
  opts.print('\n' + table(['model', 'ratio', 'of medians', 'paired', 'target', ''], ratioRows));
  const end = sig(os.loadavg()[0]);
  opts.print(`machine: ${envStart.cpus} x ${envStart.cpu}, node ${envStart.node}, load average ${envStart.loadavg1m} -> ${end} (above ~${envStart.cpus} the medians are inflated by other work)`);
  for (const [impl, m] of Object.entries(meta)) opts.print(`${impl}: ${Object.entries(m).map(([k, v]) => `${k}=${v}`).join(' ')}`);
  for (const s of skipped) opts.print(`skipped ${s.model} ${s.impl}: ${s.reason}`);

  return {
    suite: 'train-step',
    quick: opts.quick,
    results,
    ratios,
    impls: meta,
    schedule,
    machine: { ...envStart, loadavg1mEnd: sig(os.loadavg()[0]) },
    ...(skipped.length > 0 ? { skipped } : {}),
  };
}
