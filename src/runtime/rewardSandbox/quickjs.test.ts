import { describe, expect, it } from 'vitest';
import { makeEnv } from '../../core/envs/index.ts';
import type { GridEnv, ToolEnv } from '../../core/envs/types.ts';
import { buildGridStepRecords, sampleTextEpisode, type ScoreEpisode } from '../../core/reward/stepRecord.ts';
import { RewardTermError, ScoringInterrupted, resolveTermScores } from '../../core/reward/rewardTerms.ts';
import { backstopMs, createRewardSandbox } from './quickjs.ts';

/** A hand-made 3-step episode (records as the trainer builds them, minus the heavy fields). */
function handMade(seed = 7): ScoreEpisode {
  const step = (t: number, action: number, reward: number, terminated: boolean) => ({
    t,
    observation: { text: `view ${t}`, direction: 0 },
    state: { x: t, y: 1, dir: 0, carrying: null, goal: { x: 3, y: 1 }, goalDistance: 3 - t },
    action,
    actionName: ['left', 'right', 'forward'][action],
    reward,
    terminated,
    truncated: false,
    info: { progress: 0, success: terminated, toolCall: null, toolFailed: false, recovered: false, malformed: false },
  });
  return { seed, envId: 'grid/empty-8x8', steps: [step(0, 2, 0, false), step(1, 0, 0, false), step(2, 2, 0.9, true)] };
}

async function failure(p: Promise<unknown>): Promise<RewardTermError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(RewardTermError);
    return e as RewardTermError;
  }
  throw new Error('expected a RewardTermError');
}

