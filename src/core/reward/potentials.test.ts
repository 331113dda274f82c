import { describe, expect, it } from 'vitest';
import type { GridFrame } from '../envs/types.ts';
import { OBJ } from '../envs/grid/objects.ts';
import { gridGoalDistance } from './potentials.ts';

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
