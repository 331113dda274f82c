import { describe, expect, it } from 'vitest';
import type { GridEnv, GridFrame } from '../envs/types.ts';
import { makeEnv } from '../envs/index.ts';
import { OBJ } from '../envs/grid/objects.ts';
import { gridGoalDistance, gridStepsToSuccess } from './potentials.ts';
import { CustomMapEnv } from '../envs/grid/custom.ts';
import { DEFAULT_MAP, mapToKwargs } from '../envs/grid/mapSpec.ts';
import { solveMap } from '../envs/grid/mapSolve.ts';
import { ACTION } from '../envs/grid/world.ts';
import fourRooms from '../../../examples/envs/four-rooms.json';
import lavaCrossing from '../../../examples/envs/lava-crossing.json';

/** Build a frame from rows of 'W' wall, '.' empty, 'G' goal, 'L' lava, 'D' locked-door-ish, 'A' agent. */
function frame(rows: string[]): GridFrame {
  const H = rows.length, W = rows[0].length;
  const cells = new Uint8Array(W * H * 3);
  let ax = 0, ay = 0;
  rows.forEach((row, y) =>
    [...row].forEach((c, x) => {
      const t = { W: OBJ.wall, '.': OBJ.empty, G: OBJ.goal, L: OBJ.lava, D: OBJ.door, A: OBJ.empty }[c]!;
      cells[(y * W + x) * 3] = t;
      if (c === 'D') cells[(y * W + x) * 3 + 2] = 2;
      if (c === 'A') [ax, ay] = [x, y];
    }),
  );
  return { kind: 'grid', width: W, height: H, cells, agent: { x: ax, y: ay, dir: 0, carrying: null }, visible: [], mission: '' };
}

describe('gridGoalDistance', () => {
  it('straight corridor: 2 cells -> Φ = −2', () => {
    expect(gridGoalDistance.phi(frame(['WWWWW', 'WA.GW', 'WWWWW']))).toBe(-2);
  });

  it('around a wall: down, right, right, up = 4', () => {
    expect(gridGoalDistance.phi(frame(['WWWWW', 'WAWGW', 'W...W', 'WWWWW']))).toBe(-4);
  });

  it('lava blocks; doors do not (optimistic)', () => {
    // The only way round is through lava: unreachable -> −(5·4) = −20.
    expect(gridGoalDistance.phi(frame(['WWWWW', 'WAWGW', 'W.L.W', 'WWWWW']))).toBe(-20);
    expect(gridGoalDistance.phi(frame(['WWWWW', 'WADGW', 'WWWWW']))).toBe(-2);
  });

  it('rejects a transcript frame', () => {
    expect(() => gridGoalDistance.phi({ kind: 'transcript', messages: [] })).toThrow(/grid frame/);
  });
});

