import { describe, expect, it } from 'vitest';
import { makeEnv } from '../../core/envs/index.ts';
import { firstDifference } from '../../core/util/deep.ts';
import { advance, isOver, rewind, startEpisode, type Episode } from './episode.ts';

/** Plays the expert (or `fallback` when it has none) for up to `n` steps. */
function playExpert(id: string, seed: number, n: number): { ep: Episode; env: ReturnType<typeof makeEnv> } {
  const env = makeEnv(id);
  let ep = startEpisode(env, seed);
  for (let i = 0; i < n && !isOver(ep); i++) ep = advance(env, ep, env.expertAction(), 'expert');
  return { ep, env };
}

describe('episode record', () => {
  it('sums rewards, counts steps and records the outcome of an expert episode', () => {
    const { ep, env } = playExpert('grid/door-key-6x6', 3, 1000);
    expect(ep.terminated).toBe(true);
    expect(ep.success).toBe(true);
    expect(ep.snapshots).toHaveLength(ep.steps.length + 1);
    expect(ep.totalReward).toBeCloseTo(ep.steps.reduce((a, s) => a + s.reward, 0), 12);
    // Success reward is 1 - 0.9 * steps / maxSteps (the grid envs' contract), paid once at the end.
    expect(ep.totalReward).toBeCloseTo(1 - (0.9 * ep.steps.length) / env.spec.maxSteps, 9);
  });

  it('rewinding replays to exactly the earlier state, and the live env continues from there', () => {
    for (const id of ['grid/four-rooms', 'tools/flaky-api']) {
      const { ep, env } = playExpert(id, 11, 6);
      const k = Math.max(0, ep.steps.length - 3);
      const back = rewind(env, ep, k);
      expect(back.steps).toHaveLength(k);
      for (let i = 0; i <= k; i++) expect(firstDifference(back.snapshots[i], ep.snapshots[i]), `${id} snapshot ${i}`).toBeNull();
      // Stepping the same action again from the rewound env reproduces the original next step.
      const again = advance(env, back, ep.steps[k].action, 'you');
      expect(firstDifference(again.snapshots[k + 1], ep.snapshots[k + 1])).toBeNull();
    }
  });

  it('counts malformed tool calls and refuses to step a finished episode', () => {
    const env = makeEnv('tools/calculator');
    let ep = startEpisode(env, 1);
    ep = advance(env, ep, 'calc(1+', 'you');
    ep = advance(env, ep, 'Answer(3)', 'you');
    expect(ep.malformed).toBe(2);
    while (!isOver(ep)) ep = advance(env, ep, 'answer(0)', 'you');
    expect(() => advance(env, ep, 'answer(0)', 'you')).toThrow(/over/);
  });
});
