/**
 * Faults an earlier code-env check let through (so an author could not trust a pass), each as a
 * small env module with that fault, reported at the line where the fault is: a NaN reward only a
 * good policy reaches (the module's expert()), memory that grows across resets, a step too slow
 * to train headless, and runaway loops whose stack line misleads (a loop calling a helper, an
 * empty loop after a declaration). Each env module is the empty-room example with one edit.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkCodeEnv, CodeEnvError, makeCodeEnv } from '../../core/envs/code/index.ts';
import { loadCodeEnvs } from './index.ts';

const ROOM = readFileSync(new URL('../../../examples/envs/empty-room.js', import.meta.url), 'utf8');
const lineOf = (code: string, text: string) => {
  const i = code.split('\n').findIndex((l) => l.includes(text));
  if (i < 0) throw new Error(`no line has ${JSON.stringify(text)}`);
  return i + 1;
};
/** The shortest path as an expert: east to the last column, turn right, south to the goal (11 steps). */
const EXPERT = `
export function expert() {
  if (ended) return null;
  if (x < SIZE - 2) return dir === 0 ? 2 : dir === 3 ? 1 : 0;
  return dir === 1 ? 2 : dir === 0 ? 1 : 0;
}
`;
/** `stmt` run at the start of every step(). */
const inStep = (stmt: string) => ROOM.replace('  steps++;\n', `  steps++;\n  ${stmt}\n`);

beforeAll(() => loadCodeEnvs());

