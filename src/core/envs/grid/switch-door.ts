/**
 * # Switch and door (two agents, cooperative)
 *
 * ## Description
 * Two agents share one reward. Agent A (red) is in the left room with a switch plate (`_`,
 * yellow floor); it cannot leave that room. Agent B (blue) is in the right room, whose only
 * exit is a door in its bottom wall; behind the door, in a corridor, is the green goal. The
 * door is open only while A stands on the switch (and while B stands in the doorway), so A
 * must walk to the switch and stay there while B walks through. A fence of boxes separates
 * the rooms: it blocks walking but not sight, so each agent can see the other. The agents
 * take turns: env step t is taken by agent t mod 2 (A first), so every env step is still
 * one action of one agent and a one-agent trainer can play it. Starts, the switch, the door
 * and the goal change with the seed.
 *
 * Layout (seed-dependent positions; `|` is the box fence, `D` the door):
 *
 *     ########
 *     #A.|...#
 *     #_.|.B.#
 *     #..|...#
 *     #####D##
 *     ####..G#
 *     ########
 *
 * ## Observation
 * `GridObs` of the acting agent: its egocentric `viewSize × viewSize × 3` image, its heading,
 * and the view as text. The acting agent's own cell is an `agent` object in its colour
 * (red = A, blue = B), so a shared policy can tell whose turn it is; the other agent, when in
 * view, is an `agent` object in its colour (`A` in the text, its colour in the `colors:` line).
 *
 * ## Actions
 * Discrete(7): left, right, forward, pickup, drop, toggle, done, applied to the acting agent.
 * pickup, drop and toggle do nothing here (the door answers only to the switch); done waits.
 * An agent cannot walk into the other agent.
 *
 * ## Reward
 * Shared: `1 - 0.9 * steps / maxSteps` on the step B enters the goal (steps counts both
 * agents' steps), 0 otherwise. `info.agent` (0 = A, 1 = B) names who acted; `info.subgoal`
 * is true on the step A first stands on the switch and on the step B first passes the door
 * (`info.progress` is 1 then too); `info.onSwitch` and `info.doorOpen` are the state after it.
 *
 * ## Termination
 * Terminated when B reaches the goal (success). Truncated at `maxSteps`.
 *
 * ## Kwargs
 * `maxSteps` (default 96, both agents' steps together), `viewSize` (default 7).
 */
import { Rng } from '../../util/rng.ts';
import { CHARSET } from '../../text/codec.ts';
import { box, dict, discrete, text } from '../spaces.ts';
import type { EnvKwargs } from '../registry.ts';
import type { EnvSpec, GridEnv, GridFrame, GridObs, Info, ResetOptions, ResetResult, StepResult } from '../types.ts';
import { Grid } from './grid.ts';
import { KwargReader } from './kwargs.ts';
import { AGENT_CHARS, COLOR, DOOR, MAX_CELL_VALUE, OBJ, canOverlap } from './objects.ts';
import { DIR_NAMES, DIR_VEC, maxViewTextLength, renderCells, renderView, viewCoords, writeEgocentricView } from './view.ts';
import { ACTION, ACTION_LABELS } from './world.ts';

/** The agents' names in turn order, and their colours (the own-cell colour tells a policy who acts). */
export const SWITCH_DOOR_AGENTS = ['a', 'b'] as const;
export const SWITCH_DOOR_COLORS = [COLOR.red, COLOR.blue] as const;

const WIDTH = 8;
const HEIGHT = 7;
/** A's room spans x 1..2, the fence is x 3, B's room x 4..6; both rooms y 1..3; the goal corridor is y 5, x 4..6. */
const FENCE_X = 3;
const DOOR_Y = 4;
const GOAL_Y = 5;

export interface SwitchDoorConfig {
  viewSize: number;
  maxSteps: number;
}

export function switchDoorConfig(id: string, kwargs: EnvKwargs): SwitchDoorConfig {
  const r = new KwargReader(id, kwargs);
  return r.done<SwitchDoorConfig>({ maxSteps: r.maxSteps(96, 2), viewSize: r.viewSize() });
}

interface Pose {
  x: number;
  y: number;
  dir: number;
}

export class SwitchDoorEnv implements GridEnv {
  readonly spec: EnvSpec;
  private readonly viewSize: number;
  private readonly maxSteps: number;
  private rng = new Rng(0);
  private grid: Grid | null = null;
  private agents: Pose[] = [];
  private switchAt = { x: 0, y: 0 };
  private doorAt = { x: 0, y: 0 };
  private steps = 0;
  private ended = false;
  private reachedSwitch = false;
  private passedDoor = false;

