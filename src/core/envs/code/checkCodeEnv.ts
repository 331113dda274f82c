/**
 * checkEnv for a code env, with each problem at a line of the user's module and the rule it
 * breaks. Runs the shared conformance check (checkEnv.ts: same seed → same episode on two
 * instances and on a re-reset, observations inside their space, rewards finite and inside
 * `rewardRange`, the end flags) and the code-env rules the host sees from its side: an episode
 * must end by `maxSteps` (the host truncates it otherwise), an observation handed out must not be
 * changed by a later call, and a text env must answer malformed actions (grid actions out of
 * range never reach the module: the host refuses them).
 *
 * Then what random play misses and training hits: a step too slow to train (timed first, where
 * training runs it; the limit is the call deadline over the envs one headless call steps), the
 * module's expert() played to the end (a NaN reward on success), memory that grows across resets.
 *
 * It runs in the checking sandbox (QuickJS, its checking build: clock-read lines, loop counters,
 * heap and binding sizes, frozen observations), never in a faster one the runtime may install for
 * training; only the speed probe times the step there, since that is the speed training gets.
 *
 * Lines, each where the fault is: an exception's own line (from the sandbox's stack); a runaway
 * or slow loop's own line (its counter); a divergence names the lines that read Math.random,
 * Date.now or new Date() (the usual cause), else the line of `step`/`reset`; a non-finite reward
 * the line that assigns it; a mutated observation the write; a leak the line that grows it.
 */
import { checkEnv } from '../checkEnv.ts';
import { Rng } from '../../util/rng.ts';
import type { Env, EnvSpec } from '../types.ts';
import { familyOf } from '../families.ts';
import { CALL_TIMEOUT_ENV, CodeEnvError, exportLine } from './contract.ts';
import { CodeEnv, makeCodeEnv } from './codeEnv.ts';
import { growthLines, rewardLine, topLevelBindings } from './source.ts';

export type CodeEnvRule = 'load' | 'contract' | 'determinism' | 'observation' | 'mutation' | 'reward' | 'length' | 'actions' | 'exception' | 'timeout' | 'memory' | 'speed';

export interface CodeEnvProblem {
  /** 1-based line of the module, or null when no line applies. */
  line: number | null;
  rule: CodeEnvRule;
  message: string;
  /** The line is only near the fault (a loop stopped where no loop counter named it). */
  near?: boolean;
}

export interface CodeEnvCheck {
  problems: CodeEnvProblem[];
  /** The env's spec when the module loaded. */
  spec: EnvSpec | null;
}

/** Seeds checkEnv replays (each played three times: two instances and a re-reset). */
const SEEDS = [0, 1, 7, 42];
/** Actions a text env must answer without throwing (malformed, empty, too long). */
const MALFORMED = ['', 'hello', 'guess(', ')(', 'x'.repeat(150)];

const ruleOf = (e: CodeEnvError): CodeEnvRule => (['load', 'contract', 'timeout', 'memory', 'reward'].includes(e.rule) ? (e.rule as CodeEnvRule) : 'exception');

function fromError(e: unknown): CodeEnvProblem {
  if (e instanceof CodeEnvError) return { line: e.line, rule: ruleOf(e), message: e.message, ...(e.near && e.line !== null ? { near: true } : {}) };
  return { line: null, rule: 'exception', message: e instanceof Error ? e.message : String(e) };
}

/** Options of the check (defaults are what headless training uses). */
export interface CheckCodeEnvOptions {
  /**
   * Envs headless training (npm run train) steps in one sandbox call, whose deadline covers
   * them all: the default code-env preset's episodes per iteration (rollout.groups 8 × algo.groupSize 8). Default 64.
   */
  batchEnvs?: number;
}

