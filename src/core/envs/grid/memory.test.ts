/**
 * The memory env must truly need memory: the cue is in view at the start, out of view at the
 * junction, and the junction looks the same whichever cue was shown.
 */
import { describe, expect, it } from 'vitest';
import type { GridFrame, GridObs } from '../types.ts';
import { MemoryEnv } from './memory.ts';
import { OBJ } from './objects.ts';
import { ACTION } from './world.ts';

const CUE = '1,3';
const visibleSet = (env: MemoryEnv): Set<string> => new Set(env.frame().visible.map(([x, y]) => `${x},${y}`));

/** Follows the expert until the agent stands on the junction's centre cell; returns that observation. */
function walkToJunction(env: MemoryEnv, seed: number): GridObs {
  let obs = env.reset({ seed }).obs;
  const size = (env.frame() as GridFrame).width;
  while (!(env.agentState.x === size - 2 && env.agentState.y === 3)) {
    const a = env.expertAction();
    if (a === null) throw new Error('expert gave up');
    obs = env.step(a).obs;
  }
  return obs;
}

describe('grid/memory', () => {
  it('shows the cue at the start', () => {
    const env = new MemoryEnv('grid/memory');
    for (let seed = 0; seed < 20; seed++) {
      const { obs } = env.reset({ seed });
      expect(visibleSet(env).has(CUE)).toBe(true);
      const cue = (env.frame() as GridFrame).cells[(3 * 13 + 1) * 3];
      expect(obs.text).toContain(cue === OBJ.key ? 'K' : 'B');
    }
  });

  it('hides the cue from the junction, whatever the heading', () => {
    const env = new MemoryEnv('grid/memory');
    for (let seed = 0; seed < 20; seed++) {
      walkToJunction(env, seed);
      for (let turn = 0; turn < 4; turn++) {
        expect(visibleSet(env).has(CUE)).toBe(false);
        env.step(ACTION.left);
      }
    }
  });

  it('looks the same at the junction for either cue (so only memory can tell)', () => {
    const env = new MemoryEnv('grid/memory');
    const byArms = new Map<number, Map<number, GridObs>>(); // north object -> cue -> junction obs
    for (let seed = 0; seed < 40; seed++) {
      const obs = walkToJunction(env, seed);
      const cells = (env.frame() as GridFrame).cells;
      const north = cells[(1 * 13 + 11) * 3];
      const cue = cells[(3 * 13 + 1) * 3];
      if (!byArms.has(north)) byArms.set(north, new Map());
      byArms.get(north)!.set(cue, obs);
    }
    for (const cues of byArms.values()) {
      expect(cues.size).toBe(2);
      const [a, b] = [...cues.values()];
      expect(a).toEqual(b);
    }
  });

  it('ends with success in the matching arm and failure in the other', () => {
    const env = new MemoryEnv('grid/memory');
    let wins = 0;
    let losses = 0;
    for (let seed = 0; seed < 20; seed++) {
      walkToJunction(env, seed);
      const cells = (env.frame() as GridFrame).cells;
      const northMatches = cells[(1 * 13 + 11) * 3] === cells[(3 * 13 + 1) * 3];
      // Turn to face north (heading 3) and step into the north arm.
      while (env.agentState.dir !== 3) env.step(ACTION.left);
      const r = env.step(ACTION.forward);
      expect(r.terminated).toBe(true);
      expect(r.info.success).toBe(northMatches);
      if (northMatches) {
        expect(r.reward).toBeGreaterThan(0);
        wins++;
      } else {
        expect(r.reward).toBe(0);
        losses++;
      }
    }
    expect(wins).toBeGreaterThan(0);
    expect(losses).toBeGreaterThan(0);
  });

  it('glues objects down, so the cue cannot be carried to the junction', () => {
    const env = new MemoryEnv('grid/memory');
    let seed = 0;
    while (env.reset({ seed }) && env.agentState.y !== 3) seed++; // a start in line with the cue
    expect(env.agentState).toMatchObject({ x: 3, y: 3, dir: 2 }); // facing west, cue two cells ahead
    env.step(ACTION.forward);
    env.step(ACTION.pickup);
    expect(env.agentState.carrying).toBeNull();
    expect(env.currentGrid().type(1, 3)).not.toBe(OBJ.empty);
    expect(visibleSet(env).has(CUE)).toBe(true);
  });

  it('refuses a size where the junction could see the cue', () => {
    expect(() => new MemoryEnv('grid/memory', { size: 9 })).toThrow(/size = 9 is below the minimum 10/);
    expect(() => new MemoryEnv('grid/memory', { size: 12, viewSize: 11 })).toThrow(/minimum 14/);
  });
});
