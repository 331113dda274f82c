/**
 * The grid rules, worked by hand on small drawn maps (ascii.ts). Each expected value below
 * was derived on paper from the rules in world.ts, not read back from the code.
 */
import { describe, expect, it } from 'vitest';
import { CHARSET } from '../../text/codec.ts';
import { AsciiGridEnv } from './ascii.ts';
import { DOOR, OBJ } from './objects.ts';
import { ACTION } from './world.ts';

const { left, right, forward, pickup, drop, toggle, done } = ACTION;

/** The (type, colour, state) of the view cell at (row, col) of a 7×7 image. */
const at = (image: Uint8Array, row: number, col: number): number[] => [...image.slice((row * 7 + col) * 3, (row * 7 + col) * 3 + 3)];

describe('motion', () => {
  it('turns in place and moves forward one cell', () => {
    const env = new AsciiGridEnv(['######', '#>...#', '#....#', '######']);
    expect(env.reset().obs.direction).toBe(0); // east
    expect(env.step(left).obs.direction).toBe(3); // north
    expect(env.step(right).obs.direction).toBe(0);
    expect(env.step(right).obs.direction).toBe(1); // south
    env.step(left); // east again
    env.step(forward);
    expect(env.agentState).toMatchObject({ x: 2, y: 1, dir: 0 });
    env.step(right);
    env.step(forward);
    expect(env.agentState).toMatchObject({ x: 2, y: 2, dir: 1 });
  });

  it('walls block movement', () => {
    const env = new AsciiGridEnv(['####', '#>##', '####']);
    env.reset();
    const r = env.step(forward);
    expect(env.agentState).toMatchObject({ x: 1, y: 1 });
    expect(r).toMatchObject({ reward: 0, terminated: false, truncated: false });
  });

  it('done is a no-op that still costs a step', () => {
    const env = new AsciiGridEnv(['####', '#>.#', '####']);
    env.reset();
    env.step(done);
    expect(env.agentState).toMatchObject({ x: 1, y: 1, dir: 0 });
    expect(env.stepCount).toBe(1);
  });
});

describe('objects and doors', () => {
  const corridor = ['#######', '#>KL.G#', '#######'];
  const doorAt = (env: AsciiGridEnv): number => env.currentGrid().state(3, 1);

  it('a locked door stays locked without a key, and with a key of another colour', () => {
    const noKey = new AsciiGridEnv(['#####', '#>L.#', '#####']);
    noKey.reset();
    noKey.step(toggle);
    expect(noKey.currentGrid().state(2, 1)).toBe(DOOR.locked);

    const env = new AsciiGridEnv(corridor, { colors: { '2,1': 'red' } });
    env.reset();
    env.step(pickup);
    expect(env.agentState.carrying).toEqual({ type: OBJ.key, color: 0 });
    env.step(forward);
    env.step(toggle);
    expect(doorAt(env)).toBe(DOOR.locked);
    env.step(forward);
    expect(env.agentState).toMatchObject({ x: 2, y: 1 }); // still blocked
  });

  it('the matching key unlocks and opens the door, and is kept', () => {
    const env = new AsciiGridEnv(corridor, { maxSteps: 10 });
    env.reset();
    env.step(pickup);
    expect(env.currentGrid().type(2, 1)).toBe(OBJ.empty); // the key left the floor
    env.step(forward);
    env.step(toggle);
    expect(doorAt(env)).toBe(DOOR.open);
    expect(env.agentState.carrying).toEqual({ type: OBJ.key, color: 4 }); // yellow
    env.step(forward); // onto the open door
    expect(env.agentState).toMatchObject({ x: 3, y: 1 });
    env.step(forward);
    const r = env.step(forward);
    expect(r).toMatchObject({ terminated: true, truncated: false, info: { success: true } });
    expect(r.reward).toBeCloseTo(1 - (0.9 * 6) / 10, 12);
  });

  it('toggle opens a closed door and closes an open one; closed doors block', () => {
    const env = new AsciiGridEnv(['#####', '#>D.#', '#####']);
    env.reset();
    env.step(forward);
    expect(env.agentState.x).toBe(1);
    env.step(toggle);
    expect(env.currentGrid().state(2, 1)).toBe(DOOR.open);
    env.step(toggle);
    expect(env.currentGrid().state(2, 1)).toBe(DOOR.closed);
    env.step(toggle);
    env.step(forward);
    expect(env.agentState.x).toBe(2);
  });

  it('pickup needs empty hands; drop needs an empty cell', () => {
    const env = new AsciiGridEnv(['######', '#>KB.#', '######']);
    env.reset();
    env.step(pickup); // key
    env.step(forward);
    env.step(pickup); // hands full: the ball stays
    expect(env.currentGrid().type(3, 1)).toBe(OBJ.ball);
    env.step(drop); // the ball's cell is not empty
    expect(env.agentState.carrying?.type).toBe(OBJ.key);
    env.step(left);
    env.step(drop); // onto the wall: nothing
    expect(env.agentState.carrying?.type).toBe(OBJ.key);
    env.step(left);
    env.step(drop); // back onto the empty cell behind
    expect(env.agentState.carrying).toBeNull();
    expect(env.currentGrid().type(1, 1)).toBe(OBJ.key);
  });
});