/** Envs one sandbox call steps in headless training with the default code-env preset (8 groups × 8 episodes). */
export const HEADLESS_BATCH_ENVS = 64;
/** The sandbox's deadline for one call when the instance does not say, ms (quickjs.ts DEFAULT_CODE_ENV_SANDBOX). */
const DEFAULT_CALL_TIMEOUT_MS = 1000;
/** Steps the speed probe times (fewer when they are slow: it stops after ~0.5 s). */
const SPEED_STEPS = 12;
/** Seeds the module's expert() plays from reset to the end. */
const EXPERT_SEEDS = [0, 1, 7];
/** Resets the memory probe plays, and where it measures (after this many). */
const MEMORY_RESETS = [40, 80, 120] as const;
/** Steps of each of the memory probe's episodes (1 once the probe has taken 1.5 s). */
const MEMORY_EPISODE_STEPS = 8;
/**
 * Heap growth that is a leak, bytes per call (a reset or a step): at this rate a sandbox's 64 MiB
 * fills within ~8 million calls, ~1,300 iterations of 64 episodes of 100 steps.
 */
const LEAK_BYTES_PER_CALL = 8;
/** Heap growth below this in a window of the probe is noise (QuickJS's shapes, atoms, GC timing), bytes. */
const LEAK_FLOOR_BYTES = 4096;
/** Growth of a top-level binding that is a leak, values a reset (kept in both windows: not a cache filling up once). */
const LEAK_VALUES_PER_RESET = 0.5;
/** Growth of the heap's live blocks that is a leak, blocks a reset (strings and Map/Set entries, whose bytes QuickJS does not count). */
const LEAK_BLOCKS_PER_RESET = 1;

/** Checks `code` as a code env; no problems means it may be trained on. */
export function checkCodeEnv(code: string, options: CheckCodeEnvOptions = {}): CodeEnvCheck {
  const made: CodeEnv[] = [];
  const make = (): CodeEnv => {
    const env = makeCodeEnv({ code }, undefined, { checking: true });
    env.guest.setChecking(true);
    made.push(env);
    return env;
  };
  let first: CodeEnv;
  try {
    first = make();
  } catch (e) {
    return { problems: [fromError(e)], spec: null };
  }
  const spec = first.spec;
  const stepLine = exportLine(code, 'step');
  const resetLine = exportLine(code, 'reset');
  const out: CodeEnvProblem[] = [];
  const add = (p: CodeEnvProblem) => {
    if (!out.some((q) => q.rule === p.rule)) out.push(p);
  };
  first.guest.takeClockLines();
  const text = familyOf(spec).action === 'text';
  const actions = first.meta.actions;
  // Text envs: mostly well-formed calls built from the declared names, sometimes garbage.
  const randomAction = text ? (_env: Env, rng: Rng) => (rng.random() < 0.2 ? rng.choice(MALFORMED) : `${rng.choice(actions)}(${rng.int(0, 100)})`) : undefined;
  const anyAction = (env: CodeEnv, rng: Rng) => (randomAction ? randomAction(env, rng) : rng.int(0, actions.length));

  // Speed first: a step too slow to train would make the rest of the check take minutes.
  const speed = speedProblem(code, first, anyAction, options.batchEnvs ?? HEADLESS_BATCH_ENVS, stepLine);
  if (speed !== null) return { problems: [speed], spec };

  let raw: string[] = [];
  try {
    raw = checkEnv(make, { seeds: SEEDS, expertShare: 0, randomAction });
  } catch (e) {
    add(fromError(e));
  }
  const clock = first.guest.takeClockLines();
  for (const msg of raw) add(classify(msg, clock, stepLine, resetLine));
  if (exportLine(code, 'expert') !== null) for (const p of expertPlay(make, anyAction)) add(p);
  const mutated = made.map((env) => env.guest.takeMutation()).find((m) => m !== null) ?? null;
  for (const env of made) {
    if (env.forcedTruncations > 0) add({ line: stepLine, rule: 'length', message: `step() did not end the episode by env.maxSteps (${spec.maxSteps}): return truncated: true at step ${spec.maxSteps}` });
  }
  if (mutated) {
    const at = mutationLine(make, anyAction);
    add({ line: at ?? mutated.line, rule: 'mutation', message: `an observation was changed after it was returned (by step ${mutated.step})${at !== null ? ': this line writes into an observation handed out earlier' : ''}; return a new array or object from every reset()/step()` });
  }
  if (!out.some((p) => p.rule === 'exception' || p.rule === 'timeout' || p.rule === 'memory')) {
    const leak = memoryProblem(code, make, anyAction);
    if (leak) add(leak);
  }
  if (text) for (const p of malformedActions(make)) add(p);
  return { problems: out, spec };
}

