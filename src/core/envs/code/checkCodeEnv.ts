/**
 * checkEnv for a code env, with each problem at a line of the user's module and the rule it
 * breaks. Runs the shared conformance check (checkEnv.ts: same seed → same episode on two
 * instances and on a re-reset, observations inside their space, rewards finite and inside
 * `rewardRange`, the end flags) and the code-env rules the host sees from its side: an episode
 * must end by `maxSteps` (the host truncates it otherwise), an observation handed out must not be
 * changed by a later call, and a text env must answer malformed actions (grid actions out of
 * range never reach the module: the host refuses them).
 *
 * It always runs in the checking sandbox (QuickJS: the clock-read lines and a loop's line), never
 * in a faster one the runtime may install for training.
 *
 * Lines: an exception's own line (from the sandbox's stack); a divergence names the lines that
 * read Math.random, Date.now or new Date() (the usual cause), else the line of `step`/`reset`.
 */
import { checkEnv } from '../checkEnv.ts';
import { Rng } from '../../util/rng.ts';
import type { Env, EnvSpec } from '../types.ts';
import { CodeEnvError, exportLine } from './contract.ts';
import { CodeEnv, makeCodeEnv } from './codeEnv.ts';

export type CodeEnvRule = 'load' | 'contract' | 'determinism' | 'observation' | 'mutation' | 'reward' | 'length' | 'actions' | 'exception' | 'timeout' | 'memory';

export interface CodeEnvProblem {
  /** 1-based line of the module, or null when no line applies. */
  line: number | null;
  rule: CodeEnvRule;
  message: string;
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

const ruleOf = (e: CodeEnvError): CodeEnvRule => (['load', 'contract', 'timeout', 'memory'].includes(e.rule) ? (e.rule as CodeEnvRule) : 'exception');

function fromError(e: unknown): CodeEnvProblem {
  if (e instanceof CodeEnvError) return { line: e.line, rule: ruleOf(e), message: e.message };
  return { line: null, rule: 'exception', message: e instanceof Error ? e.message : String(e) };
}

/** Checks `code` as a code env; no problems means it may be trained on. */
export function checkCodeEnv(code: string): CodeEnvCheck {
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
  const text = spec.family === 'tool';
  const actions = first.meta.actions;
  let raw: string[] = [];
  try {
    raw = checkEnv(make, {
      seeds: SEEDS,
      expertShare: 0,
      // Text envs: mostly well-formed calls built from the declared names, sometimes garbage.
      randomAction: text ? (_env: Env, rng: Rng) => (rng.random() < 0.2 ? rng.choice(MALFORMED) : `${rng.choice(actions)}(${rng.int(0, 100)})`) : undefined,
    });
  } catch (e) {
    add(fromError(e));
  }
  const clock = first.guest.takeClockLines();
  for (const msg of raw) add(classify(msg, clock, stepLine, resetLine));
  for (const env of made) {
    const m = env.guest.takeMutation();
    if (m) add({ line: m.line, rule: 'mutation', message: `an observation was changed after it was returned (by step ${m.step}): return a new array or object from every reset()/step()` });
    if (env.forcedTruncations > 0) add({ line: stepLine, rule: 'length', message: `step() did not end the episode by env.maxSteps (${spec.maxSteps}): return truncated: true at step ${spec.maxSteps}` });
  }
  if (text) for (const p of malformedActions(make)) add(p);
  return { problems: out, spec };
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
