/**
 * `npm run bench -- env-studio [--json] [--quick]`: env steps per second of grid/empty-8x8 built
 * in against its port as a code env (examples/envs/empty-room.js) in the sandbox code envs run
 * in (QuickJS), same actions, interleaved rounds in one process. `ratio` = code ÷ built-in
 * (the bar is ≥ 0.25). For the record it also times the same port where a V8-speed
 * sandbox would run it: plain V8 (`new Function`, no isolation: the ceiling) and `node:vm`
 * called directly (no deadline possible on a direct call).
 */
import { readFileSync } from 'node:fs';
import vm from 'node:vm';
import { makeEnv } from '../../src/core/envs/index.ts';
import { makeCodeEnv } from '../../src/core/envs/code/index.ts';
import { loadCodeEnvs, wrapModule } from '../../src/runtime/codeEnv/index.ts';
import { Rng } from '../../src/core/util/rng.ts';
import { interleave } from '../lib/interleave.ts';
import { sig, summarize } from '../lib/stats.ts';
import { table } from '../lib/table.ts';
import type { SuiteOptions, SuiteResult } from '../lib/suite.ts';

const ROOM = readFileSync(new URL('../../examples/envs/empty-room.js', import.meta.url), 'utf8');

interface Stepper {
  reset(): void;
  /** Steps once; true when the episode ended. */
  step(action: number): boolean;
}

/** The port's factory evaluated by `run` (V8 directly, or inside a node:vm context). */
function portStepper(run: (src: string) => void, get: () => () => { reset: (s: number) => unknown; step: (a: number) => { observation: { image: number[] }; terminated: boolean; truncated: boolean } }): Stepper {
  run(wrapModule(ROOM));
  const inst = get()();
  return {
    reset: () => void inst.reset(0),
    step: (a) => {
      const r = inst.step(a);
      // What the host does with every observation: copy the cells into bytes.
      Uint8Array.from(r.observation.image);
      return r.terminated || r.truncated;
    },
  };
}

export async function runEnvStudio(opts: SuiteOptions): Promise<SuiteResult> {
  await loadCodeEnvs();
  const builtin = makeEnv('grid/empty-8x8', { maxSteps: 256 });
  const code = makeCodeEnv({ code: ROOM });
  const steppers: Record<string, { s: Stepper; steps: number }> = {
    builtin: { s: { reset: () => void builtin.reset({ seed: 0 }), step: (a) => { const r = builtin.step(a); return r.terminated || r.truncated; } }, steps: 100_000 },
    'code (QuickJS sandbox)': { s: { reset: () => void code.reset({ seed: 0 }), step: (a) => { const r = code.step(a); return r.terminated || r.truncated; } }, steps: 4_000 },
  };
  const g = globalThis as unknown as { __mk?: unknown };
  steppers['port in plain V8 (no sandbox)'] = { s: portStepper((src) => new Function(src)(), () => g.__mk as never), steps: 100_000 };
  const ctx = vm.createContext({});
  steppers['port in node:vm (direct calls)'] = { s: portStepper((src) => vm.runInContext(src, ctx), () => (ctx as { __mk: never }).__mk), steps: 40_000 };
  // One fixed action sequence (mostly forward, so episodes end and reset) for every contender.
  const rng = new Rng(3);
  const actions = Int8Array.from({ length: 100_000 }, () => (rng.random() < 0.6 ? 2 : rng.int(0, 3)));
  const contenders = Object.entries(steppers).map(([key, { s, steps }]) => ({
    key,
    run: async () => {
      s.reset();
      for (let i = 0; i < steps; i++) if (s.step(actions[i])) s.reset();
    },
  }));
  const rounds = opts.quick ? 2 : 7;
  const samples = await interleave(contenders, { warmup: 1, rounds, onRound: (r) => opts.progress(`round ${r}/${rounds}`) });
  const rate: Record<string, number> = {};
  for (const [key, ms] of samples) rate[key] = steppers[key].steps / (summarize(ms).ms / 1000);
  const base = rate.builtin;
  opts.print(table(['env', 'steps/s (median)', 'µs/step', '÷ built-in'], Object.entries(rate).map(([k, r]) => [k, Math.round(r), sig(1e6 / r), sig(r / base)])));
  const ratio = rate['code (QuickJS sandbox)'] / base;
  opts.print(`ratio (code env ÷ built-in, same env, this run): ${sig(ratio)} (bar: 0.25)`);
  return {
    suite: 'env-studio',
    rounds,
    builtinStepsPerS: sig(base),
    codeStepsPerS: sig(rate['code (QuickJS sandbox)']),
    unsandboxedV8StepsPerS: sig(rate['port in plain V8 (no sandbox)']),
    nodeVmStepsPerS: sig(rate['port in node:vm (direct calls)']),
    ratio: sig(ratio),
  };
}
