/**
 * `npm run bench -- env-studio [--json] [--quick] [--slots N]`: env steps per second of
 * grid/empty-8x8 built in against its port as a code env (examples/envs/empty-room.js), stepped
 * the way training steps them in Node: `--slots` envs (default 64, the grid-empty-8x8-grpo
 * preset's 8 groups × 8) in lockstep through `stepEnvs` / `resetEnvs` as playSlots calls them
 * (every slot plays one episode, the live ones step together, all reset when the last ends), the
 * same fixed actions for every contender, interleaved rounds in one process. `ratio` = the code
 * env in the V8 sandbox (nodeVm.ts, what training uses in Node) ÷ built-in (the bar is
 * ≥ 0.25). Reference rows: the same sandbox stepped one env per call (why training batches),
 * QuickJS (the checking sandbox, and the browser's today) and the port in plain V8 with no
 * sandbox (the ceiling).
 */
import { readFileSync } from 'node:fs';
import { makeEnv } from '../../src/core/envs/index.ts';
import { makeCodeEnv, resetEnvs, stepEnvs } from '../../src/core/envs/code/index.ts';
import type { Env } from '../../src/core/envs/types.ts';
import '../../src/runtime/codeEnv/node.ts';
import { loadCodeEnvs, wrapModule } from '../../src/runtime/codeEnv/index.ts';
import { Rng } from '../../src/core/util/rng.ts';
import { interleave } from '../lib/interleave.ts';
import { sig, summarize } from '../lib/stats.ts';
import { table } from '../lib/table.ts';
import { UsageError, type SuiteOptions, type SuiteResult } from '../lib/suite.ts';

const ROOM = readFileSync(new URL('../../examples/envs/empty-room.js', import.meta.url), 'utf8');

/**
 * One lockstep step of the live slots, as playSlots steps them: each slot plays one episode; when
 * every slot's episode has ended, all reset together (the next collect). Returns env steps taken.
 */
type Lockstep = (actions: Int8Array, at: number) => number;

/** Slots stepped through stepEnvs/resetEnvs, as playSlots steps them (a code env's live slots in one sandbox call). */
function vectorStepper(envs: Env<unknown, number>[]): Lockstep {
  let live: Env<unknown, number>[] = [];
  const acts: number[] = [];
  return (actions, at) => {
    if (live.length === 0) {
      resetEnvs(envs, envs.map(() => 0));
      live = envs.slice();
    }
    acts.length = live.length;
    for (let k = 0; k < live.length; k++) acts[k] = actions[(at + k) % actions.length];
    const r = stepEnvs(live, acts);
    const n = live.length;
    live = live.filter((_, k) => !(r[k].terminated || r[k].truncated));
    return n;
  };
}

/** The same, one env per call (env.reset / env.step), each call paying the sandbox's crossing. */
function loopStepper(envs: Env<unknown, number>[]): Lockstep {
  let live: Env<unknown, number>[] = [];
  return (actions, at) => {
    if (live.length === 0) {
      for (const e of envs) e.reset({ seed: 0 });
      live = envs.slice();
    }
    const n = live.length;
    live = live.filter((e, k) => {
      const r = e.step(actions[(at + k) % actions.length]);
      return !(r.terminated || r.truncated);
    });
    return n;
  };
}

/** The port's instances called directly in this realm (no sandbox; the host copies the cells to bytes): the ceiling. */
function plainV8Stepper(n: number): Lockstep {
  const g = globalThis as unknown as { __mk?: () => { reset: (s: number) => unknown; step: (a: number) => { observation: { image: number[] }; terminated: boolean; truncated: boolean } } };
  new Function(wrapModule(ROOM))();
  const insts = Array.from({ length: n }, () => g.__mk!());
  let live: typeof insts = [];
  return (actions, at) => {
    if (live.length === 0) {
      for (const i of insts) i.reset(0);
      live = insts.slice();
    }
    const m = live.length;
    live = live.filter((inst, k) => {
      const r = inst.step(actions[(at + k) % actions.length]);
      Uint8Array.from(r.observation.image);
      return !(r.terminated || r.truncated);
    });
    return m;
  };
}

