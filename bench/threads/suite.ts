/**
 * Suite `threads`: onnxruntime-web WASM at 1, 2 and 4 threads on one preset per model family
 * (an MLP grid learner and a transformer tool learner, at the presets' own batch sizes), in
 * Node. Thread counts alternate round by round, one fresh process each (ORT fixes its thread
 * count at load). Reports the warm train-step and rollout-call times and the speed-up over one
 * thread: the evidence behind core/engine/threads.ts. The browser adds its own page and
 * GPU-process threads; see that file for what Chromium showed.
 */
import { execFileSync } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';
import { table } from '../lib/table.ts';
import type { SuiteOptions, SuiteResult } from '../lib/suite.ts';
import { UsageError } from '../lib/suite.ts';

const DEFAULT_PRESETS = ['grid-empty-8x8-grpo', 'calc-grpo'];

type Row = { trainMs: number; rolloutMs: number; samples: number };

export async function runThreads(o: SuiteOptions): Promise<SuiteResult> {
  const counts = String(o.flags.threads ?? '1,2,4')
    .split(',')
    .map(Number);
  if (counts.some((n) => !Number.isInteger(n) || n < 1 || n > 64)) throw new UsageError(`--threads: whole numbers from 1 to 64, got ${o.flags.threads}`);
  const presets = typeof o.flags.presets === 'string' ? o.flags.presets.split(',') : DEFAULT_PRESETS;
  const rounds = o.quick ? 1 : Number(o.flags.rounds ?? 3);
  const budget = o.quick ? 300 : 4000;
  const load0 = loadavg()[0];
  // samples[threads][preset] = per-round rows
  const samples = new Map<number, Map<string, Row[]>>(counts.map((c) => [c, new Map(presets.map((p) => [p, []]))]));
  for (let r = 0; r < rounds; r++) {
    // Rotate the order each round so no thread count always runs first (or last) on a busy machine.
    const order = counts.map((_, i) => counts[(i + r) % counts.length]);
    for (const n of order) {
      o.progress(`threads: round ${r + 1}/${rounds}, ${n} thread(s)`);
      const out = execFileSync(process.execPath, ['--import', 'tsx', 'bench/threads/child.ts', String(n), String(budget), presets.join(',')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
      const parsed = JSON.parse(out.trim().split('\n').pop()!) as Record<string, Row>;
      for (const p of presets) samples.get(n)!.get(p)!.push(parsed[p]);
    }
  }
  // Per (threads, preset): the best round (other work on the machine only adds time).
  const best = (rows: Row[], k: 'trainMs' | 'rolloutMs') => Math.min(...rows.map((x) => x[k]));
  const results = presets.flatMap((p) =>
    counts.map((n) => {
      const rows = samples.get(n)!.get(p)!;
      const one = samples.get(counts[0])!.get(p)!;
      const trainMs = best(rows, 'trainMs');
      const rolloutMs = best(rows, 'rolloutMs');
      return { preset: p, threads: n, trainMs, rolloutMs, trainSpeedup: best(one, 'trainMs') / trainMs, rolloutSpeedup: best(one, 'rolloutMs') / rolloutMs };
    }),
  );
  o.print(
    table(
      ['preset', 'threads', 'train ms', `× vs ${counts[0]}`, 'rollout ms', `× vs ${counts[0]}`],
      results.map((x) => [x.preset, x.threads, +x.trainMs.toFixed(2), +x.trainSpeedup.toFixed(2), +x.rolloutMs.toFixed(3), +x.rolloutSpeedup.toFixed(2)]),
    ),
  );
  const machine = { cpus: availableParallelism(), loadavg1m: load0, loadavg1mEnd: loadavg()[0] };
  o.print(`machine: ${machine.cpus} cores, load ${load0.toFixed(2)} -> ${machine.loadavg1mEnd.toFixed(2)}; best of ${rounds} round(s) per cell`);
  return { suite: 'threads', quick: o.quick, rounds, results, machine };
}
