/**
 * `npm run bench -- map-expert [--json] [--quick]`: ms per expert plan on the 25×25 map with a key
 * and 4 locked doors (src/core/envs/grid/fixtures/four-doors-25x25.json), against the solver's
 * own search from the map's start (solveMap), and the whole studio check (checkMap: the solver
 * plus checkEnv, which re-plans after every random action). Before: the expert's full-state
 * search took 5.5-9 s per plan here and the check did not finish in 131 s; grid/custom now plans
 * with the solver's search (custom.ts solveFromHere). `--full` adds one plan by the full-state
 * search (world.ts solve, as an AsciiGridEnv of the same rows keeps it) for the comparison: seconds.
 * `--serve` serves the map (npm run serve -- --env-file) and times GET /state after each of 20
 * off-plan steps (each /state plans again for its expert_action; 6.9 s each before the solver's search).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { envsToServe } from '../../src/cli/serve.ts';
import { startServer } from '../../src/server/server.ts';
import { http } from '../../src/server/testClients.ts';
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
  let state: number | null = null;
  if (opts.flags.serve) {
    const file = join(mkdtempSync(join(tmpdir(), 'map-expert-')), 'four-doors.json');
    writeFileSync(file, JSON.stringify(fourDoors));
    const { envs } = await envsToServe(undefined, file);
    const server = await startServer({ envs, host: '127.0.0.1', port: 0, latency: 'skip' });
    try {
      await http('POST', `${server.url}/reset`, { seed: 0 });
      const ms: number[] = [];
      for (let i = 0; i < 20; i++) {
        // Turns and forwards in turn: off the expert's plan, so the next /state plans again.
        const r = await http('POST', `${server.url}/step`, { action: { action_id: [0, 1, 2][i % 3] } });
        if (r.status !== 200) throw new Error(`step answered ${r.status} ${JSON.stringify(r.body)}`);
        const t = performance.now();
        await http('GET', `${server.url}/state`);
        ms.push(performance.now() - t);
      }
      state = summarize(ms).ms;
      rows.push(['served GET /state after an off-plan step (HTTP round trip)', sig(state)]);
    } finally {
      await server.close();
    }
  }
  opts.print('25×25 map, a key and 4 locked doors, 130 steps to solve');
  opts.print(table(['what', 'ms (median)'], rows));
  return { suite: 'map-expert', rounds, plan_ms: plan, solver_ms: solver, check_ms: check, full_state_plan_ms: full, served_state_ms: state };
}
