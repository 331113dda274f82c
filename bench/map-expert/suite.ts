/**
 * `npm run bench -- map-expert [--json] [--quick]`: ms per expert plan on the 25×25 map with a key
 * and 4 locked doors (src/core/envs/grid/fixtures/four-doors-25x25.json), against the solver's
 * own search from the map's start (solveMap), and the whole studio check (checkMap: the solver
 * plus checkEnv, which re-plans after every random action). Issue 37: the expert's full-state
 * search took 5.5-9 s per plan here and the check did not finish in 131 s; grid/custom now plans
 * with the solver's search (custom.ts solveFromHere). `--full` adds one plan by the full-state
 * search (world.ts solve, as an AsciiGridEnv of the same rows keeps it) for the comparison: seconds.
 */
import '../../src/core/envs/index.ts';
import { makeEnv } from '../../src/core/envs/index.ts';
import { AsciiGridEnv } from '../../src/core/envs/grid/ascii.ts';
import { checkMap } from '../../src/core/envs/grid/mapCheck.ts';
import { solveMap } from '../../src/core/envs/grid/mapSolve.ts';
import { mapToKwargs, parseGridMap } from '../../src/core/envs/grid/mapSpec.ts';
import fourDoors from '../../src/core/envs/grid/fixtures/four-doors-25x25.json';
import { sig, summarize } from '../lib/stats.ts';
import { table } from '../lib/table.ts';
import type { SuiteOptions, SuiteResult } from '../lib/suite.ts';

/** Median ms of `fn` over `rounds` calls (after one untimed). */
function time(fn: () => unknown, rounds: number): number {
  fn();
  const ms: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const t = performance.now();
    fn();
    ms.push(performance.now() - t);
  }
  return summarize(ms).ms;
}

export async function runMapExpert(opts: SuiteOptions): Promise<SuiteResult> {
  const parsed = parseGridMap(fourDoors);
  if (!parsed.ok) throw new Error(parsed.messages.join('; '));
  const map = parsed.map;
  const rounds = opts.quick ? 3 : 20;
  const env = makeEnv('grid/custom', mapToKwargs(map));
  // A fresh reset drops the plan, so each expertAction() after it plans from the start.
  const plan = time(() => {
    env.reset({ seed: 0 });
    return env.expertAction();
  }, rounds);
  const solver = time(() => solveMap(map.rows, map.maxSteps), rounds);
  const check = time(() => checkMap(map), opts.quick ? 1 : 5);
  const rows: (string | number)[][] = [
    ['grid/custom expertAction (plan from the start)', sig(plan)],
    ['solveMap (the studio verdict)', sig(solver)],
    ['checkMap (verdict + checkEnv, the studio check)', sig(check)],
  ];
  let full: number | null = null;
  if (opts.flags.full) {
    opts.progress('one full-state plan (seconds)…');
    const ascii = new AsciiGridEnv(map.rows, { maxSteps: map.maxSteps });
    ascii.reset({ seed: 0 });
    const t = performance.now();
    ascii.expertAction();
    full = performance.now() - t;
    rows.push(['full-state search (world.ts solve), one plan', sig(full)]);
  }
  opts.print('25×25 map, a key and 4 locked doors, 130 steps to solve');
  opts.print(table(['what', 'ms (median)'], rows));
  return { suite: 'map-expert', rounds, plan_ms: plan, solver_ms: solver, check_ms: check, full_state_plan_ms: full };
}