type AnyAction = (env: CodeEnv, rng: Rng) => number | string;

/** Median of a non-empty list. */
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

/**
 * Times step() where training would run it (the fast sandbox when this thread has one that takes
 * the module, else the checking one) and compares it with the deadline of one sandbox call over
 * the envs headless training steps in that call. Slow: a problem at the loop where the step
 * spent its time (the checking sandbox's loop counters), else at `step`.
 */
function speedProblem(code: string, checking: CodeEnv, anyAction: AnyAction, batch: number, stepLine: number | null): CodeEnvProblem | null {
  let env: CodeEnv = checking;
  let where = 'the checking sandbox (QuickJS; headless training runs grid envs in V8, often faster)';
  try {
    const fast = makeCodeEnv({ code });
    if (fast.guest.batch !== undefined) {
      env = fast;
      where = 'the V8 sandbox headless training uses';
    }
  } catch {
    // The checks below name whatever fails to load.
  }
  const rng = new Rng(0x5bee);
  const times: number[] = [];
  const t0 = performance.now();
  try {
    env.reset({ seed: 0 });
    for (let k = 0; k < SPEED_STEPS && performance.now() - t0 < 500; k++) {
      const a = anyAction(env, rng);
      const s = performance.now();
      const r = env.step(a);
      times.push(performance.now() - s);
      if (r.terminated || r.truncated) env.reset({ seed: k + 1 });
    }
  } catch {
    // A failing step is reported by the checks that follow, with its line.
  }
  if (times.length === 0) return null;
  const ms = median(times);
  const deadline = env.guest.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  const limit = deadline / batch;
  if (ms <= limit) return null;
  // Where the time goes: the loop that ran most in one step of the checking sandbox.
  let line = stepLine;
  let hot = '';
  try {
    checking.reset({ seed: 0 });
    checking.step(anyAction(checking, rng));
    const counts = checking.guest.probe?.loopCounts() ?? [];
    const top = counts.reduce<{ line: number; count: number } | null>((a, c) => (c.count > 0 && (a === null || c.count >= a.count) ? c : a), null);
    if (top !== null) {
      line = top.line;
      hot = ` (most of it in the loop at line ${top.line}: ${top.count.toLocaleString('en-US')} iterations in one step)`;
    }
  } catch {
    // Timing alone stands.
  }
  return {
    line,
    rule: 'speed',
    message:
      `step() takes ${ms.toFixed(1)} ms (median of ${times.length} steps in ${where})${hot}: too slow to train. Headless training (npm run train) steps ${batch} envs in one sandbox call whose deadline is ${deadline} ms, so a step over ${limit.toFixed(1)} ms stops it at the first step. ` +
      `Make step() faster, or raise the deadline: ${CALL_TIMEOUT_ENV}=${Math.ceil((ms * batch * 2) / 1000) * 1000} npm run train -- --env-file FILE (the other checks were not run: at this speed they would take minutes)`,
  };
}

/** Plays the module's expert() from reset to the end on a few seeds (random actions where it returns null): faults only a good policy reaches. */
function expertPlay(make: () => CodeEnv, anyAction: AnyAction): CodeEnvProblem[] {
  const env = make();
  const rng = new Rng(0xe4be);
  const [lo, hi] = env.spec.rewardRange;
  for (const seed of EXPERT_SEEDS) {
    let t = 0;
    try {
      env.reset({ seed });
      for (t = 1; t <= env.spec.maxSteps; t++) {
        const r = env.step(env.expertAction() ?? anyAction(env, rng));
        const at = `playing expert() from seed ${seed}, step ${t}`;
        if (r.reward < lo || r.reward > hi) return [{ line: rewardLine(env.code) ?? exportLine(env.code, 'step'), rule: 'reward', message: `rewards must be inside env.rewardRange [${lo}, ${hi}]: ${at}: reward ${r.reward}` }];
        if (r.terminated && r.info.success === undefined) return [{ line: exportLine(env.code, 'step'), rule: 'contract', message: `${at}: terminated without info.success` }];
        if (r.terminated || r.truncated) break;
      }
    } catch (e) {
      const p = fromError(e);
      return [{ ...p, message: `playing expert() from seed ${seed}, step ${t}: ${p.message.replace(/ \((near )?line \d+\)$/, '')}` }];
    }
  }
  return [];
}

