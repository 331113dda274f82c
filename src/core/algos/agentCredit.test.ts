import { describe, expect, it } from 'vitest';
import type { Info } from '../envs/types.ts';
import { agentCreditMetrics, type AgentEpisode } from './agentCredit.ts';

/** An episode from a list of (agent, subgoal) steps and their entropies. */
function ep(steps: [number, boolean][], entropies: number[]): AgentEpisode {
  return { infos: steps.map(([agent, subgoal]): Info => ({ agent, subgoal })), entropies: Float32Array.from(entropies) };
}

describe('agentCreditMetrics', () => {
  it('splits a hand-made batch by the agent that took each step', () => {
    // Episode 1: a b a b a (A reaches its subgoal at step 3, B at step 4).
    // Episode 2: a b a     (nobody reaches a subgoal).
    const e1 = ep([[0, false], [1, false], [0, true], [1, true], [0, false]], [1, 2, 1, 2, 1]);
    const e2 = ep([[0, false], [1, false], [0, false]], [0.5, 1, 0.5]);
    // Advantages, row by row: e1's five steps then e2's three.
    const adv = [0.5, -1, 0.5, 2, 0.5, -0.25, 0.5, -0.25];
    const m = agentCreditMetrics(['a', 'b'], [e1, e2], adv, [e1, e2]);
    // A's steps: e1 t0,t2,t4 and e2 t0,t2 -> 0.5, 0.5, 0.5, -0.25, -0.25: sum 1, |sum| 2, 5 steps.
    // B's steps: e1 t1,t3 and e2 t1 -> -1, 2, 0.5: sum 1.5, |sum| 3.5, 3 steps.
    expect(m['agents/a/adv_mean']).toBeCloseTo(1 / 5, 12);
    expect(m['agents/a/adv_abs_mean']).toBeCloseTo(2 / 5, 12);
    expect(m['agents/b/adv_mean']).toBeCloseTo(1.5 / 3, 12);
    expect(m['agents/b/adv_abs_mean']).toBeCloseTo(3.5 / 3, 12);
    expect(m['agents/a/adv_share']).toBeCloseTo(2 / 5.5, 12);
    expect(m['agents/b/adv_share']).toBeCloseTo(3.5 / 5.5, 12);
    // Entropy: A (1+1+1+0.5+0.5)/5 = 0.8; B (2+2+1)/3.
    expect(m['agents/a/entropy']).toBeCloseTo(0.8, 6);
    expect(m['agents/b/entropy']).toBeCloseTo(5 / 3, 6);
    // Steps per episode: A 5/2, B 3/2.
    expect(m['agents/a/steps_mean']).toBe(2.5);
    expect(m['agents/b/steps_mean']).toBe(1.5);
    // Subgoals: one episode of two for each; A's at env step 3, B's at 4.
    expect(m['agents/a/subgoal_rate']).toBe(0.5);
    expect(m['agents/b/subgoal_rate']).toBe(0.5);
    expect(m['agents/a/subgoal_step_mean']).toBe(3);
    expect(m['agents/b/subgoal_step_mean']).toBe(4);
  });

  it('counts only the first subgoal step per episode; outcome keys use every sampled episode', () => {
    const e = ep([[0, true], [1, false], [0, true], [1, false]], [1, 1, 1, 1]);
    const never = ep([[0, false], [1, false]], [1, 1]);
    const m = agentCreditMetrics(['a', 'b'], [e], [0, 0, 0, 0], [e, never, never]);
    expect(m['agents/a/subgoal_rate']).toBeCloseTo(1 / 3, 12);
    expect(m['agents/a/subgoal_step_mean']).toBe(1);
    expect(m['agents/b/subgoal_rate']).toBe(0);
    expect(m['agents/b/subgoal_step_mean']).toBeNaN();
    expect(m['agents/a/adv_share']).toBe(0); // all advantages zero: no credit to split
  });

  it('refuses advantages that do not line up with the steps', () => {
    expect(() => agentCreditMetrics(['a', 'b'], [ep([[0, false]], [1])], [1, 2], [])).toThrow(/2 advantages for 1 steps/);
  });
});
