/**
 * `npm run bench -- sweep`: the same sweep (seeds × one field's values) run N at a time and one
 * after another on this machine, through `npm run sweep` itself; reports both wall times, the
 * speedup and the per-config figures of the parallel run (the sequential run trains the same
 * runs, so its figures are the same).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { UsageError, type SuiteOptions, type SuiteResult } from '../lib/suite.ts';

interface SweepReport {
  sweep: { runs: number; finished: number; parallel: number; wall_s: number };
  configs: { name: string; runs: number; iqm: { value: number; lo: number; hi: number } }[];
  improvement: { x: string; y: string; p: { value: number; lo: number; hi: number } }[];
}

function sweep(args: string[], o: SuiteOptions, label: string): SweepReport {
  o.progress(`sweep: ${label}`);
  const out = execFileSync(process.execPath, ['--import', 'tsx', 'src/cli/sweep.ts', ...args, '--out', join(mkdtempSync(join(tmpdir(), 'bench-sweep-')), 's'), '--json'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 64 << 20 });
  return JSON.parse(out.trim().split('\n').pop()!) as SweepReport;
}

export async function runSweepBench(o: SuiteOptions): Promise<SuiteResult> {
  const config = typeof o.flags.config === 'string' ? o.flags.config : 'grid-empty-8x8-grpo';
  const seeds = typeof o.flags.seeds === 'string' ? o.flags.seeds : o.quick ? '1-2' : '1-4';
  const set = typeof o.flags.set === 'string' ? o.flags.set : 'algo.lr=1e-3,3e-3';
  const iterations = o.flags.iterations === undefined ? (o.quick ? '5' : null) : String(o.flags.iterations);
  if (iterations !== null && !/^\d+$/.test(iterations)) throw new UsageError(`--iterations: a whole number, got ${iterations}`);
  const parallel = o.flags.parallel === undefined ? availableParallelism() : Number(o.flags.parallel);
  if (!Number.isInteger(parallel) || parallel < 2) throw new UsageError(`--parallel: a whole number ≥ 2 (the one-at-a-time run is the baseline), got ${o.flags.parallel}`);
  const common = ['--config', config, '--seeds', seeds, '--set', set, ...(iterations ? ['--iterations', iterations] : [])];
  const load0 = loadavg()[0];
  const par = sweep([...common, '--parallel', String(parallel)], o, `${parallel} at a time`);
  const seq = sweep([...common, '--parallel', '1'], o, 'one after another');
  const speedup = seq.sweep.wall_s / par.sweep.wall_s;
  o.print(
    [
      `${par.sweep.runs} runs (${config}, seeds ${seeds}, ${set}${iterations ? `, ${iterations} iterations` : ''}) on ${availableParallelism()} cores, load ${load0.toFixed(1)} at the start`,
      `  ${parallel} at a time:      ${par.sweep.wall_s.toFixed(1)} s`,
      `  one after another: ${seq.sweep.wall_s.toFixed(1)} s`,
      `  speedup ${speedup.toFixed(2)}×`,
      ...par.configs.map((c) => `  ${c.name}: IQM ${c.iqm.value.toFixed(3)} [${c.iqm.lo.toFixed(3)}, ${c.iqm.hi.toFixed(3)}] over ${c.runs} runs`),
    ].join('\n'),
  );
  return {
    suite: 'sweep',
    quick: o.quick,
    runs: par.sweep.runs,
    parallel,
    parallel_wall_s: par.sweep.wall_s,
    sequential_wall_s: seq.sweep.wall_s,
    speedup: Number(speedup.toFixed(3)),
    all_finished: par.sweep.finished === par.sweep.runs && seq.sweep.finished === seq.sweep.runs,
    configs: par.configs,
    improvement: par.improvement,
    machine: { cpus: availableParallelism(), loadavg1m: load0, loadavg1mEnd: loadavg()[0] },
  };
}