export async function runEnvStudio(opts: SuiteOptions): Promise<SuiteResult> {
  const slots = opts.flags.slots === undefined ? 64 : Number(opts.flags.slots);
  if (!Number.isInteger(slots) || slots < 1 || slots > 1024) throw new UsageError('--slots must be an integer 1..1024');
  await loadCodeEnvs();
  const many = <T>(make: () => T) => Array.from({ length: slots }, make);
  const v8 = many(() => makeCodeEnv({ code: ROOM }) as Env<unknown, number>);
  if (!(v8[0] as ReturnType<typeof makeCodeEnv>).guest.batch) throw new Error('env-studio: the port did not load in the V8 sandbox');
  // Env steps per round per contender (at least), sized to ~0.3 s each at the speeds measured (ARCHITECTURE.md, 'Code envs').
  const contenders: Record<string, { step: Lockstep; steps: number }> = {
    builtin: { step: vectorStepper(many(() => makeEnv('grid/empty-8x8', { maxSteps: 256 }) as Env<unknown, number>)), steps: 150_000 },
    'code env, V8 sandbox, batched (training)': { step: vectorStepper(v8), steps: 60_000 },
    'code env, V8 sandbox, one env per call': { step: loopStepper(many(() => makeCodeEnv({ code: ROOM }) as Env<unknown, number>)), steps: 2_000 },
    'code env, QuickJS (checks; the browser)': { step: vectorStepper(many(() => makeCodeEnv({ code: ROOM }, undefined, { checking: true }) as Env<unknown, number>)), steps: 4_000 },
    'port in plain V8 (no sandbox)': { step: plainV8Stepper(slots), steps: 150_000 },
  };
  // One fixed action sequence (mostly forward, so episodes end and reset) for every contender.
  const rng = new Rng(3);
  const actions = Int8Array.from({ length: 100_003 }, () => (rng.random() < 0.6 ? 2 : rng.int(0, 3)));
  const steps: Record<string, number> = {};
  const runs = Object.entries(contenders).map(([key, c]) => ({
    key,
    run: async () => {
      let n = 0;
      for (let t = 0; n < c.steps; t++) n += c.step(actions, t * slots);
      steps[key] = n;
    },
  }));
  const rounds = opts.quick ? 2 : 7;
  const samples = await interleave(runs, { warmup: 1, rounds, onRound: (r) => opts.progress(`round ${r}/${rounds}`) });
  const rate: Record<string, number> = {};
  for (const [key, ms] of samples) rate[key] = steps[key] / (summarize(ms).ms / 1000);
  const base = rate.builtin;
  opts.print(`${slots} slots in lockstep (stepEnvs / resetEnvs, as training steps them)`);
  opts.print(table(['env', 'steps/s (median)', 'µs/step', '÷ built-in'], Object.entries(rate).map(([k, r]) => [k, Math.round(r), sig(1e6 / r), sig(r / base)])));
  const code = rate['code env, V8 sandbox, batched (training)'];
  const ratio = code / base;
  opts.print(`ratio (code env as training steps it ÷ built-in, same env, this run): ${sig(ratio)} (bar: 0.25)`);
  return {
    suite: 'env-studio',
    rounds,
    slots,
    path: 'node: V8 sandbox (node:vm), batched',
    builtinStepsPerS: sig(base),
    codeStepsPerS: sig(code),
    codeOneEnvPerCallStepsPerS: sig(rate['code env, V8 sandbox, one env per call']),
    quickJsStepsPerS: sig(rate['code env, QuickJS (checks; the browser)']),
    unsandboxedV8StepsPerS: sig(rate['port in plain V8 (no sandbox)']),
    quickJsRatio: sig(rate['code env, QuickJS (checks; the browser)'] / base),
    ratio: sig(ratio),
  };
}