/**
 * Where a returned observation is written into: replays random episodes with every observation
 * frozen as it is handed out, so the write throws a TypeError at its own line (the snapshot
 * comparison that found the change only knows the step). Null when the replay does not hit it.
 */
function mutationLine(make: () => CodeEnv, anyAction: AnyAction): number | null {
  const env = make();
  const probe = env.guest.probe;
  if (!probe) return null;
  probe.setFreezing(true);
  const rng = new Rng(0xf0e2);
  for (const seed of SEEDS) {
    try {
      env.reset({ seed });
      for (let t = 0; t < env.spec.maxSteps; t++) {
        const r = env.step(anyAction(env, rng));
        if (r.terminated || r.truncated) break;
      }
    } catch (e) {
      // QuickJS: "'0' is read-only", "object is not extensible", "… is frozen" (only writes to a frozen object throw these).
      if (e instanceof CodeEnvError && /read-only|not extensible|frozen|non-writable|read only/i.test(e.message)) return e.line;
      return null;
    }
  }
  return null;
}

/**
 * Memory that grows across resets: plays MEMORY_RESETS episodes of MEMORY_EPISODE_STEPS steps on
 * a fresh instance and samples, after 40, 80 and 120 resets, the size of each top-level binding
 * (values reachable from it) and the sandbox heap (QuickJS's live allocations: bytes of its
 * objects, and the count of blocks, which also counts strings and Map/Set entries, whose bytes
 * QuickJS's count leaves out). Growth in both windows is a leak: a binding gaining at least
 * LEAK_VALUES_PER_RESET values a reset, or the heap LEAK_BYTES_PER_CALL bytes / LEAK_BLOCKS_PER_RESET
 * blocks (over a noise floor). The line: the first line that grows the binding that grew most.
 */
