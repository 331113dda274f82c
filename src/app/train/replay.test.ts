import { describe, expect, it } from 'vitest';
import '../../core/envs/index.ts';
import { makeEnv } from '../../core/envs/index.ts';
import type { GridFrame } from '../../core/envs/types.ts';
import { replayGrid } from './replay.ts';

describe('replayGrid', () => {
  it('reproduces an expert episode exactly from its seed and actions', () => {
    const env = makeEnv('grid/door-key-6x6');
    env.reset({ seed: 7 });
    const actions: number[] = [];
    const frames: GridFrame[] = [env.frame() as GridFrame];
    let done = false;
    while (!done) {
      const a = env.expertAction() as number;
      actions.push(a);
      const r = env.step(a);
      frames.push(env.frame() as GridFrame);
      done = r.terminated || r.truncated;
    }
    const rep = replayGrid('grid/door-key-6x6', {}, 7, actions);
    expect(rep.problem).toBeUndefined();
    expect(rep.terminated).toBe(true);
    expect(rep.states).toHaveLength(actions.length + 1);
    rep.states.forEach((s, t) => expect(s.frame.agent).toEqual(frames[t].agent));
    expect(rep.rewards[rep.rewards.length - 1]).toBeGreaterThan(0);
  });

  it('says so when the record does not match the env (extra actions, or not finished)', () => {
    expect(replayGrid('grid/empty-5x5', {}, 1, [1, 1]).problem).toMatch(/had not ended/);
    const env = makeEnv('grid/empty-5x5');
    env.reset({ seed: 1 });
    const actions: number[] = [];
    for (let done = false; !done; ) {
      const a = env.expertAction() as number;
      actions.push(a);
      const r = env.step(a);
      done = r.terminated || r.truncated;
    }
    expect(replayGrid('grid/empty-5x5', {}, 1, [...actions, 2]).problem).toMatch(/ended at step/);
  });
});
