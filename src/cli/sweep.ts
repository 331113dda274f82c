/**
 * npm run sweep -- --config <preset id | file.json> [--seeds 1-4] [--set path=v1,v2 ...] [--iterations N] [--out DIR] [--parallel N] [--metric KEY] [--json]
 *
 * Runs every combination of up to two fields' values × the seeds, each as its own
 * `npm run train` process (its own engine and thread: a run is single-threaded, so N runs use N
 * cores), N at a time, each into its own folder under --out. Then reads every run's
 * metrics.jsonl, scores each run by the mean of --metric over its last 10% of iterations, and
 * credits each run to the config its own config.json holds (a run folder and config file per
 * config key, collision-free: core/runs/sweep.ts configKeys), and prints, per config, the mean and the IQM with 95% stratified-bootstrap intervals and the
 * probability of improvement between configs (src/core/runs/stats.ts). The last line with --json
 * is one JSON object with all of it.
 *
 * Stop signals: Ctrl-C (SIGINT) or SIGTERM passes the signal to the runs in flight (each writes
 * its outputs and checkpoint, so `npm run train -- --resume` continues it), starts no more, and
 * summarises what finished.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { finalScore, probabilityOfImprovementInterval, summarize, type ConfigSummary, type Interval } from '../core/runs/stats.ts';
import { intArg, parseCli, UsageError } from './args.ts';
import { parseSeeds, parseSet, runFolder, sweepConfigs, sweepRunName, SweepError, type SweepConfig } from '../core/runs/sweep.ts';
import { seedGroupKey } from '../core/runs/configs.ts';
import type { RunConfig } from '../core/presets/schema.ts';
import { loadRunConfig, readRunConfigJson } from './presets.ts';

const USAGE = `usage: npm run sweep -- --config <preset id | file.json> [--seeds 1-4] [--set path=v1,v2] [--set path=v1,v2] [--iterations N] [--out DIR] [--parallel N] [--metric KEY] [--engine NAME] [--json]
  --seeds LIST      seeds: a range 1-4, a list 1,3,7, or both 1-3,9 (default 1-3)
  --set PATH=VALUES a config field and its values, comma-separated, e.g. algo.lr=1e-3,3e-3 (at most two --set; values are JSON where they parse, else strings)
  --iterations N    iterations of every run (default: the config's)
  --out DIR         the sweep's folder: one folder per run, configs/, summary.json (default runs/sweep-<time>)
  --parallel N      runs at once (default: the machine's cores, ${availableParallelism()} here); the rest wait in a queue
  --metric KEY      the score of a run: the mean of KEY over its last 10% of iterations (default episode/success_rate)
  --engine NAME     passed to each run (ort-web-wasm, ort-node, auto)
  --json            print the summary as one JSON object, last
stop signals: Ctrl-C (SIGINT) or SIGTERM stops the runs in flight after their iteration (each writes its checkpoint), starts no more, and summarises the runs that finished
exit status: 0 every run finished; 1 a run failed (the summary covers the rest); 2 bad usage; 130/143 stopped by a signal`;

const TRAIN = resolve(dirname(fileURLToPath(import.meta.url)), 'train.ts');

export { parseSeeds, parseSet, runFolder, sweepConfigs, type SweepConfig, type SweepField } from '../core/runs/sweep.ts';

/** `fn`'s bad input as a usage error (exit 2), its message prefixed with the option it came from. */
function usage<T>(option: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof SweepError) throw new UsageError(`${option}: ${e.message.replace(/^seeds: /, "")}`);
    throw e;
  }
}

interface RunResult {
  /** The config's name as the summary shows it (credited from the run's own config.json: creditRuns). */
  config: string;
  /** Its config's key (SweepConfig.key). */
  key: string;
  seed: number;
  folder: string;
  exit: number | null;
  wallS: number;
  score: number;
}

function readRows(folder: string): Record<string, number>[] {
  const file = join(folder, 'metrics.jsonl');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, number>);
}

/** Summary of a finished sweep: per config and pairwise. */
export interface SweepSummary {
  metric: string;
  configs: (ConfigSummary & { name: string; key: string; values: Record<string, unknown>; scores: number[]; seeds: number[] })[];
  /** P(row config's run beats column config's run), for every ordered pair of configs. */
  improvement: { x: string; y: string; p: Interval }[];
}

/**
 * Each run credited to the config its own folder's config.json holds (`read(folder)`: the parsed
 * file, null when the run wrote none), compared with the sweep's configs by seedGroupKey (all
 * but seed, iterations and texts); where several configs are equal the run's own job decides,
 * and a run without a config.json keeps its job's. A run whose config.json matches no config of
 * the sweep is left out of the summary, with a warning in `problems`. So a summary never reads a
 * score under a name the run did not train.
 */