function memoryProblem(code: string, make: () => CodeEnv, anyAction: AnyAction): CodeEnvProblem | null {
  const env = make();
  const probe = env.guest.probe;
  if (!probe) return null;
  const rng = new Rng(0x1ea4);
  const samples: { calls: number; bytes: number; blocks: number; sizes: Record<string, number> }[] = [];
  let calls = 0;
  const t0 = performance.now();
  try {
    for (let r = 1; r <= MEMORY_RESETS[MEMORY_RESETS.length - 1]; r++) {
      env.reset({ seed: 1000 + r });
      calls++;
      // Short episodes: a leak per step shows in a few steps; a slow step keeps the probe short.
      const steps = performance.now() - t0 > 1500 ? 1 : MEMORY_EPISODE_STEPS;
      for (let t = 0; t < steps; t++) {
        const s = env.step(anyAction(env, rng));
        calls++;
        if (s.terminated || s.truncated) break;
      }
      if ((MEMORY_RESETS as readonly number[]).includes(r)) samples.push({ calls, ...probe.heap(), sizes: probe.bindingSizes() });
    }
  } catch (e) {
    // Out of memory here is the leak itself; any other failure was reported by the checks before.
    if (!(e instanceof CodeEnvError && e.rule === 'memory')) return null;
    return { ...fromError(e), message: `memory grows across resets until the sandbox runs out: ${e.message.replace(/ \((near )?line \d+\)$/, '')}` };
  }
  const [s0, s1, s2] = samples;
  const window = MEMORY_RESETS[1] - MEMORY_RESETS[0];
  const both = (f: (x: typeof s0, y: typeof s0) => boolean) => f(s0, s1) && f(s1, s2);
  let grew: { name: string; from: number; to: number } | null = null;
  for (const name of Object.keys(s2.sizes)) {
    const [v0, v1, v2] = [s0.sizes[name] ?? 0, s1.sizes[name] ?? 0, s2.sizes[name] ?? 0];
    if (v1 - v0 >= window * LEAK_VALUES_PER_RESET && v2 - v1 >= window * LEAK_VALUES_PER_RESET && (grew === null || v2 - v0 > grew.to - grew.from)) grew = { name, from: v0, to: v2 };
  }
  const bytesGrow = both((x, y) => y.bytes - x.bytes > Math.max(LEAK_FLOOR_BYTES, (y.calls - x.calls) * LEAK_BYTES_PER_CALL));
  const blocksGrow = both((x, y) => y.blocks - x.blocks >= window * LEAK_BLOCKS_PER_RESET);
  if (grew === null && !bytesGrow && !blocksGrow) return null;
  const kib = (x: number) => `${(x / 1024).toFixed(1)} KiB`;
  const resets = MEMORY_RESETS[2] - MEMORY_RESETS[0];
  const heap = `the sandbox heap held ${kib(s0.bytes)} in ${s0.blocks.toLocaleString('en-US')} blocks after ${MEMORY_RESETS[0]} resets (episodes of up to ${MEMORY_EPISODE_STEPS} steps) and ${kib(s2.bytes)} in ${s2.blocks.toLocaleString('en-US')} after ${MEMORY_RESETS[2]}`;
  const fill = s2.bytes > s0.bytes ? `; at ${Math.round((s2.bytes - s0.bytes) / resets).toLocaleString('en-US')} bytes a reset training fills its 64 MiB after ~${Math.round((64 * 1048576 * resets) / (s2.bytes - s0.bytes)).toLocaleString('en-US')} resets` : '';
  if (grew === null) return { line: exportLine(code, 'reset'), rule: 'memory', message: `memory grows across resets: ${heap}${fill}; no top-level variable grew: look for state kept between episodes in reset()/step() (a closure, a cache) and clear it in reset(seed)` };
  const decl = topLevelBindings(code).find((x) => x.name === grew.name)?.line ?? null;
  const line = growthLines(code, grew.name)[0] ?? decl;
  return {
    line,
    rule: 'memory',
    message: `memory grows across resets: \`${grew.name}\`${decl !== null ? ` (declared at line ${decl})` : ''} holds ${grew.from.toLocaleString('en-US')} values after ${MEMORY_RESETS[0]} resets and ${grew.to.toLocaleString('en-US')} after ${MEMORY_RESETS[2]} (${((grew.to - grew.from) / resets).toFixed(1)} a reset, without end: training makes millions of resets); ${heap}${fill}. Clear it in reset(seed), or keep only what the episode needs`,
  };
}

/** What rule a checkEnv message is about, and where. */
function classify(msg: string, clock: readonly number[], stepLine: number | null, resetLine: number | null): CodeEnvProblem {
  const plain = msg.replace(/^code\/custom /, '');
  if (/diverged/.test(msg)) {
    const reads = clock.length > 0 ? ` Math.random / Date read at line${clock.length > 1 ? 's' : ''} ${clock.join(', ')}: draw every random number from a generator seeded in reset(seed).` : '';
    return { line: clock[0] ?? (/obs\[0\]/.test(msg) ? resetLine : stepLine), rule: 'determinism', message: `the same seed must give the same episode, but ${plain}.${reads}` };
  }
  if (/reward/.test(msg)) return { line: stepLine, rule: 'reward', message: `rewards must be finite and inside env.rewardRange: ${plain}` };
  if (/step 0: reset/.test(msg)) return { line: resetLine, rule: 'observation', message: `reset(): ${plain}` };
  if (/obs/.test(msg)) return { line: stepLine, rule: 'observation', message: `observations must keep their shape: ${plain}` };
  return { line: stepLine, rule: 'contract', message: plain };
}

/** A text env must answer malformed or unknown calls with an observation, not an exception. */
function malformedActions(make: () => CodeEnv): CodeEnvProblem[] {
  const env = make();
  for (const a of MALFORMED) {
    try {
      env.reset({ seed: 3 });
      env.step(a);
    } catch (e) {
      const p = fromError(e);
      return [{ line: p.line, rule: 'actions', message: `step(${JSON.stringify(a.length > 20 ? `${a.slice(0, 20)}…` : a)}) failed: a text env must answer a malformed action with an observation (an error message to the agent), not fail — ${p.message}` }];
    }
  }
  return [];
}