describe('rewards and episode ends', () => {
  it('lava terminates with reward 0 and success false', () => {
    const env = new AsciiGridEnv(['#####', '#>~G#', '#####']);
    env.reset();
    expect(env.step(forward)).toMatchObject({ reward: 0, terminated: true, truncated: false, info: { success: false } });
  });

  it('the goal pays 1 - 0.9 * steps / maxSteps', () => {
    const env = new AsciiGridEnv(['#####', '#>.G#', '#####'], { maxSteps: 10 });
    env.reset();
    expect(env.step(forward)).toMatchObject({ reward: 0, terminated: false });
    const r = env.step(forward);
    expect(r).toMatchObject({ terminated: true, truncated: false, info: { success: true } });
    expect(r.reward).toBeCloseTo(0.82, 12);
  });

  it('truncates exactly at maxSteps, then refuses to step', () => {
    const env = new AsciiGridEnv(['####', '#>.#', '####'], { maxSteps: 3 });
    env.reset();
    expect(env.step(done)).toMatchObject({ terminated: false, truncated: false });
    expect(env.step(done)).toMatchObject({ terminated: false, truncated: false });
    expect(env.step(done)).toMatchObject({ reward: 0, terminated: false, truncated: true, info: { success: false } });
    expect(() => env.step(done)).toThrow(/after the episode ended/);
    expect(env.expertAction()).toBeNull();
  });

  it('success on the last allowed step is terminated, not truncated', () => {
    const env = new AsciiGridEnv(['#####', '#>.G#', '#####'], { maxSteps: 2 });
    env.reset();
    env.step(forward);
    const r = env.step(forward);
    expect(r).toMatchObject({ terminated: true, truncated: false });
    expect(r.reward).toBeCloseTo(0.1, 12);
  });

  it('rejects bad actions and use before reset with clear errors', () => {
    const env = new AsciiGridEnv(['####', '#>.#', '####']);
    expect(() => env.step(forward)).toThrow(/before reset/);
    env.reset();
    expect(() => env.step(7)).toThrow(/not one of 0\.\.6/);
    expect(() => env.step(1.5)).toThrow(RangeError);
  });
});

describe('egocentric view', () => {
  // Agent at the centre of an open 9x9 room: the ball is 2 cells east, the key 1 cell north.
  const room = ['#########', '#.......#', '#.......#', '#...K...#', '#...>.B.#', '#.......#', '#.......#', '#.......#', '#########'];
  const ball = [OBJ.ball, 2, 0];
  const key = [OBJ.key, 4, 0];

  it('rotates with the heading: the agent always looks up the image', () => {
    const env = new AsciiGridEnv(room);
    // Facing east: the ball is 2 ahead; north is on the left.
    const east = env.reset().obs.image;
    expect(at(east, 4, 3)).toEqual(ball);
    expect(at(east, 6, 2)).toEqual(key);
    // Facing south: east is on the left; north is behind (out of view).
    const south = env.step(right).obs.image;
    expect(at(south, 6, 1)).toEqual(ball);
    expect(south.some((_, i) => i % 3 === 0 && south[i] === OBJ.key)).toBe(false);
    // Facing west: the key (north) is on the right, the ball behind.
    const west = env.step(right).obs.image;
    expect(at(west, 6, 4)).toEqual(key);
    expect(west.some((_, i) => i % 3 === 0 && west[i] === OBJ.ball)).toBe(false);
    // Facing north: the key is 1 ahead, the ball 2 to the right.
    const north = env.step(right).obs.image;
    expect(at(north, 5, 3)).toEqual(key);
    expect(at(north, 6, 5)).toEqual(ball);
  });

  it('shows the carried object in the agent cell', () => {
    const env = new AsciiGridEnv(['#####', '#>K.#', '#####']);
    expect(at(env.reset().obs.image, 6, 3)).toEqual([OBJ.empty, 0, 0]);
    const r = env.step(pickup);
    expect(at(r.obs.image, 6, 3)).toEqual(key);
    expect(r.obs.text.endsWith('\ncarry: Ky')).toBe(true);
  });

  // A wall row with a closed door between the agent and the goal.
  const behindDoor = ['#########', '#...G...#', '####D####', '#...^...#', '#########'];

  it('walls and closed doors hide what is behind them; opening the door reveals it', () => {
    const env = new AsciiGridEnv(behindDoor);
    const closed = env.reset().obs;
    expect(at(closed.image, 5, 3)).toEqual([OBJ.door, 4, DOOR.closed]); // the door itself is seen
    expect(at(closed.image, 5, 0)).toEqual([OBJ.wall, 5, 0]);
    expect(at(closed.image, 4, 3)).toEqual([OBJ.unseen, 0, 0]); // the goal behind it is not
    for (let row = 0; row <= 4; row++) for (let col = 0; col < 7; col++) expect(at(closed.image, row, col)).toEqual([0, 0, 0]);
    const open = env.step(toggle).obs;
    expect(at(open.image, 4, 3)).toEqual([OBJ.goal, 1, 0]);
  });

  it('renders the view as text, one character per cell', () => {
    const env = new AsciiGridEnv(behindDoor);
    const blank = '       \n'.repeat(5);
    expect(env.reset().obs.text).toBe(`${blank}###D###\n...^...\ncolors: Dy`);
    expect(env.step(toggle).obs.text).toBe(`${'       \n'.repeat(3)}#######\n...G...\n###d###\n...^...\ncolors: dy`);
  });

  it('reports the visible cells in absolute coordinates for the UI', () => {
    const env = new AsciiGridEnv(behindDoor);
    env.reset();
    const visible = env.frame().visible.map(([x, y]) => `${x},${y}`);
    expect(visible).toContain('4,3'); // the agent's own cell
    expect(visible).toContain('4,2'); // the door
    expect(visible).not.toContain('4,1'); // the goal behind it
    expect(visible).toHaveLength(14); // rows y=3 and y=2, x=1..7
  });

  it('keeps text inside the shared vocabulary, objects of every kind included', () => {
    const env = new AsciiGridEnv(['#########', '#.K.B.X.#', '#.L.D.d.#', '#~..>..G#', '#########'], { colors: { '2,1': 'grey', '4,1': 'purple' } });
    const { text } = env.reset().obs;
    for (const ch of text) expect(CHARSET).toContain(ch);
    for (const ch of env.renderText()) expect(CHARSET).toContain(ch);
    expect(text).toContain('colors:');
  });

  it('never mutates an observation it returned', () => {
    const env = new AsciiGridEnv(['#####', '#>K.#', '#####']);
    const first = env.reset().obs;
    const copy = first.image.slice();
    env.step(pickup);
    env.step(left);
    expect(first.image).toEqual(copy);
  });
});