describe('gridStepsToSuccess: Φ = −(fewest actions to a goal from the actual state)', () => {
  /** A studio map as a real env, reset. */
  const envOf = (rows: string[], extra: Record<string, number> = {}) => {
    const env = new CustomMapEnv('grid/custom', { ...mapToKwargs({ ...DEFAULT_MAP, rows, maxSteps: 1000, ...extra }) });
    env.reset({ seed: 0 });
    return env;
  };

  it('counts turns: facing the goal 2 moves, facing away 2 turns + 2 moves', () => {
    expect(gridStepsToSuccess.phi(envOf(['#####', '#>.G#', '#####']).frame())).toBe(-2);
    expect(gridStepsToSuccess.phi(envOf(['#####', '#<.G#', '#####']).frame())).toBe(-4);
    // Facing down: one turn left (to east), then 2 moves.
    expect(gridStepsToSuccess.phi(envOf(['#####', '#v.G#', '#####']).frame())).toBe(-3);
  });

  // Independent reference: the studio's solver (mapSolve.ts, a forward search from the start)
  // gives the length of a shortest solution and one such action sequence. Along it, the actions
  // left fall by one per step, so Φ must rise by exactly 1 per action, key pickup and door
  // opening included, and be 0 on the goal.
  const KEY_DOOR = ['#######', '#>..#G#', '#...L.#', '#K..#.#', '#######'];
  const FOUR_DOORS_25 = [
    '#########################',
    '#>......................#',
    '#.......................#',
    '#....K..................#',
    '#.......................#',
    '#########L###############',
    '#.......................#',
    '#.....~~~~~~~...........#',
    '#.......................#',
    '###############L#########',
    '#.......................#',
    '#...........~...........#',
    '#.......................#',
    '####L####################',
    '#.......................#',
    '#.......................#',
    '#.........~~~~~~~~......#',
    '#.......................#',
    '####################L####',
    '#.......................#',
    '#.......................#',
    '#.......................#',
    '#.......................#',
    '#......................G#',
    '#########################',
  ];
  for (const [name, rows] of [
    ['key-door 7x5', KEY_DOOR],
    ['25x25, a key and 4 doors', FOUR_DOORS_25],
    ['lava crossing (examples/envs)', lavaCrossing.rows],
    ['four rooms (examples/envs)', fourRooms.rows],
  ] as const) {
    it(`${name}: Φ(start) = −(solver's shortest solution), and Φ rises by 1 per action along it`, () => {
      const verdict = solveMap(rows);
      if (!verdict.solvable) throw new Error(verdict.reason);
      const env = envOf([...rows]);
      const seen = [gridStepsToSuccess.phi(env.frame())];
      for (const a of verdict.actions) {
        env.step(a);
        seen.push(gridStepsToSuccess.phi(env.frame()));
      }
      expect(seen).toEqual(verdict.actions.map((_, t) => t - verdict.steps).concat(0));
    });
  }

  it('holding the key and opening the door raise Φ; the walking distance does not see either', () => {
    const env = envOf(KEY_DOOR);
    const verdict = solveMap(KEY_DOOR);
    if (!verdict.solvable) throw new Error(verdict.reason);
    const before = { steps: gridStepsToSuccess.phi(env.frame()), walk: gridGoalDistance.phi(env.frame()) };
    // Play up to and including the pickup, then up to and including the toggle.
    const pickup = verdict.actions.indexOf(ACTION.pickup);
    const toggle = verdict.actions.indexOf(ACTION.toggle);
    const phis: number[] = [];
    const walks: number[] = [];
    verdict.actions.slice(0, toggle + 1).forEach((a, t) => {
      const f0 = env.frame();
      env.step(a);
      const f1 = env.frame();
      if (t === pickup || t === toggle) {
        phis.push(gridStepsToSuccess.phi(f1) - gridStepsToSuccess.phi(f0));
        walks.push(gridGoalDistance.phi(f1) - gridGoalDistance.phi(f0));
      }
    });
    expect(phis).toEqual([1, 1]);
    expect(walks).toEqual([0, 0]);
    // At the locked door without the key, walking distance says 2 steps to go; the real count is far more.
    expect(before.steps).toBe(-verdict.steps);
    expect(before.walk).toBeGreaterThan(before.steps);
  });

  it('the floor is below every Φ the episode can reach; lava and a walled-in agent get the unreachable value', () => {
    const env = envOf(lavaCrossing.rows);
    const floor = gridStepsToSuccess.floor(env.frame());
    // Every pose reachable on the map (by the grid's own transitions) has Φ > floor.
    const rows = lavaCrossing.rows;
    for (let y = 0; y < rows.length; y++) {
      for (let x = 0; x < rows[0].length; x++) {
        if (rows[y][x] === '#' || rows[y][x] === '~' || rows[y][x] === 'G') continue;
        for (let dir = 0; dir < 4; dir++) {
          const f = env.frame();
          const phi = gridStepsToSuccess.phi({ ...f, agent: { ...f.agent, x, y, dir } });
          expect(phi).toBeGreaterThan(floor);
          expect(phi).toBeLessThan(0);
        }
      }
    }
    const f = env.frame();
    expect(gridStepsToSuccess.phi({ ...f, agent: { ...f.agent, x: 4, y: 1 } })).toBeLessThan(0); // on lava
    expect(gridStepsToSuccess.phi(frame(['WWWWW', 'WAWGW', 'WWWWW']))).toBeLessThan(0);
  });
});

describe("gridStepsToSuccess against the grid world's own expert (a forward search over full states, world.ts)", () => {
  // The built-in one-agent envs whose task is reaching a goal cell: along the expert's plan the
  // actions left fall by one per step, so Φ(s_t) = −(plan length − t), 0 on the goal.
  for (const id of ['grid/empty-8x8', 'grid/four-rooms', 'grid/door-key-6x6', 'grid/lava-crossing-9x9']) {
    it(`${id}: Φ = −(expert's actions left) at every step of its plan, seeds 0–4`, () => {
      for (let seed = 0; seed < 5; seed++) {
        const env = makeEnv(id) as GridEnv;
        env.reset({ seed });
        const phis: number[] = [gridStepsToSuccess.phi(env.frame())];
        let done = false;
        for (let t = 0; !done; t++) {
          const a = env.expertAction();
          if (a === null) throw new Error(`${id} seed ${seed}: the expert has no plan at step ${t}`);
          const r = env.step(a);
          phis.push(gridStepsToSuccess.phi(env.frame()));
          done = r.terminated || r.truncated;
          if (done) expect(r.info.success, `${id} seed ${seed}`).toBe(true);
        }
        const T = phis.length - 1;
        expect(phis, `${id} seed ${seed}`).toEqual(phis.map((_, t) => t - T));
      }
    });
  }
});
