/**
 * `npm run bench -- agentic [--json] [--quick] [--presets id-or-file,...] [--seeds N] [--eval N] [--iterations N] [--engine ort-web-wasm|ort-node]`
 *
 * What RL adds on top of imitation on the tool envs. Each discovery preset warm-starts on
 * demonstrations that lack a behaviour (warmStart.envKwargs, or an expert-variant kwarg), then
 * trains by GRPO on the env that needs it. Per preset and seed (the preset's config with `seed`
 * 1..N): held-out success right after the warm start and after the preset's RL iterations,
 * greedy and sampled, on the same held-out seeds; the preset's behaviour metric on those held-out
 * episodes before and after (the registry's definition, computed as an iteration would); per
 * iteration the training batch's success and behaviour metric (to see which moves first); and
 * wall time (warm start, RL; held-out evaluation not billed). Headless, one thread, as in the tab.
 *
 * Last line with --json:
 *   {"suite":"agentic","rows":[{"preset":...,"seed":1,"warm_start":{"greedy":..,"sampled":..,"behaviour_greedy":..,"behaviour_sampled":..},
 *    "after_rl":{...},"warm_s":..,"rl_s":..,"iterations":..,"curve":[{"success":..,"behaviour":..}]}],"summary":[{"preset":..,"seeds":3,...means}]}
 */
import { loadavg } from 'node:os';
import { heldOutSeeds } from '../../src/core/util/rng.ts';
import { createTrainer } from '../../src/core/trainer/createTrainer.ts';
import type { RunTrainer } from '../../src/core/trainer/api.ts';
import { buildIterationMetrics, summarizeEpisode } from '../../src/core/metrics/iterationMetrics.ts';
import { tokenEpisodeRecord, type TokenEpisode } from '../../src/core/rollout/tokenEpisode.ts';
import { loadNodeEngine, type NodeEngineName } from '../../src/runtime/engine/node.ts';
import { loadRunConfig } from '../../src/cli/presets.ts';
import type { SuiteOptions, SuiteResult } from '../lib/suite.ts';
import { UsageError } from '../lib/suite.ts';

/**
 * The behaviour each preset's demonstrations lack, as a metric key of the registry
 * (src/core/metrics/registry.ts) and the direction RL should move it.
 */
export const BEHAVIOURS: Record<string, { metric: string; rises: boolean; what: string }> = {
  // A measured attempt, not a preset (docs/agentic.md): demonstrations that rarely failed.
  'flaky-retry-rare-failures': { metric: 'tools/recovery_rate', rises: true, what: 'failure runs ended by a successful call (retrying)' },
  'kv-gather-discovery': { metric: 'tools/call_frequency', rises: true, what: 'lookups per episode (gathering the second hop before answering)' },
  'flaky-stop-constrained': { metric: 'tools/call_frequency', rises: false, what: 'service calls per episode (stopping once the value is in hand), with constrained decoding' },
  'flaky-stop-discovery': { metric: 'tools/call_frequency', rises: false, what: 'service calls per episode (stopping once the value is in hand)' },
  // Contrast: imitation of a perfect expert, then RL sharpens (no behaviour to discover).
  'calc-grpo': { metric: 'tools/call_frequency', rises: false, what: 'calculator calls per episode' },
};

const DEFAULT_PRESETS = ['flaky-stop-discovery', 'kv-gather-discovery', 'flaky-stop-constrained'];

export interface PolicyScore {
  greedy: number;
  sampled: number;
  /** The preset's behaviour metric over the held-out episodes (null: undefined there, e.g. no failure to recover from). */
  behaviour_greedy: number | null;
  behaviour_sampled: number | null;
}

export interface AgenticRow {
  preset: string;
  seed: number;
  metric: string;
  warm_start: PolicyScore;
  after_rl: PolicyScore;
  iterations: number;
  /** Seconds: the imitation warm start (trainer creation included), then the RL iterations. */
  warm_s: number;
  rl_s: number;
  /** Per RL iteration: the training batch's success rate and behaviour metric (sampled episodes). */
  curve: { success: number; behaviour: number | null }[];
}

const r3 = (x: number) => Number(x.toFixed(3));