describe('expert', () => {
  it('finds the hand-counted shortest plan through a locked door', () => {
    const env = new AsciiGridEnv(['#######', '#>KL.G#', '#######']);
    env.reset();
    const plan: number[] = [];
    for (let a = env.expertAction(); a !== null; a = env.expertAction()) {
      plan.push(a);
      env.step(a);
    }
    expect(plan).toEqual([pickup, forward, toggle, forward, forward, forward]);
  });

  it('walks around lava on a 9-step shortest path', () => {
    const env = new AsciiGridEnv(['#######', '#>.~.G#', '#.....#', '#######']);
    env.reset();
    let last = null;
    let steps = 0;
    for (let a = env.expertAction(); a !== null; a = env.expertAction()) {
      last = env.step(a);
      steps++;
    }
    expect(last?.info.success).toBe(true);
    expect(steps).toBe(9);
  });

  it('replans after the agent leaves the plan', () => {
    const env = new AsciiGridEnv(['#######', '#>KL.G#', '#######']);
    env.reset();
    expect(env.expertAction()).toBe(pickup);
    env.step(left); // off plan
    expect(env.expertAction()).toBe(right);
  });

  it('returns null when there is no solution', () => {
    const env = new AsciiGridEnv(['#####', '#>#G#', '#####']);
    env.reset();
    expect(env.expertAction()).toBeNull();
  });
});

describe('observeAt (hypothetical poses)', () => {
  const map = ['######', '#>...#', '#.K..#', '######'];

  it('equals the observation the agent gets after actually walking to that pose', () => {
    const walker = new AsciiGridEnv(map);
    walker.reset();
    walker.step(forward);
    walker.step(forward);
    const walked = walker.step(right).obs; // at (3, 1) facing south
    const probe = new AsciiGridEnv(map);
    const start = probe.reset().obs;
    expect(probe.observeAt(3, 1, 1)).toEqual(walked);
    // At the agent's own pose it is the last observation.
    expect(probe.observeAt(1, 1, 0)).toEqual(start);
  });

  it('reflects what the agent carries and changes nothing in the episode', () => {
    const env = new AsciiGridEnv(map);
    env.reset();
    env.step(forward); // (2, 1) facing east
    env.step(right); // facing south: the key at (2, 2) is in front
    const holding = env.step(pickup).obs;
    // Standing elsewhere: the carried key shows in the agent's own cell (bottom centre of the view).
    const there = env.observeAt(4, 2, 3);
    expect(at(there.image, 6, 3)).toEqual(at(holding.image, 6, 3));
    expect(at(holding.image, 6, 3)[0]).toBe(OBJ.key);
    expect(env.agentState).toMatchObject({ x: 2, y: 1, dir: 1 });
    expect(env.stepCount).toBe(3);
    // The next step is as if observeAt had never been called.
    const twin = new AsciiGridEnv(map);
    twin.reset();
    for (const a of [forward, right, pickup]) twin.step(a);
    expect(env.step(left)).toEqual(twin.step(left));
  });

  it('rejects poses off the map and bad directions', () => {
    const env = new AsciiGridEnv(map);
    expect(() => env.observeAt(1, 1, 0)).toThrow(/before reset/);
    env.reset();
    expect(() => env.observeAt(9, 1, 0)).toThrow(/outside the 6×4 map/);
    expect(() => env.observeAt(1, 1, 4)).toThrow(/direction 4/);
  });
});