describe('reward sandbox (QuickJS)', () => {
  it('computes each exported term per step, in source order, with the episode so far', async () => {
    const s = await createRewardSandbox(`
export const stepCost = (step) => -0.01;
export function closer(step) { return step.state.goalDistance === null ? 0 : -0.1 * step.state.goalDistance; }
export const turns = (s) => (s.actionName === 'left' || s.actionName === 'right' ? -1 : 0);
export const seen = (s) => s.episode.steps.length + 10 * s.episode.returnSoFar + 100 * (s.episode.seed === 7 ? 1 : 0);
`);
    expect(s.terms).toEqual(['stepCost', 'closer', 'turns', 'seen']);
    const [r] = await s.score([handMade()]);
    expect(Array.from(r.values.stepCost)).toEqual([-0.01, -0.01, -0.01]);
    expect(Array.from(r.values.closer)).toEqual([-0.30000000000000004, -0.2, -0.1]);
    expect(Array.from(r.values.turns)).toEqual([0, -1, 0]);
    expect(Array.from(r.values.seen)).toEqual([100, 101, 102]);
    expect(r.bad).toEqual([]);
    expect(s.lineOf('closer')).toBe(3);
    s.close();
  });

  it('lets a term pay for recovery after a tool error (flaky-api, hand-played)', async () => {
    // Seed 1, the expert's calls: a timeout, a 503, then the retry that returns the value.
    const env = makeEnv('tools/flaky-api') as ToolEnv;
    const ep = sampleTextEpisode(env, 'tools/flaky-api', 1, ['call(k13)', 'retry()', 'retry()', 'answer(6208)']);
    expect(ep.steps.map((s) => [s.info.toolFailed, s.info.recovered])).toEqual([[true, false], [true, false], [false, true], [false, false]]);
    const s = await createRewardSandbox('export const recovery = (s) => (s.info.recovered ? 0.5 : 0);');
    const [r] = await s.score([ep]);
    expect(Array.from(r.values.recovery)).toEqual([0, 0, 0.5, 0]);
    s.close();
  });

  it('scores records replayed from a real grid episode', async () => {
    const env = makeEnv('grid/empty-8x8') as GridEnv;
    const ep = buildGridStepRecords(env, { envId: 'grid/empty-8x8', seed: 3, actions: [2, 2, 1], rewards: [0, 0, 0] });
    expect(ep.steps[0].observation.text.length).toBeGreaterThan(0);
    expect(ep.steps[0].state.goal).not.toBeNull();
    const s = await createRewardSandbox('export const d = (s) => s.state.goalDistance;\nexport const fwd = (s) => (s.actionName === "forward" ? 1 : 0);');
    const [r] = await s.score([ep]);
    expect(Array.from(r.values.fwd)).toEqual([1, 1, 0]);
    expect(r.values.d[0]).toBe(ep.steps[0].state.goalDistance);
    s.close();
  });

  it('stops while(true){} at the one-call backstop (1 s for a 100 ms limit), naming the term, the line and the seed', async () => {
    const s = await createRewardSandbox('export const ok = () => 1;\nexport const spin = (s) => { while (true) {} };', { callTimeoutMs: 100 });
    const t0 = performance.now();
    const e = await failure(s.score([handMade(42)]));
    const ms = performance.now() - t0;
    expect(backstopMs(100)).toBe(1000);
    expect(ms).toBeGreaterThanOrEqual(1000);
    expect(e.kind).toBe('timeout');
    expect(e.message).toMatch(/reward term 'spin' \(line 2\) ran past its 100 ms limit per call at step 0 of the episode with seed 42/);
    // The sandbox stays refused after a failure (it may be in any state).
    await expect(s.score([handMade()])).rejects.toThrow(/spin/);
    s.close();
  });

  // A busy-wait of `ms` wall milliseconds inside the sandbox (its Date.now is the host's clock).
  const busy = (ms: string) => `const t = Date.now(); while (Date.now() - t < ${ms}) {}`;

  it('a term whose calls mostly run over the limit is stopped after 3 calls, with its measured time per call', async () => {
    const s = await createRewardSandbox(`export const ok = () => 1;\nexport const slow = (s) => { ${busy('30')} return 0; };`, { callTimeoutMs: 20 });
    const e = await failure(s.score([handMade(42), handMade(43)]));
    expect(e.kind).toBe('timeout');
    expect(e.term).toBe('slow');
    const m = /reward term 'slow' \(line 2\) takes (\d+) ms per call on average, over its 20 ms limit per call \(3 of its 3 calls so far were over; the last at step 2 of the episode with seed 42\)/.exec(e.message);
    expect(m, e.message).not.toBeNull();
    expect(Number(m![1])).toBeGreaterThanOrEqual(30);
    s.close();
  });

  it('one call over the limit (the thread descheduled under load) does not stop a term whose other calls are quick', async () => {
    // handMade has 3 steps: calls 1 and 3 of 'blip' are quick, call 2 takes 3× the limit.
    const s = await createRewardSandbox(`export const blip = (s) => { if (s.t === 1) { ${busy('60')} } return s.t; };`, { callTimeoutMs: 20 });
    const [a, b] = await s.score([handMade(1), handMade(2)]);
    expect(Array.from(a.values.blip)).toEqual([0, 1, 2]);
    expect(Array.from(b.values.blip)).toEqual([0, 1, 2]);
    s.close();
  });

  it('stops an infinite loop at the top level of the module', async () => {
    const e = await failure(createRewardSandbox('while (true) {}\nexport const a = () => 1;', { loadTimeoutMs: 100 }));
    expect(e.message).toMatch(/while loading and was stopped/);
  });

  for (const [name, expr] of [
    ['fetch', "fetch('https://example.com')"],
    ['process', 'process.exit(0)'],
    ['require', "require('fs')"],
    ['importScripts', "importScripts('x.js')"],
    ['indexedDB', "indexedDB.open('x')"],
    ['postMessage', 'postMessage(1)'],
    ['localStorage', "localStorage.getItem('x')"],
    ['eval', "eval('1')"],
  ] as const) {
    it(`has no ${name}: a term reaching for it fails with the term, the line and the seed`, async () => {
      const s = await createRewardSandbox(`export const ok = () => 0;\nexport const reach = (s) => {\n  return ${expr};\n};`);
      const e = await failure(s.score([handMade(5)]));
      expect(e.kind).toBe('exception');
      expect(e.message).toMatch(new RegExp(`reward term 'reach' threw ReferenceError: '?${name}'? is not defined \\(line 3\\) at step 0 of the episode with seed 5`));
      s.close();
    });
  }

  it('refuses code generation from strings (Function constructor, also reached via a function)', async () => {
    for (const expr of ["Function('return 1')()", "(() => 0).constructor('return 1')()", "(async () => 0).constructor('return 1')"]) {
      const s = await createRewardSandbox(`export const gen = (s) => ${expr};`);
      const e = await failure(s.score([handMade()]));
      expect(e.message).toMatch(/EvalError: code generation from strings is disabled/);
      s.close();
    }
  });

  it('refuses imports, non-function exports, default exports, reserved names and empty modules', async () => {
    expect((await failure(createRewardSandbox("import fs from 'fs';\nexport const a = () => 1;"))).message).toMatch(/reward module: .*fs/);
    expect((await failure(createRewardSandbox('export const a = 3;'))).message).toMatch(/export 'a' \(line 1\) is a number, not a function/);
    expect((await failure(createRewardSandbox('export default () => 1;'))).message).toMatch(/default export/);
    expect((await failure(createRewardSandbox('export const progress = () => 1;'))).message).toMatch(/built-in reward metric/);
    expect((await failure(createRewardSandbox('const a = 1;'))).message).toMatch(/exports no terms/);
    expect((await failure(createRewardSandbox('export const a = (s) => {'))).message).toMatch(/SyntaxError/);
  });

  it('reports non-finite and non-number values; skip zeroes the term for the episode, stop throws', async () => {
    const s = await createRewardSandbox('export const fine = () => 1;\nexport const nan = (s) => (s.t === 1 ? NaN : 1);\nexport const undef = (s) => {};');
    const [r] = await s.score([handMade(9)]);
    expect(r.bad).toEqual([
      { term: 'undef', t: 0, returned: 'undefined' },
      { term: 'nan', t: 1, returned: 'NaN' },
      { term: 'undef', t: 1, returned: 'undefined' },
      { term: 'undef', t: 2, returned: 'undefined' },
    ]);
    const res = resolveTermScores(r, 'skip', { seed: 9, lineOf: (t) => s.lineOf(t) });
    expect(Array.from(res.values.nan)).toEqual([0, 0, 0]);
    expect(Array.from(res.values.fine)).toEqual([1, 1, 1]);
    expect(res.skipped[1]).toMatch(/reward term 'nan' \(line 2\) returned NaN at step 1 of the episode with seed 9/);
    for (const v of Object.values(res.values)) expect(v.every(Number.isFinite)).toBe(true);
    expect(() => resolveTermScores(r, 'stop', { seed: 9, lineOf: () => null })).toThrow(/returned undefined at step 0/);
    s.close();
  });

  it('stops a runaway allocation at the memory limit', async () => {
    const s = await createRewardSandbox('export const hog = () => { const a = []; for (;;) a.push({ i: a.length }); };', { memoryBytes: 16 * 1024 * 1024, callTimeoutMs: 5000 });
    const e = await failure(s.score([handMade()]));
    expect(e.kind).toBe('memory');
    expect(e.message).toMatch(/reward term 'hog' ran out of memory/);
    s.close();
  });

  it('refuses the term names __proto__, constructor and prototype by name', async () => {
    for (const name of ['__proto__', 'constructor', 'prototype']) {
      const e = await failure(createRewardSandbox(`const f = () => 1;\nexport const ok = () => 0;\nexport { f as ${name} };`));
      expect(e.kind).toBe('load');
      expect(e.message).toContain(`export '${name}' (line 3) has a name no term may take (__proto__, constructor, prototype`);
    }
  });

  it('gives every term frozen records and its own list of the steps before: no term changes what another reads', async () => {
    const s = await createRewardSandbox(`
export const vandal = (s) => {
  const st = s.episode.steps, n = st.length;
  st.reverse(); st.length = 0; st.push('x', 'y', 'z'); st[7] = 'w';
  let threw = 0;
  for (const f of [() => { s.reward = 99; }, () => { s.state.x = 99; }, () => { s.info.success = true; }, () => { s.episode.returnSoFar = 9; }, () => { s.episode.steps = []; }]) {
    try { f(); } catch (e) { threw += e instanceof TypeError ? 1 : 0; }
  }
  return n * 10 + threw;
};
export const reader = (s) => s.episode.steps.length * 100 + s.episode.steps.reduce((a, p) => a + p.t, 0) + s.reward + s.state.x;
export const frozen = (s) => [s, s.observation, s.state, s.info, s.episode, ...s.episode.steps].every((o) => Object.isFrozen(o)) ? 1 : 0;
export const previous = (s) => (s.t === 0 ? -1 : s.episode.steps.at(-1).t);
`);
    const [r] = await s.score([handMade(), handMade(8)]);
    // The vandal sees the steps before it each time (its own list is rebuilt), and every write to a record threw.
    expect(Array.from(r.values.vandal)).toEqual([5, 15, 25]);
    // Steps 0, 1, 2 at x = 0, 1, 2 with env rewards 0, 0, 0.9: untouched by the vandal.
    expect(Array.from(r.values.reader)).toEqual([0, 101 + 0, 200 + 1 + 2 + 0.9]);
    expect(Array.from(r.values.frozen)).toEqual([1, 1, 1]);
    expect(Array.from(r.values.previous)).toEqual([-1, 0, 1]);
    // A field write is refused where the term makes it, naming the term.
    const w = await createRewardSandbox('export const writer = (s) => {\n  s.reward = 5;\n  return 0;\n};');
    const e = await failure(w.score([handMade(3)]));
    expect(e.message).toMatch(/reward term 'writer' threw TypeError: .*\(line 2\) at step 0 of the episode with seed 3/);
    s.close();
    w.close();
  });

  it('stops deep recursion with QuickJS\'s own stack error, naming the term, the line and the seed; the host never aborts', async () => {
    const cases: [string, string][] = [
      ['plain', 'const f = (n) => f(n + 1) + 1;\nexport const deep = (s) => f(0);'],
      ['through map', 'const f = (n) => [n].map((x) => f(x + 1))[0];\nexport const deep = (s) => f(0);'],
      ['through sort', 'const f = (n) => { let r = 0; [2, 1].sort((a, b) => { r = f(n + 1); return a - b; }); return r; };\nexport const deep = (s) => f(0);'],
      ['JSON.stringify', 'export const ok = () => 0;\nexport const deep = (s) => { let a = []; for (let i = 0; i < 100000; i++) a = [a]; return JSON.stringify(a).length; };'],
      ['a getter', 'const o = { get x() { return this.x + 1; } };\nexport const deep = (s) => o.x;'],
    ];
    for (const [what, code] of cases) {
      const s = await createRewardSandbox(code);
      const e = await failure(s.score([handMade(11)]));
      expect(e.kind, what).toBe('stack');
      expect(e.message, what).toMatch(/^reward term 'deep' overflowed the sandbox's stack \(line [12]\) at step 0 of the episode with seed 11: recursion too deep/);
      expect(() => s.close(), what).not.toThrow();
    }
    // Recursion at the top level of the module is refused while loading.
    const load = await failure(createRewardSandbox('const f = (n) => f(n + 1);\nf(0);\nexport const a = () => 1;'));
    expect(load.message).toMatch(/reward module: overflowed the sandbox's stack while loading/);
    // Sandboxes made afterwards work (each has its own instance).
    const s = await createRewardSandbox('const f = (n) => (n === 0 ? 0 : 1 + f(n - 1));\nexport const fine = (s) => f(100);');
    expect(Array.from((await s.score([handMade()]))[0].values.fine)).toEqual([100, 100, 100]);
    s.close();
  });

  it('should the host\'s stack overflow first (a stack limit set too high), drops the instance and still names the term', async () => {
    // 512 KiB was the old default: the host's stack ran out before QuickJS's limit.
    const s = await createRewardSandbox('const f = (n) => f(n + 1) + 1;\nexport const deep = (s) => f(0);', { stackBytes: 512 * 1024 });
    const e = await failure(s.score([handMade(6)]));
    expect(e.kind).toBe('stack');
    expect(e.message).toMatch(/^reward term 'deep' \(line 2\) recursed so deeply that the host's stack overflowed in the episode with seed 6 \(RangeError: Maximum call stack size exceeded\); the sandbox was dropped/);
    await expect(s.score([handMade()])).rejects.toThrow(/host's stack overflowed/);
    expect(() => s.close()).not.toThrow();
    const fresh = await createRewardSandbox('export const a = () => 1;');
    expect(Array.from((await fresh.score([handMade()]))[0].values.a)).toEqual([1, 1, 1]);
    fresh.close();
  });

  it('stops an allocation bomb at the memory cap within a second or two, whatever it allocates', async () => {
    for (const bomb of ['const a = []; for (;;) a.push(new Array(1e6).fill(1));', 'const a = []; for (;;) a.push(new Float64Array(1e6));', 'return new Array(1e8).fill(0).length;', "let s = 'x'; for (;;) s += s;"]) {
      const s = await createRewardSandbox(`export const ok = () => 0;\nexport const hog = () => {\n  ${bomb}\n};`);
      const t0 = performance.now();
      const e = await failure(s.score([handMade(4)]));
      // ~0.1-0.6 s each on a quiet machine (the first took 9 s before the memory cap, 45 s in a
      // browser); the bound leaves room for a loaded CI machine.
      const ms = performance.now() - t0;
      console.log(`allocation bomb stopped after ${ms.toFixed(0)} ms: ${bomb}`);
      expect(ms, bomb).toBeLessThan(5000);
      expect(e.kind, bomb).toBe(/s \+= s/.test(bomb) ? 'exception' : 'memory');
      expect(e.message, bomb).toMatch(/reward term 'hog' (ran out of memory \(limit 64 MiB\)|threw InternalError: string too long).* at step 0 of the episode with seed 4/);
      s.close();
    }
  });

  it('scores a batch larger than one chunk in pieces, in order, within a small heap', async () => {
    const big = (seed: number) => {
      const ep = handMade(seed);
      return { ...ep, steps: ep.steps.map((st) => ({ ...st, observation: { ...st.observation, text: 'x'.repeat(8000 + seed) } })) };
    };
    const eps = Array.from({ length: 400 }, (_, i) => big(i));
    const s = await createRewardSandbox('export const a = (s) => s.episode.seed * 1000 + s.t;\nexport const len = (s) => s.observation.text.length;', { memoryBytes: 16 * 1024 * 1024 });
    const out = await s.score(eps);
    expect(out).toHaveLength(400);
    out.forEach((r, i) => {
      expect(Array.from(r.values.a)).toEqual([i * 1000, i * 1000 + 1, i * 1000 + 2]);
      expect(r.values.len[0]).toBe(8000 + i);
    });
    s.close();
  });

  it('hands control back between slices: timers run during a long batch, and interrupt() stops it there', async () => {
    // ~2 ms per call over 3000 steps: ~6 s of scoring.
    const s = await createRewardSandbox('export const slow = (s) => { const t = Date.now(); while (Date.now() - t < 2) {} return 1; };', { sliceMs: 100 });
    const eps = Array.from({ length: 1000 }, (_, i) => handMade(i));
    let ticks = 0;
    const timer = setInterval(() => ticks++, 20);
    const t0 = performance.now();
    let stoppedAt = 0;
    setTimeout(() => {
      stoppedAt = performance.now();
      s.interrupt!();
    }, 400);
    const e = await s.score(eps).then(
      () => null,
      (err: unknown) => err,
    );
    const done = performance.now();
    clearInterval(timer);
    expect(e).toBeInstanceOf(ScoringInterrupted);
    expect(stoppedAt).toBeGreaterThan(t0);
    expect(done - stoppedAt).toBeLessThan(1000);
    expect(ticks).toBeGreaterThan(0);
    // Later calls are refused the same way; close() frees it.
    await expect(s.score([handMade()])).rejects.toBeInstanceOf(ScoringInterrupted);
    s.close();
  });

  it('close() during a batch (a new reward version swapped in) lets the batch finish, then frees the sandbox', async () => {
    const s = await createRewardSandbox('export const slow = (s) => { const t = Date.now(); while (Date.now() - t < 2) {} return 1; };', { sliceMs: 50 });
    const p = s.score(Array.from({ length: 100 }, (_, i) => handMade(i)));
    setTimeout(() => s.close(), 100);
    const out = await p;
    expect(out.map((r) => Array.from(r.values.slow))).toEqual(Array.from({ length: 100 }, () => [1, 1, 1]));
    await expect(s.score([handMade()])).rejects.toThrow(/after close/);
  });

  // The time is logged, not asserted: speed bars belong in benchmarks (a 2 s bar failed at load ~12).
  it('scores 256 grid episodes of 30 steps with 3 terms in one call', async () => {
    const env = makeEnv('grid/empty-8x8') as GridEnv;
    const eps = Array.from({ length: 256 }, (_, i) => buildGridStepRecords(env, { envId: 'grid/empty-8x8', seed: i, actions: Array.from({ length: 30 }, (_, t) => (t * 7 + i) % 2), rewards: new Array(30).fill(0) }));
    const s = await createRewardSandbox('export const a = (s) => -0.01;\nexport const b = (s) => (s.state.goalDistance ?? 0) * -0.1;\nexport const c = (s) => s.episode.steps.length;');
    await s.score(eps.slice(0, 8));
    const t0 = performance.now();
    const out = await s.score(eps);
    const ms = performance.now() - t0;
    console.log(`scored 256 episodes × 30 steps × 3 terms in ${ms.toFixed(1)} ms`);
    expect(out).toHaveLength(256);
    expect(out.every((r) => r.values.a.length === 30 && r.values.a.every((x) => x === -0.01))).toBe(true);
    s.close();
  });
});

describe('step records replayed from a seed', () => {
  it("give each step gridGoalDistance's distance and the frame's agent, on every grid env", async () => {
    const { envIds } = await import('../../core/envs/index.ts');
    const { gridGoalDistance } = await import('../../core/reward/potentials.ts');
    for (const id of envIds().filter((e) => e.startsWith('grid/'))) {
      const env = makeEnv(id) as GridEnv;
      // A random walk, recorded as a rollout would: actions and the env's rewards.
      env.reset({ seed: 11 });
      const actions: number[] = [], rewards: number[] = [], expected: { d: number | null; x: number; y: number; dir: number }[] = [];
      for (let t = 0; t < 40; t++) {
        const f = env.frame() as import('../../core/envs/types.ts').GridFrame;
        const phi = gridGoalDistance.phi(f);
        expected.push({ d: phi === -(f.width * f.height) ? null : -phi, x: f.agent.x, y: f.agent.y, dir: f.agent.dir });
        const a = (t * 5 + 3) % 6;
        const r = env.step(a);
        actions.push(a);
        rewards.push(r.reward);
        if (r.terminated || r.truncated) break;
      }
      const ep = buildGridStepRecords(makeEnv(id) as GridEnv, { envId: id, seed: 11, actions, rewards });
      expect(ep.steps.map((s) => ({ d: s.state.goalDistance, x: s.state.x, y: s.state.y, dir: s.state.dir })), id).toEqual(expected);
    }
  });
});

describe('the editor examples', () => {
  it('load in the sandbox and score a real episode with finite values', async () => {
    const { EXAMPLE_TERMS } = await import('../../core/reward/examples.ts');
    const s = await createRewardSandbox(EXAMPLE_TERMS);
    expect(s.terms).toEqual(['progressBonus', 'stepCost', 'towardGoal']);
    const env = makeEnv('grid/empty-8x8') as GridEnv;
    const [r] = await s.score([buildGridStepRecords(env, { envId: 'grid/empty-8x8', seed: 3, actions: [2, 2, 1, 2, 2], rewards: [0, 0, 0, 0, 0] })]);
    expect(r.bad).toEqual([]);
    // Two steps east along the top row: one cell closer to the goal each, paid the step after.
    expect(Array.from(r.values.towardGoal)).toEqual([0, 0.05, 0.05, 0, 0.05]);
    s.close();
  });
});