/** The registry's value of `metric` over these episodes, as one iteration of them would report it. */
export function behaviourOf(episodes: readonly TokenEpisode[], metric: string): number | null {
  const m = buildIterationMetrics({ episodes: episodes.map((e) => summarizeEpisode(tokenEpisodeRecord(e))) }) as Record<string, number>;
  return m[metric] === undefined ? null : r3(m[metric]);
}

async function score(trainer: RunTrainer, seeds: readonly number[], metric: string): Promise<PolicyScore> {
  const greedy = (await trainer.evaluate(seeds, 0)) as TokenEpisode[];
  const sampled = (await trainer.evaluate(seeds, 1)) as TokenEpisode[];
  const rate = (eps: readonly TokenEpisode[]) => r3(eps.filter((e) => e.success).length / Math.max(1, eps.length));
  return { greedy: rate(greedy), sampled: rate(sampled), behaviour_greedy: behaviourOf(greedy, metric), behaviour_sampled: behaviourOf(sampled, metric) };
}

async function runOne(ref: string, seed: number, engineName: NodeEngineName, evalSeeds: number, iterations: number | undefined, progress: (t: string) => void): Promise<AgenticRow> {
  const base = loadRunConfig(ref);
  const id = base.id;
  const config = { ...base, seed, iterations: iterations ?? base.iterations };
  const { metric } = BEHAVIOURS[id];
  const engine = await loadNodeEngine(engineName);
  const t0 = performance.now();
  const trainer = await createTrainer(config, engine, {
    onWarmStart: (r, total) => {
      if (r.step % 100 === 0) progress(`  ${id} seed ${seed}: warm start ${r.step}/${total}, ${((performance.now() - t0) / 1000).toFixed(0)} s, p(expert token) ${r.targetProb.toFixed(3)}`);
    },
  });
  try {
    const warmS = (performance.now() - t0) / 1000;
    const seeds = heldOutSeeds(evalSeeds);
    const before = await score(trainer, seeds, metric);
    progress(`  ${id} seed ${seed}: warm start (${warmS.toFixed(0)} s): held-out greedy ${before.greedy}, sampled ${before.sampled}, ${metric} ${before.behaviour_sampled}`);
    const curve: AgenticRow['curve'] = [];
    const t1 = performance.now();
    for (let i = 0; i < config.iterations; i++) {
      const r = await trainer.step();
      const b = r.metrics[metric];
      curve.push({ success: r3(r.metrics['episode/success_rate'] ?? 0), behaviour: b === undefined ? null : r3(b) });
      if ((i + 1) % 5 === 0) progress(`  ${id} seed ${seed}: it ${i + 1}/${config.iterations}, success ${curve[i].success}, ${metric} ${curve[i].behaviour}`);
    }
    const rlS = (performance.now() - t1) / 1000;
    const after = await score(trainer, seeds, metric);
    progress(`  ${id} seed ${seed}: after RL (${rlS.toFixed(0)} s): held-out greedy ${after.greedy}, sampled ${after.sampled}, ${metric} ${after.behaviour_sampled}`);
    return { preset: id, seed, metric, warm_start: before, after_rl: after, iterations: config.iterations, warm_s: r3(warmS), rl_s: r3(rlS), curve };
  } finally {
    await trainer.release();
  }
}

const meanOf = (xs: readonly (number | null)[]): number | null => {
  const v = xs.filter((x): x is number => x !== null);
  return v.length ? r3(v.reduce((a, b) => a + b, 0) / v.length) : null;
};

/** Per preset: means over its seeds. */
export function summarize(rows: readonly AgenticRow[]) {
  const ids = [...new Set(rows.map((r) => r.preset))];
  return ids.map((preset) => {
    const rs = rows.filter((r) => r.preset === preset);
    const m = (f: (r: AgenticRow) => number | null) => meanOf(rs.map(f));
    const warmGreedy = m((r) => r.warm_start.greedy)!;
    const rlGreedy = m((r) => r.after_rl.greedy)!;
    const warmSampled = m((r) => r.warm_start.sampled)!;
    const bw = m((r) => r.warm_start.behaviour_sampled);
    const ba = m((r) => r.after_rl.behaviour_sampled);
    const rlSampled = m((r) => r.after_rl.sampled)!;
    return {
      preset,
      seeds: rs.length,
      metric: rs[0].metric,
      warm_start: { greedy: warmGreedy, sampled: warmSampled, behaviour_sampled: bw },
      after_rl: { greedy: rlGreedy, sampled: rlSampled, behaviour_sampled: ba },
      /** The behaviour metric moved the way the preset's discovery moves it (null: undefined before or after). */
      behaviour_as_expected: bw === null || ba === null || !BEHAVIOURS[preset] ? null : BEHAVIOURS[preset].rises ? ba > bw : ba < bw,
      gain_greedy: r3(rlGreedy - warmGreedy),
      gain_sampled: r3(rlSampled - warmSampled),
      warm_s: m((r) => r.warm_s),
      rl_s: m((r) => r.rl_s),
      iterations: rs[0].iterations,
    };
  });
}

