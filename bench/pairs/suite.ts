/**
 * `npm run bench -- pairs`: every algorithm in the registry on a grid env (MLP) and on a tool env
 * (transformer), 3 seeds each, through `npm run sweep` (one `npm run train` process per run, N at
 * a time). A pair the algorithm's descriptor refuses is not run; its reason is reported instead.
 * The result is docs/algorithms.md's "Every algorithm on every family" table (`--markdown` prints it).
 *
 * Each pair runs the same base config with only `algo.algo` changed (the algorithm's own defaults
 * for everything it owns), so a row compares algorithms, not tuning:
 *   grid: grid-empty-8x8-grpo's env, model and rollout; lr 1e-3, entropy 0.01;
 *   tool: the lessons' small calculator (2-digit operands, d 48, 300 warm-start steps); lr 3e-4,
 *         KL 1e-3 to the warm start, 40 iterations (lesson 8's run: RL's gain on a warm start is
 *         slow; after 15 iterations every algorithm still sat below its warm start's success). The first iteration's success is the warm start's own, so
 *         the tool row reports it beside the last iterations' (what RL added).
 * Score of a run: the mean of episode/success_rate over its last 10% of iterations (the sweep's).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, writeFileSync, existsSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ALGO_DESCRIPTORS } from '../../src/core/algos/registry/index.ts';
import type { AlgoTarget } from '../../src/core/algos/registry/types.ts';
import { UsageError, type SuiteOptions, type SuiteResult } from '../lib/suite.ts';

interface Interval {
  value: number;
  lo: number;
  hi: number;
}
interface SweepJson {
  sweep: { runs: number; finished: number; wall_s: number; out?: string };
  configs: { name: string; key: string; runs: number; scores: number[]; seeds: number[]; iqm: Interval; mean: Interval }[];
}

interface Target {
  target: Extract<AlgoTarget, 'grid-mlp' | 'tool'>;
  label: string;
  /** The base config: a preset with the fields every pair shares. */
  base: () => Record<string, unknown>;
  iterations: number;
}

const preset = (id: string) => JSON.parse(readFileSync(join('presets', `${id}.json`), 'utf8')) as Record<string, unknown>;

function targets(quick: boolean): Target[] {
  return [
    {
      target: 'grid-mlp',
      label: 'grid/empty-8x8, MLP',
      iterations: quick ? 2 : 30,
      base: () => ({ ...preset('grid-empty-8x8-grpo'), id: undefined, title: undefined, description: undefined, algo: { algo: 'grpo', lr: 0.001, entropyCoef: 0.01 } }),
    },
    {
      target: 'tool',
      label: 'tools/calculator (2-digit), transformer',
      iterations: quick ? 2 : 40,
      base: () => {
        const p = preset('calc-grpo') as Record<string, Record<string, unknown>>;
        return {
          ...p,
          id: undefined,
          title: undefined,
          description: undefined,
          env: { id: 'tools/calculator', kwargs: { minDigits: 2, maxDigits: 2 } },
          model: { ...p.model, dModel: 48, dFF: 192, context: 96 },
          warmStart: { ...p.warmStart, steps: quick ? 20 : 300 },
          algo: { algo: 'grpo', lr: 0.0003, entropyCoef: 0, klCoef: 0.001 },
          rollout: { ...p.rollout, maxActionTokens: 16 },
        };
      },
    },
  ];
}