export function creditRuns(configs: readonly SweepConfig[], results: readonly RunResult[], read: (folder: string) => unknown): { results: RunResult[]; problems: string[] } {
  const keyed = configs.map((c) => ({ c, group: seedGroupKey(c.config as unknown as RunConfig) }));
  const problems: string[] = [];
  const out: RunResult[] = [];
  for (const r of results) {
    const own = read(r.folder);
    if (own === null) {
      out.push(r);
      continue;
    }
    const group = seedGroupKey(own as RunConfig);
    const matches = keyed.filter((k) => k.group === group).map((k) => k.c);
    const c = matches.find((m) => m.key === r.key) ?? matches[0];
    if (!c) {
      problems.push(`${r.folder}/config.json matches none of the sweep's configs: its score is left out of the summary`);
      continue;
    }
    if (c.key !== r.key) problems.push(`${r.folder} was queued as ${r.config} but its config.json is ${c.name}'s: credited to ${c.name}`);
    out.push({ ...r, config: c.name, key: c.key });
  }
  return { results: out, problems };
}

/** A run folder's config.json, parsed; null when there is none or it does not parse. */
function readRunConfig(folder: string): unknown {
  try {
    return JSON.parse(readFileSync(join(folder, 'config.json'), 'utf8')) as unknown;
  } catch {
    return null;
  }
}

export function summarizeSweep(configs: readonly SweepConfig[], results: readonly RunResult[], metric: string): SweepSummary {
  const per = configs.map((c) => {
    const mine = results.filter((r) => r.key === c.key && Number.isFinite(r.score));
    const scores = mine.map((r) => r.score);
    return { name: c.name, key: c.key, values: c.values, scores, seeds: mine.map((r) => r.seed), ...summarize(scores.map((s) => [s])) };
  });
  const improvement: SweepSummary['improvement'] = [];
  for (const a of per) {
    for (const b of per) {
      if (a === b || a.scores.length === 0 || b.scores.length === 0) continue;
      improvement.push({ x: a.name, y: b.name, p: probabilityOfImprovementInterval(a.scores.map((s) => [s]), b.scores.map((s) => [s])) });
    }
  }
  return { metric, configs: per, improvement };
}

const f3 = (x: number) => (Number.isFinite(x) ? x.toFixed(3) : '—');
const iv = (i: Interval) => `${f3(i.value)} [${f3(i.lo)}, ${f3(i.hi)}]`;

function table(s: SweepSummary): string {
  const lines = [`score: mean of ${s.metric} over each run's last 10% of iterations; [95% stratified-bootstrap interval]`];
  const w = Math.max(6, ...s.configs.map((c) => c.name.length));
  lines.push(`${'config'.padEnd(w)}  runs  ${'IQM'.padEnd(22)}  mean`);
  for (const c of s.configs) lines.push(`${c.name.padEnd(w)}  ${String(c.runs).padStart(4)}  ${iv(c.iqm).padEnd(22)}  ${iv(c.mean)}`);
  if (s.improvement.length) {
    lines.push('probability of improvement P(X > Y): the chance a run of X scores above a run of Y');
    for (const p of s.improvement) lines.push(`  P(${p.x} > ${p.y}) = ${iv(p.p)}`);
  }
  return lines.join('\n');
}

/** Runs `jobs` at most `parallel` at a time; `stopped()` stops starting new ones. */
async function pool<T>(jobs: (() => Promise<T>)[], parallel: number, stopped: () => boolean): Promise<T[]> {
  const out: T[] = [];
  let next = 0;
  const lane = async () => {
    while (next < jobs.length && !stopped()) {
      const i = next++;
      out[i] = await jobs[i]();
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, jobs.length) }, lane));
  return out.filter((x) => x !== undefined);
}