describe('the code env check finds what training hits, at its line', () => {
  it('the example with its expert passes (no false alarm from the new probes)', () => {
    expect(checkCodeEnv(ROOM + EXPERT).problems).toEqual([]);
  });

  it('a NaN reward in the success branch that random play does not reach: found by playing expert(), at the line that computes it', () => {
    // sqrt of a negative number on a success within 20 steps: the expert's 11-step path, not random play's.
    const code = ROOM.replace('const reward = success ? 1 - (0.9 * steps) / env.maxSteps : 0;', 'const reward = success ? Math.sqrt(steps - 20) / 16 : 0;') + EXPERT;
    const problems = checkCodeEnv(code).problems;
    expect(problems).toHaveLength(1);
    const [p] = problems;
    expect(p.rule).toBe('reward');
    expect(p.line).toBe(lineOf(code, 'Math.sqrt(steps - 20)'));
    expect(p.message).toMatch(/^playing expert\(\) from seed 0, step 11: step\(\) returned reward NaN on a success, at step 11 of the episode; a reward must be a finite number$/);
  });

  it('the env refuses a non-finite reward with its line wherever it is played (play, training), not "return NaN · success"', () => {
    const code = ROOM.replace('const reward = success ? 1 - (0.9 * steps) / env.maxSteps : 0;', 'const reward = success ? 1 / 0 : 0;') + EXPERT;
    const env = makeCodeEnv({ code });
    env.reset({ seed: 0 });
    let err: unknown = null;
    for (let t = 0; t < 11 && err === null; t++) {
      try {
        env.step(env.expertAction()!);
      } catch (e) {
        err = e;
      }
    }
    expect(err).toBeInstanceOf(CodeEnvError);
    expect((err as CodeEnvError).rule).toBe('reward');
    expect((err as CodeEnvError).line).toBe(lineOf(code, 'success ? 1 / 0'));
    expect((err as CodeEnvError).message).toMatch(/step\(\) returned reward Infinity on a success, at step 11 of the episode/);
  });

  it('memory that grows across resets (every step kept in a module-level list): found, at the line that grows it', () => {
    const code = ROOM.replace('let x = 1, y = 1, dir = 0, steps = 0, ended = true;', 'let x = 1, y = 1, dir = 0, steps = 0, ended = true;\nconst history = [];').replace('  steps++;\n', '  steps++;\n  history.push({ x, y, dir, view: observe().image });\n');
    const problems = checkCodeEnv(code).problems;
    expect(problems.map((p) => p.rule)).toEqual(['memory']);
    const [p] = problems;
    expect(p.line).toBe(lineOf(code, 'history.push('));
    expect(p.message).toMatch(/^memory grows across resets: `history` \(declared at line \d+\) holds [\d,]+ values after 40 resets and [\d,]+ after 120 \([\d.]+ a reset, without end/);
    expect(p.message).toMatch(/the sandbox heap held [\d.]+ KiB in [\d,]+ blocks after 40 resets .* training fills its 64 MiB after ~[\d,]+ resets/);
    expect(p.message).toContain(`declared at line ${lineOf(code, 'const history = [];')}`);
  });

  it('a small leak (a Set of visited cells keyed by seed, never cleared): found, at the line that adds to it', () => {
    const code = ROOM.replace('let x = 1, y = 1, dir = 0, steps = 0, ended = true;', 'let x = 1, y = 1, dir = 0, steps = 0, ended = true, seedNow = 0;\nconst visited = new Set();').replace('x = 1; y = 1; dir = 0; steps = 0; ended = false;', 'x = 1; y = 1; dir = 0; steps = 0; ended = false; seedNow = _seed;').replace('  steps++;\n', '  steps++;\n  visited.add(`${seedNow}:${x},${y}`);\n');
    const problems = checkCodeEnv(code).problems;
    expect(problems.map((p) => p.rule)).toEqual(['memory']);
    expect(problems[0].line).toBe(lineOf(code, 'visited.add('));
    expect(problems[0].message).toContain('`visited` (declared at line');
  });

  it('state kept but bounded across resets is not a leak (a per-episode list cleared in reset)', () => {
    const code = ROOM.replace('let x = 1, y = 1, dir = 0, steps = 0, ended = true;', 'let x = 1, y = 1, dir = 0, steps = 0, ended = true;\nlet history = [];').replace('  steps++;\n', '  steps++;\n  history.push({ x, y, dir, view: observe().image });\n').replace("x = 1; y = 1; dir = 0; steps = 0; ended = false;", 'x = 1; y = 1; dir = 0; steps = 0; ended = false; history = [];');
    expect(checkCodeEnv(code).problems).toEqual([]);
  });

  it('a 50 ms step: too slow to train headless, at the loop that spends the time, naming the batch deadline and the option that raises it', () => {
    const code = inStep('const t0 = Date.now(); while (Date.now() - t0 < 50) {}');
    const problems = checkCodeEnv(code).problems;
    expect(problems.map((p) => p.rule)).toEqual(['speed']);
    const [p] = problems;
    expect(p.line).toBe(lineOf(code, 'while (Date.now() - t0 < 50)'));
    expect(p.message).toMatch(/^step\(\) takes (\d+\.\d) ms \(median of \d+ steps/);
    expect(Number(/takes (\d+\.\d) ms/.exec(p.message)![1])).toBeGreaterThanOrEqual(50);
    expect(p.message).toContain('Headless training (npm run train) steps 64 envs in one sandbox call whose deadline is 1000 ms, so a step over 15.6 ms stops it at the first step');
    expect(p.message).toMatch(/raise the deadline: CODE_ENV_CALL_TIMEOUT_MS=\d+ npm run train/);
  });

  it.each([
    // The loop calls a helper with loops of its own: stopped inside the helper more often than not.
    ['a loop that calls a helper with loops of its own', inStep('for (let j = 0; j < 5; j += 0) observe();'), 'for (let j = 0; j < 5; j += 0)'],
    // An empty loop after a declaration: QuickJS files its back jump under an earlier line.
    ['an empty loop after a declaration', inStep('let k = 0;\n  while (k >= 0) {}'), 'while (k >= 0) {}'],
    ['an infinite loop in a helper below step()', inStep('spin(action);') + '\nfunction spin(a) {\n  let k = 0;\n  while (a >= 0) {\n    k = (k + 1) % 7;\n  }\n  return k;\n}\n', 'while (a >= 0) {'],
    ['a do-while', inStep('let q = 0;\n  do q = (q + 1) % 3; while (q < 5);'), 'do q = (q + 1)'],
    ['a for-of over a list it grows', inStep('const list = [1];\n  for (const v of list) { list.push(v); }'), 'for (const v of list)'],
  ])('%s is reported at the loop, exactly', (_what, code, at) => {
    const problems = checkCodeEnv(code).problems;
    const p = problems.find((q) => q.rule === 'timeout' || q.rule === 'memory');
    expect(p, JSON.stringify(problems)).toBeDefined();
    expect(p!.line).toBe(lineOf(code, at));
    expect(p!.near).toBeUndefined();
  });
});