export async function runAgentic(opts: SuiteOptions): Promise<SuiteResult> {
  const presets = typeof opts.flags.presets === 'string' ? opts.flags.presets.split(',') : DEFAULT_PRESETS;
  for (const p of presets) {
    let id: string;
    try {
      id = loadRunConfig(p).id;
    } catch (e) {
      throw new UsageError(`agentic: ${(e as Error).message}`);
    }
    if (!BEHAVIOURS[id]) throw new UsageError(`agentic: no behaviour metric for '${id}' (known: ${Object.keys(BEHAVIOURS).join(', ')})`);
  }
  const nSeeds = typeof opts.flags.seeds === 'string' ? Number(opts.flags.seeds) : opts.quick ? 1 : 3;
  if (!(Number.isInteger(nSeeds) && nSeeds >= 1 && nSeeds <= 20)) throw new UsageError('agentic: --seeds must be a whole number of seeds in 1..20 (seeds 1..N)');
  const evalSeeds = typeof opts.flags.eval === 'string' ? Number(opts.flags.eval) : opts.quick ? 16 : 128;
  if (!(Number.isInteger(evalSeeds) && evalSeeds >= 1)) throw new UsageError('agentic: --eval must be a whole number of held-out seeds (≥ 1)');
  const iterations = typeof opts.flags.iterations === 'string' ? Number(opts.flags.iterations) : opts.quick ? 2 : undefined;
  if (iterations !== undefined && !(Number.isInteger(iterations) && iterations >= 1)) throw new UsageError("agentic: --iterations must be a whole number ≥ 1 (default: the preset's)");
  const engineFlag = opts.flags.engine ?? 'ort-web-wasm';
  if (engineFlag !== 'ort-web-wasm' && engineFlag !== 'ort-node') throw new UsageError(`agentic: --engine must be ort-web-wasm or ort-node, got '${String(engineFlag)}'`);
  const rows: AgenticRow[] = [];
  for (const id of presets) {
    for (let seed = 1; seed <= nSeeds; seed++) {
      opts.progress(`agentic: ${id}, seed ${seed}`);
      rows.push(await runOne(id, seed, engineFlag, evalSeeds, iterations, opts.progress));
    }
  }
  const summary = summarize(rows);
  const f = (x: number | null) => (x === null ? '  n/a' : x.toFixed(2).padStart(5));
  opts.print(
    [
      `held-out success on ${evalSeeds} seeds, mean over seeds 1..${nSeeds}: warm start -> after RL (greedy, sampled); behaviour metric on the sampled held-out episodes`,
      'preset                  seeds  greedy        sampled       behaviour metric                   warm_s  rl_s  iters',
      ...summary.map(
        (s) =>
          `${s.preset.padEnd(23)} ${String(s.seeds).padStart(5)}  ${f(s.warm_start.greedy)}->${f(s.after_rl.greedy)}  ${f(s.warm_start.sampled)}->${f(s.after_rl.sampled)}  ` +
          `${s.metric.padEnd(21)} ${f(s.warm_start.behaviour_sampled)}->${f(s.after_rl.behaviour_sampled)}  ${String(Math.round(s.warm_s ?? 0)).padStart(6)} ${String(Math.round(s.rl_s ?? 0)).padStart(5)} ${String(s.iterations).padStart(6)}`,
      ),
    ].join('\n'),
  );
  return { suite: 'agentic', quick: opts.quick, engine: engineFlag, eval_seeds: evalSeeds, rows, summary, machine: { loadavg1m: Number(loadavg()[0].toFixed(2)) } };
}
