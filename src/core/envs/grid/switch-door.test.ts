/**
 * grid/switch-door by hand: turn order, the door that is open only while A stands on the
 * switch, the shared reward's value, and both agents in observations and frames.
 */
import { describe, expect, it } from 'vitest';
import { runExpert } from '../checkEnv.ts';
import type { GridFrame, GridObs } from '../types.ts';
import { COLOR, DOOR, OBJ } from './objects.ts';
import { SwitchDoorEnv } from './switch-door.ts';
import { ACTION } from './world.ts';

const { left, right, forward, done } = ACTION;

/** Steps the actions in order (they alternate between A and B). */
function play(env: SwitchDoorEnv, actions: readonly number[]) {
  return actions.map((a) => env.step(a));
}

describe('grid/switch-door', () => {
  it('alternates turns, A first, and says who acted', () => {
    const env = new SwitchDoorEnv('grid/switch-door');
    env.reset({ seed: 3 });
    expect(env.acting).toBe(0);
    const rs = play(env, [done, done, done]);
    expect(rs.map((r) => r.info.agent)).toEqual([0, 1, 0]);
    expect(env.acting).toBe(1);
    expect(env.spec.agents).toEqual(['a', 'b']);
  });

  it('opens the door only while A stands on the switch, and pays 1 - 0.9 t/T when B reaches the goal', () => {
    const env = new SwitchDoorEnv('grid/switch-door');
    // Both agents follow the expert; after every step the door is open exactly when A is on the plate or B in the doorway.
    env.reset({ seed: 11 });
    let sawClosedWithAOff = false;
    let sawOpen = false;
    for (let t = 0; t < env.spec.maxSteps; t++) {
      const r = env.step(env.expertAction()!);
      const [a, b] = env.poses;
      const sw = env.switchCell;
      const d = env.doorCell;
      const onSwitch = a.x === sw.x && a.y === sw.y;
      const inDoorway = b.x === d.x && b.y === d.y;
      const f = env.frame();
      const state = f.cells[(d.y * f.width + d.x) * 3 + 2];
      expect(state === DOOR.open).toBe(onSwitch || inDoorway);
      expect(r.info.onSwitch).toBe(onSwitch);
      if (!onSwitch) sawClosedWithAOff = true;
      if (onSwitch) sawOpen = true;
      if (r.terminated) {
        expect(r.info.success).toBe(true);
        expect(r.info.agent).toBe(1);
        expect(r.reward).toBeCloseTo(1 - (0.9 * (t + 1)) / env.spec.maxSteps, 12);
        break;
      }
      expect(r.reward).toBe(0);
    }
    expect(sawClosedWithAOff && sawOpen).toBe(true);
  });

  it('a hand-played episode: B waits at the closed door, A steps onto the switch, B walks through', () => {
    const env = new SwitchDoorEnv('grid/switch-door');
    // Search a seed whose layout makes a short script: A one step from the switch, facing it;
    // B directly above the door, facing south, with the goal right below the door.
    let seed = -1;
    for (let s = 0; s < 30_000 && seed < 0; s++) {
      env.reset({ seed: s });
      const [a, b] = env.poses;
      const sw = env.switchCell;
      const d = env.doorCell;
      const ahead = [[1, 0], [0, 1], [-1, 0], [0, -1]][a.dir];
      const aFacesSwitch = a.x + ahead[0] === sw.x && a.y + ahead[1] === sw.y;
      const bAboveDoor = b.x === d.x && b.y === d.y - 1 && b.dir === 1;
      const f = env.frame();
      const goalBelow = f.cells[((d.y + 1) * f.width + d.x) * 3] === OBJ.goal;
      if (aFacesSwitch && bAboveDoor && goalBelow) seed = s;
    }
    expect(seed).toBeGreaterThanOrEqual(0);
    env.reset({ seed });
    const d = env.doorCell;
    // t=1 A waits; t=2 B bumps into the closed door and stays put.
    let [r1, r2] = play(env, [done, forward]);
    expect(r1.info).toMatchObject({ agent: 0, onSwitch: false, doorOpen: false, subgoal: false });
    expect(r2.info).toMatchObject({ agent: 1, doorOpen: false });
    expect(env.poses[1]).toMatchObject({ x: d.x, y: d.y - 1 });
    // t=3 A steps onto the switch: the door opens (subgoal of A); t=4 B enters the doorway.
    [r1, r2] = play(env, [forward, forward]);
    expect(r1.info).toMatchObject({ agent: 0, onSwitch: true, doorOpen: true, subgoal: true, progress: 1 });
    expect(r2.info).toMatchObject({ agent: 1, doorOpen: true, subgoal: false });
    expect(env.poses[1]).toMatchObject({ x: d.x, y: d.y });
    // t=5 A turns (still on the plate); t=6 B walks from the doorway onto the goal: success,
    // shared reward 1 - 0.9 * 6 / 96 = 0.94375, and B's subgoal (past the door) on the same step.
    [r1, r2] = play(env, [left, forward]);
    expect(r1.info).toMatchObject({ agent: 0, onSwitch: true, subgoal: false });
    expect(r2).toMatchObject({ terminated: true, truncated: false, info: { agent: 1, success: true, subgoal: true } });
    expect(r2.reward).toBeCloseTo(0.94375, 12);
    expect(() => env.step(done)).toThrow(/after the episode ended/);
    expect(env.frame().agents?.some((g) => g.acting)).toBe(false); // nobody acts after the end
  });

  it('closes the door behind A when it steps off the switch (B not in the doorway)', () => {
    const env = new SwitchDoorEnv('grid/switch-door');
    env.reset({ seed: 0 });
    for (let t = 0; t < 60 && !env.step(env.expertAction()!).info.onSwitch; t++);
    expect(env.frame().cells[(env.doorCell.y * 8 + env.doorCell.x) * 3 + 2]).toBe(DOOR.open);
    // Step A off the plate: turn until a walkable cell is ahead, then forward (B waits).
    const a = () => env.poses[0];
    if (env.acting === 1) env.step(done);
    let moved = false;
    for (let k = 0; k < 4 && !moved; k++) {
      const before = a();
      const r = env.step(forward);
      if (a().x !== before.x || a().y !== before.y) {
        moved = true;
        expect(r.info).toMatchObject({ onSwitch: false, doorOpen: false });
      } else {
        env.step(done);
        env.step(right);
        env.step(done);
      }
    }
    expect(moved).toBe(true);
  });

  it('shows the acting agent in its own colour and the other agent when in view', () => {
    const env = new SwitchDoorEnv('grid/switch-door');
    const own = ((7 - 1) * 7 + 3) * 3;
    // A seed where A and B face each other across the fence on one row (both see the other).
    let found = false;
    for (let s = 0; s < 5000 && !found; s++) {
      const first = env.reset({ seed: s }).obs;
      const [a, b] = env.poses;
      if (!(a.y === b.y && a.dir === 0 && b.dir === 2)) continue;
      found = true;
      const seesOther = (obs: GridObs, color: number) => {
        const cells: number[] = [];
        for (let i = 0; i < 49; i++) if (i * 3 !== own && obs.image[i * 3] === OBJ.agent && obs.image[i * 3 + 1] === color) cells.push(i);
        return cells;
      };
      expect([first.image[own], first.image[own + 1]]).toEqual([OBJ.agent, COLOR.red]);
      expect(seesOther(first, COLOR.blue)).toHaveLength(1);
      // Straight ahead of A, (b.x - a.x) cells up the centre column.
      expect(seesOther(first, COLOR.blue)[0]).toBe((6 - (b.x - a.x)) * 7 + 3);
      expect(first.text).toContain('A');
      expect(first.text).toMatch(/colors: .*Ab/);
      const second = env.step(done).obs; // now B's turn
      expect([second.image[own], second.image[own + 1]]).toEqual([OBJ.agent, COLOR.blue]);
      expect(seesOther(second, COLOR.red)).toHaveLength(1);
      const f = env.frame() as GridFrame;
      expect(f.agents?.map((g) => [g.name, g.x, g.y, g.color, g.acting])).toEqual([
        ['a', a.x, a.y, COLOR.red, false],
        ['b', b.x, b.y, COLOR.blue, true],
      ]);
      expect(f.agent).toMatchObject({ x: b.x, y: b.y });
    }
    expect(found).toBe(true);
  });

  it('A can never reach the goal or the door; agents cannot walk into each other', () => {
    const env = new SwitchDoorEnv('grid/switch-door');
    for (let seed = 0; seed < 30; seed++) {
      env.reset({ seed });
      for (let t = 0; t < 60; t++) {
        const r = env.step([left, right, forward, forward, forward][(seed * 7 + t * 3) % 5]);
        const [a, b] = env.poses;
        expect(a.x).toBeLessThan(3);
        expect(a.x === b.x && a.y === b.y).toBe(false);
        if (r.terminated || r.truncated) break;
      }
    }
  });

  it('the expert solves 200 seeds in both agents\' shortest paths plus waiting', () => {
    const env = new SwitchDoorEnv('grid/switch-door');
    const lengths: number[] = [];
    for (let seed = 0; seed < 200; seed++) {
      const r = runExpert(env, seed);
      expect(r.success).toBe(true);
      lengths.push(r.steps);
    }
    expect(Math.max(...lengths)).toBeLessThan(40);
  });

  it('observeAt at the acting agent\'s own pose is its observation; elsewhere the own cell still says who acts', () => {
    const env = new SwitchDoorEnv('grid/switch-door');
    const obs = env.reset({ seed: 4 }).obs;
    const [a, b] = env.poses;
    expect(env.observeAt(a.x, a.y, a.dir)).toEqual(obs);
    const own = ((7 - 1) * 7 + 3) * 3;
    // Standing where B is (a hypothetical pose), A's own cell is still A's colour.
    const there = env.observeAt(b.x, b.y, 0);
    expect([there.image[own], there.image[own + 1]]).toEqual([OBJ.agent, COLOR.red]);
    expect(() => env.observeAt(-1, 0, 0)).toThrow(/outside/);
  });
});
