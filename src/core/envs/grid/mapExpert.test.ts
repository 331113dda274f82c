/**
 * grid/custom's expert plans with mapSolve's small-state search (custom.ts solveFromHere). Checked
 * against the full-state search every other grid world uses (an AsciiGridEnv of the same rows
 * keeps world.ts's own), from states a random prefix of actions left (keys dropped elsewhere,
 * doors opened and closed again), and on a 25×25 map with a key and 4 doors, where the full-state
 * search took 5.5-9 s per call and the studio's check never finished.
 */
import { describe, expect, it } from 'vitest';
import '../index.ts';
import { makeEnv } from '../index.ts';
import { runExpert } from '../checkEnv.ts';
import type { Env } from '../types.ts';
import { Rng } from '../../util/rng.ts';
import { AsciiGridEnv } from './ascii.ts';
import { checkMap } from './mapCheck.ts';
import { mapToKwargs, parseGridMap, type GridMap } from './mapSpec.ts';
import { solveMap } from './mapSolve.ts';
import fourDoors from './fixtures/four-doors-25x25.json';

/** A random 7×7 room: walls, lava, one key, up to 2 locked doors, a goal and the agent, each on its own cell. */
function randomRows(rng: Rng): string[] {
  const cells: string[][] = Array.from({ length: 7 }, (_, y) => Array.from({ length: 7 }, (_, x) => (x === 0 || y === 0 || x === 6 || y === 6 ? '#' : '.')));
  const free = () => {
    for (;;) {
      const x = rng.int(1, 6);
      const y = rng.int(1, 6);
      if (cells[y][x] === '.') return [x, y] as const;
    }
  };
  const put = (ch: string) => {
    const [x, y] = free();
    cells[y][x] = ch;
  };
  put('>v<^'[rng.int(0, 4)]);
  put('G');
  put('K');
  for (let i = rng.int(0, 3); i > 0; i--) put('L');
  for (let i = rng.int(0, 5); i > 0; i--) put('#');
  for (let i = rng.int(0, 2); i > 0; i--) put('~');
  return cells.map((r) => r.join(''));
}

/** Plays the expert to the end from where the env stands: success and steps taken. */
function expertFromHere(env: Env<unknown, number>, budget: number): { success: boolean; steps: number } {
  for (let t = 0; t < budget; t++) {
    const a = env.expertAction();
    if (a === null) return { success: false, steps: t };
    const r = env.step(a);
    if (r.terminated || r.truncated) return { success: r.info.success === true, steps: t + 1 };
  }
  return { success: false, steps: budget };
}

const fourDoorMap = (): GridMap => {
  const r = parseGridMap(fourDoors);
  if (!r.ok) throw new Error(r.messages.join('; '));
  return r.map;
};

describe("grid/custom's expert", () => {
  it('plans as short as the full-state search from any mid-episode state (dropped keys, doors closed again)', () => {
    const rng = new Rng(37);
    let compared = 0;
    let moved = 0;
    for (let m = 0; m < 60; m++) {
      const rows = randomRows(rng);
      const custom = makeEnv('grid/custom', { map: rows.join('/'), maxSteps: 200 }) as Env<unknown, number>;
      const full = new AsciiGridEnv(rows, { maxSteps: 200 }) as unknown as Env<unknown, number>;
      for (let trial = 0; trial < 3; trial++) {
        custom.reset({ seed: trial });
        full.reset({ seed: trial });
        // The same random prefix on both (every action, drop and toggle included).
        let ended = false;
        for (let t = rng.int(0, 40); t > 0 && !ended; t--) {
          const a = rng.int(0, 6);
          const rc = custom.step(a);
          const rf = full.step(a);
          expect(rc.reward).toBe(rf.reward);
          ended = rc.terminated || rc.truncated;
          moved++;
        }
        if (ended) continue;
        const a = expertFromHere(custom, 150);
        const b = expertFromHere(full, 150);
        expect(a, rows.join('\n')).toEqual(b);
        compared++;
      }
    }
    // Most prefixes leave a live episode; many of them solvable (the comparison is not vacuous).
    expect(compared).toBeGreaterThan(100);
    expect(moved).toBeGreaterThan(1000);
  });

  it('on a 25×25 map with a key and 4 locked doors: solves it in the solver steps, and the studio check finishes with the contract kept', { timeout: 60_000 }, () => {
    const map = fourDoorMap();
    const verdict = solveMap(map.rows, map.maxSteps);
    expect(verdict).toMatchObject({ solvable: true, steps: 130 });
    const env = makeEnv('grid/custom', mapToKwargs(map));
    expect(runExpert(env, 0)).toMatchObject({ success: true, steps: 130 });
    // checkEnv mixes the expert with random actions, so the expert plans again after every
    // random one (hundreds of plans): with the full-state search this took over 131 s.
    const check = checkMap(map);
    expect(check.contract).toEqual([]);
    expect(check.refusal).toBeNull();
  });
});
