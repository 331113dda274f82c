import { describe, expect, it } from 'vitest';
import { makeEnv } from '../index.ts';
import { runExpert } from '../checkEnv.ts';
import type { GridWorld } from './world.ts';
import { AGENT_CHARS, cellChar } from './objects.ts';
import { solveMap } from './mapSolve.ts';

/** A shipped env's episode for `seed` as map rows (its layout drawn in the map legend). */
function rowsOf(id: string, seed: number): string[] {
  const env = makeEnv(id) as unknown as GridWorld;
  env.reset({ seed });
  const g = env.currentGrid();
  const a = env.agentState;
  return Array.from({ length: g.height }, (_, y) =>
    Array.from({ length: g.width }, (_, x) => (x === a.x && y === a.y ? AGENT_CHARS[a.dir] : cellChar(g.type(x, y), g.state(x, y)))).join(''),
  );
}

describe('solveMap on hand-made maps', () => {
  it('walks a corridor: two forwards', () => {
    expect(solveMap(['#####', '#>.G#', '#####'])).toEqual({ solvable: true, steps: 2, actions: [2, 2] });
  });

  it('turns first when facing away: right, right, forward, forward', () => {
    // Facing the goal two cells west: two steps. Facing away from it: two turns, then two steps.
    expect(solveMap(['#####', '#G.<#', '#####'])).toEqual({ solvable: true, steps: 2, actions: [2, 2] });
    expect(solveMap(['#####', '#<.G#', '#####'])).toEqual({ solvable: true, steps: 4, actions: [0, 0, 2, 2] });
  });

  it('fetches the key, opens the door, walks through', () => {
    // Agent (1,1) facing east, key at (1,3) two below, door at (3,2), goal at (4,2):
    // right, forward (1,2), pickup (key at (1,3) in front), left (east), forward (2,2),
    // toggle (door at (3,2)), forward (3,2), forward (4,2) = 8 steps.
    const rows = ['######', '#>.#.#', '#..LG#', '#K.#.#', '######'];
    const v = solveMap(rows);
    expect(v).toEqual({ solvable: true, steps: 8, actions: [1, 2, 3, 0, 2, 5, 2, 2] });
  });

  it('walks around lava rather than into it', () => {
    // Straight east is lava; the way round, counted by hand: right, forward (1,2), left,
    // forward (2,2), forward (3,2), left, forward onto the goal at (3,1) = 7 steps.
    const v = solveMap(['#####', '#>~G#', '#...#', '#####']);
    expect(v).toEqual({ solvable: true, steps: 7, actions: [1, 2, 0, 2, 2, 0, 2] });
  });

  it('says why a map cannot be solved', () => {
    expect(solveMap(['#####', '#>..#', '#####'])).toEqual({ solvable: false, reason: 'no goal: paint a goal cell' });
    expect(solveMap(['######', '#>.#G#', '######'])).toMatchObject({ solvable: false, reason: expect.stringMatching(/^the goal is walled off/) });
    expect(solveMap(['######', '#>.~G#', '######'])).toMatchObject({ solvable: false, reason: expect.stringMatching(/^the goal is cut off by lava/) });
    expect(solveMap(['######', '#>.LG#', '######'])).toMatchObject({ solvable: false, reason: 'the door needs a key, and the map has none' });
    expect(solveMap(['#######', '#>.LKG#', '#######'])).toMatchObject({ solvable: false, reason: 'the door needs a key that is behind it' });
    expect(solveMap(['#######', '#>.L.G#', '#####K#', '#######'])).toMatchObject({ solvable: false, reason: expect.stringMatching(/^the key cannot be reached/) });
  });

  it('refuses a solution longer than the step limit, naming both numbers', () => {
    expect(solveMap(['#####', '#<.G#', '#####'], 3)).toEqual({ solvable: false, steps: 4, reason: 'the shortest solution takes 4 steps, more than the step limit of 3' });
    expect(solveMap(['#####', '#<.G#', '#####'], 4)).toMatchObject({ solvable: true, steps: 4 });
  });
});

describe('solveMap on the shipped grid envs', () => {
  it('empty rooms: 5 and 11 steps, counted by hand', () => {
    // Start (1,1) facing east, goal in the far corner: (size-3) forwards, one right turn, (size-3) forwards.
    expect(solveMap(rowsOf('grid/empty-5x5', 0))).toMatchObject({ solvable: true, steps: 5 });
    expect(solveMap(rowsOf('grid/empty-8x8', 0))).toMatchObject({ solvable: true, steps: 11 });
  });

  it.each(['grid/four-rooms', 'grid/door-key-6x6', 'grid/lava-crossing-9x9'])('%s: as short as the env’s own full-state expert on 8 seeds', (id) => {
    for (let seed = 0; seed < 8; seed++) {
      const v = solveMap(rowsOf(id, seed));
      const expert = runExpert(makeEnv(id), seed);
      expect(expert.success).toBe(true);
      expect(v).toMatchObject({ solvable: true, steps: expert.steps });
    }
  });
});