  constructor(id: string, kwargs: EnvKwargs = {}) {
    const config = switchDoorConfig(id, kwargs);
    this.viewSize = config.viewSize;
    this.maxSteps = config.maxSteps;
    const v = config.viewSize;
    this.spec = {
      id,
      title: 'Switch and door (2 agents)',
      description:
        'Two agents share one reward. Red agent A must walk onto the switch plate in its room and stay there: only then ' +
        'is the door out of blue agent B\'s room open, and B must walk through it to the green goal. The agents take turns ' +
        '(one action each, A first) and see each other through a fence of boxes. Neither can succeed alone: a test of ' +
        'cooperation and of credit assignment between two agents.',
      family: 'grid',
      observationSpace: dict({
        image: box([v, v, 3], 0, MAX_CELL_VALUE, 'uint8'),
        direction: discrete(4, DIR_NAMES),
        text: text(maxViewTextLength(v), CHARSET),
      }),
      actionSpace: discrete(ACTION_LABELS.length, ACTION_LABELS),
      rewardRange: [0, 1],
      maxSteps: config.maxSteps,
      agents: SWITCH_DOOR_AGENTS,
      agentColors: SWITCH_DOOR_COLORS,
    };
  }

  /** Index of the agent that takes the next step (0 = A, 1 = B). */
  get acting(): number {
    return this.steps % 2;
  }

  /** Steps taken in this episode (both agents). */
  get stepCount(): number {
    return this.steps;
  }

  /** The agents' poses (copies), A first. */
  get poses(): Pose[] {
    return this.agents.map((p) => ({ ...p }));
  }

  get switchCell(): { x: number; y: number } {
    return { ...this.switchAt };
  }

  get doorCell(): { x: number; y: number } {
    return { ...this.doorAt };
  }

  reset(opts: ResetOptions = {}): ResetResult<GridObs> {
    if (opts.seed !== undefined) this.rng = new Rng(opts.seed);
    const rng = this.rng;
    const grid = new Grid(WIDTH, HEIGHT);
    for (let y = 0; y < HEIGHT; y++) grid.horizontalWall(0, y, WIDTH);
    for (let y = 1; y < DOOR_Y; y++) {
      for (let x = 1; x < WIDTH - 1; x++) grid.clear(x, y);
      grid.set(FENCE_X, y, OBJ.box, COLOR.grey);
    }
    for (let x = FENCE_X + 1; x < WIDTH - 1; x++) grid.clear(x, GOAL_Y);
    const doorX = rng.int(FENCE_X + 1, WIDTH - 1);
    grid.door(doorX, DOOR_Y, COLOR.yellow, DOOR.closed);
    const goalX = rng.int(FENCE_X + 1, WIDTH - 1);
    grid.set(goalX, GOAL_Y, OBJ.goal);
    const sw = grid.randomEmptyCell(rng, 1, 1, FENCE_X - 1, DOOR_Y - 1);
    grid.set(sw.x, sw.y, OBJ.floor, COLOR.yellow);
    const a = grid.randomEmptyCell(rng, 1, 1, FENCE_X - 1, DOOR_Y - 1);
    const b = grid.randomEmptyCell(rng, FENCE_X + 1, 1, WIDTH - 2 - FENCE_X, DOOR_Y - 1);
    this.agents = [
      { ...a, dir: rng.int(0, 4) },
      { ...b, dir: rng.int(0, 4) },
    ];
    this.grid = grid;
    this.switchAt = sw;
    this.doorAt = { x: doorX, y: DOOR_Y };
    this.steps = 0;
    this.ended = false;
    this.reachedSwitch = false;
    this.passedDoor = false;
    return { obs: this.observe(), info: {} };
  }