function parseSweepArgs(argv: string[]) {
  const { values } = parseCli(
    argv,
    {
      config: { type: 'string' },
      seeds: { type: 'string', default: '1-3' },
      set: { type: 'string', multiple: true },
      iterations: { type: 'string' },
      out: { type: 'string' },
      parallel: { type: 'string' },
      metric: { type: 'string', default: 'episode/success_rate' },
      engine: { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h' },
    },
    USAGE,
  );
  return values;
}

/** A sweep resolved from its flags, its folder made and every config written to configs/. */
function planSweep(values: ReturnType<typeof parseSweepArgs>) {
  if (!values.config) throw new UsageError(`--config is required\n\n${USAGE}`);
  const seeds = usage('--seeds', () => parseSeeds(String(values.seeds)));
  const sets = ((values as { set?: string[] }).set ?? []).map((t) => usage('--set', () => parseSet(t)));
  const iterations = intArg(values.iterations as string | undefined, 'iterations', 1, 1_000_000);
  const parallel = intArg(values.parallel as string | undefined, 'parallel', 1, 256) ?? availableParallelism();
  const metric = String(values.metric);
  let base: Record<string, unknown>;
  try {
    // Validated here (every problem reported before any run starts), but the sweep overrides the
    // config as written, so fields the swept values own take their own defaults.
    loadRunConfig(String(values.config));
    base = readRunConfigJson(String(values.config)).json as Record<string, unknown>;
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const baseName = String(values.config).replace(/^.*\//, '').replace(/\.json$/, '');
  const configs = usage('--set', () => sweepConfigs(base, sets, baseName));
  const out = resolve(String(values.out ?? join('runs', `sweep-${new Date().toISOString().replace(/[:.]/g, '-')}`)));
  if (existsSync(out) && readdirSync(out).length > 0) throw new UsageError(`--out ${out} is not empty: choose a new folder (a sweep never mixes its runs with others)`);
  mkdirSync(join(out, 'configs'), { recursive: true });
  for (const c of configs) writeFileSync(join(out, 'configs', `${c.key}.json`), JSON.stringify(c.config, null, 2));
  return { seeds, sets, iterations, parallel, metric, configs, out, engine: values.engine as string | undefined };
}

type SweepPlan = ReturnType<typeof planSweep>;

/** One config × seed run as a child `npm run train` (its output in train.log); `children` holds it while it runs. */
async function runOne(plan: SweepPlan, c: SweepPlan['configs'][number], seed: number, children: Set<ChildProcess>): Promise<RunResult> {
  const { out, iterations, metric } = plan;
  const folder = join(out, runFolder(c.key, seed));
  const cfgFile = join(out, 'configs', `${c.key}.json`);
  const args = ['--import', 'tsx', TRAIN, '--config', cfgFile, '--seed', String(seed), '--out', folder];
  if (iterations !== undefined) args.push('--iterations', String(iterations));
  if (plan.engine) args.push('--engine', String(plan.engine));
  const started = performance.now();
  mkdirSync(folder, { recursive: true });
  const log = createWriteStream(join(folder, 'train.log'));
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  child.stdout?.pipe(log, { end: false });
  child.stderr?.pipe(log, { end: false });
  const exit = await new Promise<number | null>((res) => child.on('close', (code) => res(code)));
  children.delete(child);
  log.end();
  const score = finalScore(readRows(folder), metric);
  return { config: c.name, key: c.key, seed, folder, exit, wallS: (performance.now() - started) / 1000, score: exit === 0 ? score : NaN };
}

export async function main(argv: string[]): Promise<number> {
  const values = parseSweepArgs(argv);
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const plan = planSweep(values);
  const { configs, seeds, parallel, metric, out } = plan;
  const children = new Set<ChildProcess>();
  let signal: NodeJS.Signals | null = null;
  const onSignal = (s: NodeJS.Signals) => {
    if (signal) return;
    signal = s;
    process.stderr.write(`\n${s}: stopping the ${children.size} run(s) in flight after their iteration; no new ones start\n`);
    for (const c of children) c.kill(s);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const total = configs.length * seeds.length;
  let done = 0;
  const t0 = performance.now();
  process.stderr.write(`sweep: ${configs.length} config(s) × ${seeds.length} seed(s) = ${total} runs, ${Math.min(parallel, total)} at a time, into ${out}\n`);
  const jobs = configs.flatMap((c) =>
    seeds.map((seed) => async (): Promise<RunResult> => {
      const r = await runOne(plan, c, seed, children);
      done++;
      const status = r.exit === 0 ? `${metric} ${f3(r.score)}` : `exit ${r.exit} (see ${join(r.folder, 'train.log')})`;
      process.stderr.write(`[${done}/${total}] ${sweepRunName(c.name, seed)}: ${r.wallS.toFixed(1)} s, ${status}\n`);
      return r;
    }),
  );
  const credited = creditRuns(configs, await pool(jobs, parallel, () => signal !== null), readRunConfig);
  for (const p of credited.problems) process.stderr.write(`warning: ${p}\n`);
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  const failed = report(values, plan, credited.results, total, (performance.now() - t0) / 1000);
  if (signal) return signal === 'SIGINT' ? 130 : 143;
  return failed ? 1 : 0;
}

/** summary.json, the table and the last line (and --json's report); returns how many runs failed. */
function report(values: ReturnType<typeof parseSweepArgs>, plan: SweepPlan, results: RunResult[], total: number, wallS: number): number {
  const { configs, seeds, sets, iterations, parallel, metric, out } = plan;
  const summary = summarizeSweep(configs, results, metric);
  const failed = results.filter((r) => r.exit !== 0);
  const json = {
    sweep: { config: String(values.config), seeds, set: sets, iterations: iterations ?? null, parallel, runs: total, finished: results.length - failed.length, failed: failed.length, wall_s: Number(wallS.toFixed(2)), out },
    ...summary,
    runs: results.map((r) => ({ config: r.config, key: r.key, seed: r.seed, folder: r.folder, exit: r.exit, wall_s: Number(r.wallS.toFixed(2)), score: r.score })),
  };
  writeFileSync(join(out, 'summary.json'), JSON.stringify(json, null, 2));
  console.log(table(summary));
  console.log(`${results.length - failed.length} of ${total} runs finished in ${wallS.toFixed(1)} s with ${parallel} at a time; summary.json in ${out}`);
  if (values.json) console.log(JSON.stringify(json));
  return failed.length;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e: unknown) => {
      console.error(e instanceof UsageError ? e.message : e);
      process.exit(e instanceof UsageError ? 2 : 1);
    },
  );
}
