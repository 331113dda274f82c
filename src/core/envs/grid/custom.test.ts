import { describe, expect, it } from 'vitest';
import { makeEnv } from '../index.ts';
import { checkEnv, runExpert } from '../checkEnv.ts';
import { solveMap } from './mapSolve.ts';
import { EXAMPLE_MAPS } from './exampleMaps.ts';
import { DEFAULT_MAP, mapFromJson, mapFromKwargs, mapToJson, mapToKwargs, paintCell, parseGridMap, resizeRows, type GridMap } from './mapSpec.ts';

const examples = EXAMPLE_MAPS.map((e) => e.map);

const corridor: GridMap = { ...DEFAULT_MAP, rows: ['######', '#>.~G#', '#....#', '######'], maxSteps: 20, goalReward: 2, lavaReward: -1 };

describe('grid/custom', () => {
  it.each(examples.map((m) => [m.name, m] as const))('%s passes checkEnv and its expert matches solveMap', (_name, map) => {
    const kw = mapToKwargs(map);
    expect(checkEnv(() => makeEnv('grid/custom', kw), { seeds: [0, 5] })).toEqual([]);
    const verdict = solveMap(map.rows, map.maxSteps);
    expect(verdict.solvable).toBe(true);
    const expert = runExpert(makeEnv('grid/custom', kw), 3);
    expect(expert).toMatchObject({ success: true, steps: verdict.steps });
  });

  it('pays goalReward with the time discount on the goal and lavaReward in lava', () => {
    const env = makeEnv('grid/custom', mapToKwargs(corridor));
    expect(env.spec.rewardRange).toEqual([-1, 2]);
    env.reset({ seed: 0 });
    env.step(2); // to (2,1)
    const lava = env.step(2); // into the lava at (3,1)
    expect(lava).toMatchObject({ reward: -1, terminated: true, info: { success: false } });
    env.reset({ seed: 0 });
    // right, forward, left, forward, forward, forward, left, forward: 8 steps onto the goal at (4,1).
    const path = [1, 2, 0, 2, 2, 2, 0, 2];
    let last = env.step(path[0]);
    for (const a of path.slice(1)) last = env.step(a);
    expect(last.terminated).toBe(true);
    expect(last.reward).toBeCloseTo(2 * (1 - (0.9 * 8) / 20), 12);
    expect(solveMap(corridor.rows)).toMatchObject({ steps: 8 });
  });

  it('names every bad kwarg with its bound', () => {
    expect(() => makeEnv('grid/custom', { maxSteps: 0 })).toThrow(/grid\/custom: maxSteps: must be at least 1/);
    expect(() => makeEnv('grid/custom', { viewSize: 4 })).toThrow(/viewSize: must be odd/);
    expect(() => makeEnv('grid/custom', { map: '#####/#>.G#' })).toThrow(/the map has 2 rows; it needs 3 to 25/);
    expect(() => makeEnv('grid/custom', { map: '#####/#>.Q#/#####' })).toThrow(/unknown cell "Q" at column 4, row 2/);
    expect(() => makeEnv('grid/custom', { map: '#####/#>.<#/#####' })).toThrow(/2 agent starts/);
    expect(() => makeEnv('grid/custom', { map: '#####/#KK>#/#####' })).toThrow(/2 keys/);
    expect(() => makeEnv('grid/custom', { size: 5 })).toThrow(/Unrecognized key.*size|size/);
  });

  it('survives the link and file round trips', () => {
    const m = examples[1];
    expect(mapFromKwargs(mapToKwargs(m))).toEqual({ ok: true, map: m });
    expect(mapFromJson(mapToJson(m))).toEqual({ ok: true, map: m });
    expect(mapFromJson('{"kind": "grid-map", rows: []}')).toMatchObject({ ok: false, messages: [expect.stringMatching(/^not valid JSON/)] });
    expect(parseGridMap({ kind: 'code' })).toMatchObject({ ok: false, messages: expect.arrayContaining(['kind: must be "grid-map"']) });
  });

  it('paints and resizes', () => {
    const rows = ['#####', '#>..#', '#####'];
    expect(paintCell(rows, 3, 1, '^')).toEqual(['#####', '#..^#', '#####']);
    expect(paintCell(rows, 2, 1, 'G')).toEqual(['#####', '#>G.#', '#####']);
    expect(resizeRows(rows, 3, 4)).toEqual(['###', '#>.', '###', '...']);
    // The start falls outside: it comes back on the first empty cell.
    expect(resizeRows(['###', '#.>', '###'], 2, 3)).toEqual(['##', '#>', '##']);
  });
});
