/**
 * Expert-variant kwargs (demonstrators that lack a behaviour): they change what expertAction()
 * plays, never the env's dynamics (same task, same tool replies for the same actions).
 */
import { describe, expect, it } from 'vitest';
import { makeFlakyApi } from './flakyApi.ts';
import { makeKvLookup } from './kvLookup.ts';
import type { ToolEnv } from '../types.ts';

/** Plays the expert from `seed`; returns its actions and the observations it met. */
function playExpert(env: ToolEnv, seed: number): { actions: string[]; obs: string[]; success: boolean } {
  const obs = [env.reset({ seed }).obs.text];
  const actions: string[] = [];
  for (let a = env.expertAction(); a !== null; a = env.expertAction()) {
    actions.push(a);
    const r = env.step(a);
    obs.push(r.obs.text);
    if (r.terminated || r.truncated) return { actions, obs, success: r.info.success === true };
  }
  throw new Error('unreachable');
}

describe('tools/flaky-api expertExtraCallProb', () => {
  it('fetches the value 1 + Geometric(q) times (capped by maxTurns), leaving the task and replies as they were', () => {
    const q = 0.6;
    const N = 3000;
    const plain = makeFlakyApi({ failureProb: 0, maxTurns: 100 });
    const over = makeFlakyApi({ failureProb: 0, maxTurns: 100, expertExtraCallProb: q });
    let calls = 0;
    let once = 0;
    for (let seed = 0; seed < N; seed++) {
      const a = playExpert(plain, seed);
      const b = playExpert(over, seed);
      // Same task, and every fetch shows the same value: the kwarg moves the expert only.
      expect(b.obs[0]).toBe(a.obs[0]);
      expect(a.actions.length).toBe(2);
      expect(new Set(b.obs.slice(1, -1))).toEqual(new Set([a.obs[1]]));
      expect(b.success).toBe(true);
      calls += b.actions.length - 1;
      if (b.actions.length === 2) once++;
    }
    // Fetches = 1 + K, K geometric with P(K ≥ k) = q^k: mean 1 + q/(1−q) = 2.5, P(K = 0) = 1 − q.
    const se = Math.sqrt(q / (1 - q) ** 2 / N);
    expect(Math.abs(calls / N - (1 + q / (1 - q)))).toBeLessThan(4 * se);
    expect(Math.abs(once / N - (1 - q))).toBeLessThan(4 * Math.sqrt((q * (1 - q)) / N));
  });

  it('with q = 1 calls until the turn limit and never answers', () => {
    const r = playExpert(makeFlakyApi({ failureProb: 0, maxTurns: 4, expertExtraCallProb: 1 }), 7);
    expect(r.actions.every((a) => a.startsWith('call('))).toBe(true);
    expect(r.actions.length).toBe(4);
    expect(r.success).toBe(false);
  });
});

describe('tools/kv-lookup expertGuessProb', () => {
  it("guesses the first entry's city (always wrong: the team's home city) with probability q", () => {
    const q = 0.7;
    const N = 2000;
    const careful = makeKvLookup({ hops: 2 });
    const hasty = makeKvLookup({ hops: 2, expertGuessProb: q });
    let guesses = 0;
    for (let seed = 0; seed < N; seed++) {
      const a = playExpert(careful, seed);
      const b = playExpert(hasty, seed);
      expect(b.obs[0]).toBe(a.obs[0]);
      expect(b.actions[0]).toBe(a.actions[0]);
      expect(a.success).toBe(true);
      if (b.actions.length === 2) {
        guesses++;
        // The team entry, e.g. "result: team red: manager ada, home city lima, 12 players": answer(lima).
        const home = /home city (\w+)/.exec(b.obs[1])![1];
        expect(b.actions[1]).toBe(`answer(${home})`);
        expect(b.success).toBe(false);
      } else {
        expect(b.actions).toEqual(a.actions);
      }
    }
    expect(Math.abs(guesses / N - q)).toBeLessThan(4 * Math.sqrt((q * (1 - q)) / N));
  });
});