/** Success at the first iteration of each run folder (the warm start's own for tool runs), by config key (the sweep's folders are `<key>_seed<n>`). */
function firstSuccess(out: string): Map<string, number[]> {
  const by = new Map<string, number[]>();
  for (const dir of readdirSync(out)) {
    const file = join(out, dir, 'metrics.jsonl');
    if (!existsSync(file)) continue;
    const first = readFileSync(file, 'utf8').split('\n').find((l) => l.trim());
    if (!first) continue;
    const config = dir.replace(/_seed\d+$/, '');
    const v = (JSON.parse(first) as Record<string, number>)['episode/success_rate'];
    if (typeof v === 'number') by.set(config, [...(by.get(config) ?? []), v]);
  }
  return by;
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const std = (xs: readonly number[]) => (xs.length < 2 ? 0 : Math.sqrt(xs.reduce((a, x) => a + (x - mean(xs)) ** 2, 0) / (xs.length - 1)));
const f2 = (x: number) => x.toFixed(2);

export interface PairRow {
  algo: string;
  target: string;
  /** Null when the descriptor refuses the pair. */
  refused: string | null;
  seeds: number[];
  scores: number[];
  mean: number | null;
  std: number | null;
  iqm: Interval | null;
  /** Success at iteration 1, per seed (before any update; the warm start's on tool runs). */
  first: number[];
}

export async function runPairs(o: SuiteOptions): Promise<SuiteResult> {
  const seeds = typeof o.flags.seeds === 'string' ? o.flags.seeds : o.quick ? '1' : '1-3';
  const parallel = o.flags.parallel === undefined ? availableParallelism() : Number(o.flags.parallel);
  if (!Number.isInteger(parallel) || parallel < 1) throw new UsageError(`--parallel: a whole number ≥ 1, got ${o.flags.parallel}`);
  const only = typeof o.flags.targets === 'string' ? o.flags.targets.split(',') : null;
  // --algos a,b: only these registered algorithms; --with PATH=VALUE: one more field set in both base configs (e.g. algo.covariance.mode=clip-cov).
  const algos = typeof o.flags.algos === 'string' ? o.flags.algos.split(',') : null;
  for (const a of algos ?? []) if (!ALGO_DESCRIPTORS.some((d) => d.name === a)) throw new UsageError(`--algos: '${a}' is not a registered algorithm`);
  const extra = typeof o.flags.with === 'string' ? parseWith(o.flags.with) : null;
  const dir = mkdtempSync(join(tmpdir(), 'bench-pairs-'));
  const rows: PairRow[] = [];
  const timing: Record<string, number> = {};
  const load0 = loadavg()[0];
  for (const t of targets(o.quick)) {
    if (only && !only.includes(t.target)) continue;
    const listed = ALGO_DESCRIPTORS.filter((d) => !algos || algos.includes(d.name));
    const trained = listed.filter((d) => !d.refuses?.[t.target]).map((d) => d.name);
    for (const d of listed) {
      const why = d.refuses?.[t.target];
      if (why) rows.push({ algo: d.name, target: t.target, refused: why, seeds: [], scores: [], mean: null, std: null, iqm: null, first: [] });
    }
    const file = join(dir, `${t.target}.json`);
    const base = t.base();
    if (extra) setPath(base, extra.path, extra.value);
    writeFileSync(file, JSON.stringify(base));
    const out = join(dir, t.target);
    o.progress(`pairs: ${t.label}: ${trained.length} algorithms × seeds ${seeds}, ${t.iterations} iterations, ${parallel} at a time`);
    const args = ['--import', 'tsx', 'src/cli/sweep.ts', '--config', file, '--seeds', seeds, '--set', `algo.algo=${trained.join(',')}`, '--iterations', String(t.iterations), '--parallel', String(parallel), '--out', out, '--json'];
    let text: string;
    try {
      text = execFileSync(process.execPath, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 64 << 20 });
    } catch (e) {
      // A failed run exits 1 but the sweep still prints its summary of the rest.
      text = String((e as { stdout?: string }).stdout ?? '');
      if (!text.trim()) throw e;
    }
    const s = JSON.parse(text.trim().split('\n').pop()!) as SweepJson;
    timing[t.target] = s.sweep.wall_s;
    const firsts = firstSuccess(out);
    for (const c of s.configs) {
      const algo = c.name.replace(/^algo=/, '');
      rows.push({ algo, target: t.target, refused: null, seeds: c.seeds, scores: c.scores, mean: c.scores.length ? mean(c.scores) : null, std: c.scores.length ? std(c.scores) : null, iqm: c.iqm, first: firsts.get(c.key) ?? [] });
    }
  }
  const ts = targets(o.quick).filter((t) => !only || only.includes(t.target));
  const cell = (r: PairRow | undefined, t: Target) => {
    if (!r) return '—';
    if (r.refused) return `not run: ${r.refused}`;
    if (r.mean === null) return 'failed (see the sweep log)';
    const base = `${f2(r.mean)} ± ${f2(r.std ?? 0)}`;
    return t.target === 'tool' && r.first.length ? `${base} (from ${f2(mean(r.first))})` : base;
  };
  const header = `| algorithm | ${ts.map((t) => `${t.label}, ${t.iterations} iterations`).join(' | ')} |`;
  const lines = [header, `|---|${ts.map(() => '---').join('|')}|`];
  for (const d of ALGO_DESCRIPTORS.filter((x) => !algos || algos.includes(x.name))) lines.push(`| \`${d.name}\` | ${ts.map((t) => cell(rows.find((r) => r.algo === d.name && r.target === t.target), t)).join(' | ')} |`);
  const markdown = lines.join('\n');
  o.print(`success over the last 10% of iterations${extra ? ` (with ${extra.path} = ${JSON.stringify(extra.value)})` : ''}, mean ± std over seeds ${seeds} (tool: the warm start's success at iteration 1 in brackets); ${availableParallelism()} cores, load ${load0.toFixed(1)} at the start`);
  o.print(markdown);
  return { suite: 'pairs', quick: o.quick, seeds, parallel, wall_s: timing, rows, markdown, machine: { cpus: availableParallelism(), loadavg1m: load0, loadavg1mEnd: loadavg()[0] } };
}

/** `--with PATH=VALUE`: the value as JSON where it parses, else the string. */
function parseWith(spec: string): { path: string; value: unknown } {
  const eq = spec.indexOf('=');
  if (eq <= 0) throw new UsageError(`--with: PATH=VALUE, e.g. algo.covariance.mode=clip-cov; got '${spec}'`);
  const raw = spec.slice(eq + 1);
  let value: unknown = raw;
  try {
    value = JSON.parse(raw);
  } catch {
    // a plain string
  }
  return { path: spec.slice(0, eq), value };
}

/** Sets a dotted path in a config object, making the objects on the way. */
function setPath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let at = obj;
  for (const k of keys.slice(0, -1)) at = (at[k] ??= {}) as Record<string, unknown>;
  at[keys[keys.length - 1]] = value;
}