  step(action: number): StepResult<GridObs> {
    const grid = this.world('step');
    if (this.ended) throw new Error(`${this.spec.id}: step() after the episode ended (terminated or truncated); call reset() first`);
    if (!Number.isInteger(action) || action < 0 || action >= ACTION_LABELS.length) {
      throw new RangeError(`${this.spec.id}: action ${String(action)} is not one of 0..${ACTION_LABELS.length - 1} (${ACTION_LABELS.join(', ')})`);
    }
    const who = this.acting;
    const me = this.agents[who];
    const other = this.agents[1 - who];
    let success = false;
    if (action === ACTION.left) me.dir = (me.dir + 3) & 3;
    else if (action === ACTION.right) me.dir = (me.dir + 1) & 3;
    else if (action === ACTION.forward) {
      const fx = me.x + DIR_VEC[me.dir][0];
      const fy = me.y + DIR_VEC[me.dir][1];
      if (grid.inBounds(fx, fy) && canOverlap(grid.type(fx, fy), grid.state(fx, fy)) && !(fx === other.x && fy === other.y)) {
        me.x = fx;
        me.y = fy;
        if (grid.type(fx, fy) === OBJ.goal) success = true;
      }
    }
    this.steps++;
    const onSwitch = this.onSwitch();
    this.updateDoor();
    let subgoal = false;
    if (who === 0 && onSwitch && !this.reachedSwitch) subgoal = this.reachedSwitch = true;
    if (who === 1 && me.y > DOOR_Y && !this.passedDoor) subgoal = this.passedDoor = true;
    const terminated = success;
    const truncated = !terminated && this.steps >= this.maxSteps;
    this.ended = terminated || truncated;
    const reward = success ? 1 - (0.9 * this.steps) / this.maxSteps : 0;
    const info: Info = { agent: who, subgoal, onSwitch, doorOpen: grid.state(this.doorAt.x, this.doorAt.y) === DOOR.open };
    if (subgoal) info.progress = 1;
    if (this.ended) info.success = success;
    return { obs: this.observe(), reward, terminated, truncated, info };
  }

  renderText(): string {
    const grid = this.world('renderText');
    const cells = grid.cells.slice();
    const [a, b] = this.agents;
    // B is written into the copy as an agent object; A is drawn by its heading, like one-agent maps.
    const o = (b.y * WIDTH + b.x) * 3;
    cells[o] = OBJ.agent;
    cells[o + 1] = SWITCH_DOOR_COLORS[1];
    cells[o + 2] = 0;
    const map = renderCells(cells, HEIGHT, WIDTH, a.y, a.x, AGENT_CHARS[a.dir], { type: OBJ.unseen, color: 0 });
    return `${map}\nagent A: ${AGENT_CHARS[a.dir]} (red); agent B: A (blue); next: ${SWITCH_DOOR_AGENTS[this.acting].toUpperCase()}\nstep ${this.steps}/${this.maxSteps}`;
  }

  frame(): GridFrame {
    const grid = this.world('frame');
    const me = this.agents[this.acting];
    const size = this.viewSize;
    const image = new Uint8Array(size * size * 3);
    const vis = new Uint8Array(size * size);
    writeEgocentricView(grid, me.x, me.y, me.dir, size, OBJ.unseen, 0, image, vis);
    const { worldX, worldY } = viewCoords(me.x, me.y, me.dir, size);
    const visible: [number, number][] = [];
    for (let i = 0; i < vis.length; i++) if (vis[i] && grid.inBounds(worldX[i], worldY[i])) visible.push([worldX[i], worldY[i]]);
    return {
      kind: 'grid',
      width: WIDTH,
      height: HEIGHT,
      cells: grid.cells.slice(),
      agent: { x: me.x, y: me.y, dir: me.dir, carrying: null },
      visible,
      mission: `A holds the switch, B gets to the goal; ${this.ended ? 'episode over' : `${SWITCH_DOOR_AGENTS[this.acting].toUpperCase()} acts`}`,
      agents: this.agents.map((p, i) => ({ name: SWITCH_DOOR_AGENTS[i], x: p.x, y: p.y, dir: p.dir, color: SWITCH_DOOR_COLORS[i], acting: !this.ended && i === this.acting })),
    };
  }

  /**
   * A scripted expert for both agents: A takes a shortest path to the switch and then waits
   * there (done); B takes a shortest path to the goal through the door and waits in front of
   * it while it is closed.
   */
  expertAction(): number | null {
    if (this.grid === null || this.ended) return null;
    const who = this.acting;
    const me = this.agents[who];
    if (who === 0) {
      if (this.onSwitch()) return ACTION.done;
      return this.firstMove(me, (x, y) => x === this.switchAt.x && y === this.switchAt.y, false) ?? ACTION.done;
    }
    const grid = this.grid;
    const move = this.firstMove(me, (x, y) => grid.type(x, y) === OBJ.goal, true);
    if (move === ACTION.forward) {
      const fx = me.x + DIR_VEC[me.dir][0];
      const fy = me.y + DIR_VEC[me.dir][1];
      if (grid.type(fx, fy) === OBJ.door && grid.state(fx, fy) !== DOOR.open) return ACTION.done;
    }
    return move ?? ACTION.done;
  }

  // ---------------------------------------------------------------------------------------

  private world(caller: string): Grid {
    if (this.grid === null) throw new Error(`${this.spec.id}: ${caller}() before reset(); call reset() first`);
    return this.grid;
  }

  private onSwitch(): boolean {
    const a = this.agents[0];
    return a.x === this.switchAt.x && a.y === this.switchAt.y;
  }

  /** The door is open while A is on the switch or B stands in the doorway (it cannot close on B). */
  private updateDoor(): void {
    const b = this.agents[1];
    const inDoorway = b.x === this.doorAt.x && b.y === this.doorAt.y;
    const o = this.grid!.offset(this.doorAt.x, this.doorAt.y);
    this.grid!.cells[o + 2] = this.onSwitch() || inDoorway ? DOOR.open : DOOR.closed;
  }

  /** First action of a shortest turn/forward path from `from` to a cell where `goal` holds (doors passable when `throughDoor`). */
  private firstMove(from: Pose, goal: (x: number, y: number) => boolean, throughDoor: boolean): number | null {
    const grid = this.grid!;
    const key = (x: number, y: number, d: number) => (y * WIDTH + x) * 4 + d;
    const first = new Int8Array(WIDTH * HEIGHT * 4).fill(-1);
    const seen = new Uint8Array(WIDTH * HEIGHT * 4);
    const queue: number[] = [key(from.x, from.y, from.dir)];
    seen[queue[0]] = 1;
    for (let h = 0; h < queue.length; h++) {
      const k = queue[h];
      const d = k & 3;
      const cell = k >> 2;
      const x = cell % WIDTH;
      const y = (cell - x) / WIDTH;
      const nexts: [number, number][] = [
        [ACTION.left, key(x, y, (d + 3) & 3)],
        [ACTION.right, key(x, y, (d + 1) & 3)],
      ];
      const fx = x + DIR_VEC[d][0];
      const fy = y + DIR_VEC[d][1];
      if (grid.inBounds(fx, fy)) {
        const t = grid.type(fx, fy);
        if (canOverlap(t, grid.state(fx, fy)) || (throughDoor && t === OBJ.door)) {
          if (goal(fx, fy)) return h === 0 ? ACTION.forward : first[k];
          nexts.push([ACTION.forward, key(fx, fy, d)]);
        }
      }
      for (const [action, n] of nexts) {
        if (seen[n]) continue;
        seen[n] = 1;
        first[n] = h === 0 ? action : first[k];
        queue.push(n);
      }
    }
    return null;
  }

  private observe(): GridObs {
    return this.viewFrom(this.agents[this.acting], this.acting);
  }

  /**
   * The observation the acting agent would receive standing on (x, y) facing `dir`, the other
   * agent and the map (door state included) as they are now: value and policy maps over
   * hypothetical poses (the training view's overlay). Read only.
   */
  observeAt(x: number, y: number, dir: number): GridObs {
    const grid = this.world('observeAt');
    if (!grid.inBounds(x, y)) throw new RangeError(`${this.spec.id}: observeAt(${x}, ${y}) is outside the ${WIDTH}×${HEIGHT} map`);
    if (!(Number.isInteger(dir) && dir >= 0 && dir < 4)) throw new RangeError(`${this.spec.id}: observeAt direction ${String(dir)} is not one of 0..3 (${DIR_NAMES.join(', ')})`);
    return this.viewFrom({ x, y, dir }, this.acting);
  }

  /** A copy of the current map (agents are not in it). */
  currentGrid(): Grid {
    return this.world('currentGrid').clone();
  }

  private viewFrom(me: Pose, who: number): GridObs {
    const grid = this.world('observe');
    const other = this.agents[1 - who];
    const size = this.viewSize;
    const image = new Uint8Array(size * size * 3);
    const vis = new Uint8Array(size * size);
    writeEgocentricView(grid, me.x, me.y, me.dir, size, OBJ.unseen, 0, image, vis);
    const half = (size - 1) >> 1;
    const own = ((size - 1) * size + half) * 3;
    image[own] = OBJ.agent;
    image[own + 1] = SWITCH_DOOR_COLORS[who];
    image[own + 2] = 0;
    // The other agent's cell in this view: `ahead` cells forward, `right` cells to the right.
    const dx = other.x - me.x;
    const dy = other.y - me.y;
    const ahead = dx * DIR_VEC[me.dir][0] + dy * DIR_VEC[me.dir][1];
    const right = dx * DIR_VEC[(me.dir + 1) & 3][0] + dy * DIR_VEC[(me.dir + 1) & 3][1];
    const row = size - 1 - ahead;
    const col = half + right;
    if ((dx !== 0 || dy !== 0) && row >= 0 && row < size && col >= 0 && col < size && vis[row * size + col]) {
      const i = (row * size + col) * 3;
      image[i] = OBJ.agent;
      image[i + 1] = SWITCH_DOOR_COLORS[1 - who];
      image[i + 2] = 0;
    }
    return { image, direction: me.dir, text: renderView(image, size, { type: OBJ.unseen, color: 0 }) };
  }
}
