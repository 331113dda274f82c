/**
 * The grid-world engine shared by every grid env: the rules of motion and interaction
 * (MiniGrid semantics), the observation, the reward, the time limit, and the expert.
 *
 * A concrete env only says how to lay out the world for a seed (`generate`) and, if it has
 * unusual endings, which cells end the episode (`outcomeAt`).
 *
 * Rules, per action:
 *   0 left / 1 right   turn 90° in place.
 *   2 forward          move one cell if it can be stood on (empty, floor, goal, lava, open door).
 *                      Entering a goal ends the episode with success; entering lava ends it
 *                      with failure.
 *   3 pickup           take the key/ball/box in front, if the hands are empty.
 *   4 drop             put the carried object on the empty cell in front.
 *   5 toggle           open/close the door in front; a locked door opens only while the agent
 *                      carries a key of the door's colour (the key is kept). Boxes hold nothing
 *                      here, so toggling one does nothing.
 *   6 done             nothing happens (it still costs a step).
 *
 * Reward: `1 - 0.9 * steps / maxSteps` on the step that succeeds (steps counts that step),
 * 0 on every other step (an env may change the ending step's reward: `rewardFor`). Ending: success or failure -> `terminated`; reaching `maxSteps`
 * otherwise -> `truncated` (never both).
 */
import { Rng } from '../../util/rng.ts';
import { CHARSET } from '../../text/codec.ts';
import { box, dict, discrete, text } from '../spaces.ts';
import type { EnvSpec, GridEnv, GridFrame, GridObs, Info, ResetOptions, ResetResult, StepResult } from '../types.ts';
import { Grid } from './grid.ts';
import { AGENT_CHARS, DOOR, MAX_CELL_VALUE, OBJ, canOverlap, canPickUp } from './objects.ts';
import { DIR_NAMES, DIR_VEC, egocentricView, maxViewTextLength, renderCells, viewCoords, writeEgocentricView, type Carry } from './view.ts';
import { lazyGridObs } from './lazyObs.ts';

/** The info of a step that reports nothing: shared and frozen (infos are read, never written), one object less per step. */
const NO_INFO: Info = Object.freeze({});

/**
 * Observation images are views into chunks of this many images (one chunk per env, a fresh one
 * when it is full): a typed array that owns a buffer of its own costs ~0.3 µs to create and
 * later free (malloc'd backing store), against ~0.08 µs for a view. Views never overlap, so each
 * observation's image is still its caller's alone; but a held observation keeps its chunk alive,
 * and structured clone (postMessage) copies the whole chunk with it (once per message).
 */
const IMAGES_PER_CHUNK = 64;

export const ACTION = { left: 0, right: 1, forward: 2, pickup: 3, drop: 4, toggle: 5, done: 6 } as const;
export const ACTION_LABELS = ['left', 'right', 'forward', 'pickup', 'drop', 'toggle', 'done'] as const;

/** Settings every grid env has. */
export interface GridWorldConfig {
  /** Side of the square egocentric view, in cells (odd, at least 3). Default 7. */
  viewSize: number;
  /** Time limit in steps: the episode is truncated when it reaches this many. */
  maxSteps: number;
}

export const DEFAULT_VIEW_SIZE = 7;
/**
 * Largest egocentric view a grid env accepts (cells per side). Features grow with its square
 * (a 301-cell view cost 4.2 GB in one iteration); MiniGrid's own default is 7.
 */
export const MAX_VIEW_SIZE = 15;
/** Longest time limit a grid env accepts, in steps: rollouts record every step of every episode. */
export const MAX_EPISODE_STEPS = 100_000;

/** A freshly generated episode: the map, where the agent starts, and the mission text. */
export interface Layout {
  grid: Grid;
  agent: { x: number; y: number; dir: number };
  mission: string;
}

/** How entering a cell ends the episode, if it does. */
export type Outcome = 'success' | 'failure' | null;

/**
 * The mutable part of a world, as the rules see it. `cells` may be shared with another state
 * until the first write (`owned` false): the expert's search branches without copying maps for
 * moves and turns, which are most of its transitions.
 */
interface SimState {
  cells: Uint8Array;
  owned: boolean;
  x: number;
  y: number;
  dir: number;
  carryType: number;
  carryColor: number;
}

/** The text a person reads about an env (the rest of the spec is derived from the config). */
export interface GridEnvMeta {
  id: string;
  title: string;
  description: string;
  /** Smallest and largest reward of one step; default [0, 1] (see `rewardFor`). */
  rewardRange?: [number, number];
}

export abstract class GridWorld implements GridEnv {
  readonly spec: EnvSpec;
  protected readonly viewSize: number;
  protected readonly maxSteps: number;

  /** Seeded at construction so unseeded use is reproducible; reseeded by `reset({seed})`. */
  private rng = new Rng(0);
  private grid: Grid | null = null;
  /** The visibility mask of the view being observed (observations keep only the image). */
  private visibleScratch: Uint8Array | null = null;
  /** Where observation images are cut from (see IMAGES_PER_CHUNK) and the bytes used of it. */
  private imageChunk: Uint8Array | null = null;
  private imageChunkUsed = 0;
  /** The state `step` hands to `transition`, reused (one object less per step). */
  private readonly sim: SimState = { cells: new Uint8Array(0), owned: true, x: 0, y: 0, dir: 0, carryType: 0, carryColor: 0 };
  private x = 0;
  private y = 0;
  private dir = 0;
  private carry: Carry = { type: OBJ.unseen, color: 0 };
  private mission = '';
  private steps = 0;
  private ended = false;

  /** The expert's current plan and how far along it the agent is (see `expertAction`). */
  private plan: number[] | null = null;
  private planPos = 0;

  constructor(meta: GridEnvMeta, config: GridWorldConfig) {
    if (!(config.viewSize >= 3 && config.viewSize % 2 === 1)) throw new RangeError(`${meta.id}: viewSize must be odd and >= 3, got ${config.viewSize}`);
    if (!(Number.isInteger(config.maxSteps) && config.maxSteps > 0)) throw new RangeError(`${meta.id}: maxSteps must be a positive integer, got ${config.maxSteps}`);
    this.viewSize = config.viewSize;
    this.maxSteps = config.maxSteps;
    const v = config.viewSize;
    this.spec = {
      ...meta,
      family: 'grid',
      observationSpace: dict({
        image: box([v, v, 3], 0, MAX_CELL_VALUE, 'uint8'),
        direction: discrete(4, DIR_NAMES),
        text: text(maxViewTextLength(v), CHARSET),
      }),
      actionSpace: discrete(ACTION_LABELS.length, ACTION_LABELS),
      rewardRange: meta.rewardRange ?? [0, 1],
      maxSteps: config.maxSteps,
    };
  }

  /** Builds the world for one episode; all randomness must come from `rng`. */
  protected abstract generate(rng: Rng): Layout;

  /** What entering cell (x, y), which holds an object of `type`, does to the episode. */
  protected outcomeAt(type: number, _x: number, _y: number): Outcome {
    if (type === OBJ.goal) return 'success';
    if (type === OBJ.lava) return 'failure';
    return null;
  }

  /**
   * The reward of the step that ended the episode with `outcome` after `steps` steps (every other
   * step earns 0): `1 - 0.9 * steps / maxSteps` for success, 0 for failure. Envs that change it
   * declare their range in `GridEnvMeta.rewardRange`.
   */
  protected rewardFor(outcome: 'success' | 'failure', steps: number): number {
    return outcome === 'success' ? 1 - (0.9 * steps) / this.maxSteps : 0;
  }

  /** Whether the object at (x, y) may be picked up (envs can glue objects down). */
  protected pickupAllowed(_x: number, _y: number): boolean {
    return true;
  }

  // ---------------------------------------------------------------------------------------
  // The Env contract

  reset(opts: ResetOptions = {}): ResetResult<GridObs> {
    // Gymnasium semantics: a seed restarts the generator; without one, the generator simply
    // continues, so a fresh instance reset without seeds still plays a fixed sequence.
    if (opts.seed !== undefined) this.rng = new Rng(opts.seed);
    const layout = this.generate(this.rng);
    const { grid, agent } = layout;
    if (!grid.walkable(agent.x, agent.y)) throw new Error(`${this.spec.id}: generated agent start (${agent.x}, ${agent.y}) is not walkable`);
    this.grid = grid;
    this.x = agent.x;
    this.y = agent.y;
    this.dir = agent.dir;
    this.carry = { type: OBJ.unseen, color: 0 };
    this.mission = layout.mission;
    this.steps = 0;
    this.ended = false;
    this.plan = null;
    return { obs: this.observe(), info: {} };
  }

  step(action: number): StepResult<GridObs> {
    const grid = this.world('step');
    if (this.ended) throw new Error(`${this.spec.id}: step() after the episode ended (terminated or truncated); call reset() first`);
    if (!Number.isInteger(action) || action < 0 || action >= ACTION_LABELS.length) {
      throw new RangeError(`${this.spec.id}: action ${String(action)} is not one of 0..${ACTION_LABELS.length - 1} (${ACTION_LABELS.join(', ')})`);
    }
    if (this.plan !== null && this.plan[this.planPos] === action) this.planPos++;
    else this.plan = null;

    const s = this.sim;
    s.cells = grid.cells;
    s.owned = true;
    s.x = this.x;
    s.y = this.y;
    s.dir = this.dir;
    s.carryType = this.carry.type;
    s.carryColor = this.carry.color;
    const outcome = this.transition(s, action);
    this.x = s.x;
    this.y = s.y;
    this.dir = s.dir;
    // A new object only when it changes: agentState and frames hand out copies, never this one.
    if (s.carryType !== this.carry.type || s.carryColor !== this.carry.color) this.carry = { type: s.carryType, color: s.carryColor };
    this.steps++;

    const terminated = outcome !== null;
    const truncated = !terminated && this.steps >= this.maxSteps;
    const success = outcome === 'success';
    const reward = outcome === null ? 0 : this.rewardFor(outcome, this.steps);
    this.ended = terminated || truncated;
    const info: Info = this.ended ? { success } : NO_INFO;
    return { obs: this.observe(), reward, terminated, truncated, info };
  }

  renderText(): string {
    const grid = this.world('renderText');
    const map = renderCells(grid.cells, grid.height, grid.width, this.y, this.x, AGENT_CHARS[this.dir], this.carry);
    return `${map}\nmission: ${this.mission}\nstep ${this.steps}/${this.maxSteps}`;
  }

  frame(): GridFrame {
    const grid = this.world('frame');
    const view = egocentricView(grid, this.x, this.y, this.dir, this.viewSize, this.carry);
    const { worldX, worldY } = viewCoords(this.x, this.y, this.dir, this.viewSize);
    const visible: [number, number][] = [];
    for (let i = 0; i < view.visible.length; i++) {
      if (view.visible[i] && grid.inBounds(worldX[i], worldY[i])) visible.push([worldX[i], worldY[i]]);
    }
    return {
      kind: 'grid',
      width: grid.width,
      height: grid.height,
      cells: grid.cells.slice(),
      agent: { x: this.x, y: this.y, dir: this.dir, carrying: this.carry.type === OBJ.unseen ? null : { ...this.carry } },
      visible,
      mission: this.mission,
    };
  }

  /**
   * The first action of a shortest solution from the current full state, or null when the
   * episode is over or cannot be solved. One breadth-first search yields the whole plan, which
   * is replayed while the agent follows it (the rules are deterministic, so it stays optimal);
   * any other action drops it and the next call searches again from where the agent is.
   */
  expertAction(): number | null {
    if (this.grid === null || this.ended) return null;
    if (this.plan === null) {
      this.plan = this.solveFromHere() ?? [];
      this.planPos = 0;
    }
    return this.planPos < this.plan.length ? this.plan[this.planPos] : null;
  }

  /**
   * A shortest solution from the current full state, or null when none exists. This search
   * branches over whole maps (any cell may hold a dropped object), which suits the built-in
   * worlds' small rooms; an env whose rules allow a smaller exact state overrides it (custom.ts:
   * a 25×25 map with a key and 4 doors took 5.5-9 s here, ~10 ms in mapSolve's search).
   */
  protected solveFromHere(): number[] | null {
    return this.solve();
  }

  /** The state the expert plans from: the live map (read it, never write it), the pose and what is carried. */
  protected expertState(): { width: number; height: number; cells: Uint8Array; x: number; y: number; dir: number; carryType: number; carryColor: number } {
    const grid = this.world('expertState');
    return { width: grid.width, height: grid.height, cells: grid.cells, x: this.x, y: this.y, dir: this.dir, carryType: this.carry.type, carryColor: this.carry.color };
  }

  // ---------------------------------------------------------------------------------------
  // Read-only views for subclasses and tests

  /** Steps taken in this episode. */
  get stepCount(): number {
    return this.steps;
  }

  get agentState(): { x: number; y: number; dir: number; carrying: Carry | null } {
    return { x: this.x, y: this.y, dir: this.dir, carrying: this.carry.type === OBJ.unseen ? null : { ...this.carry } };
  }

  /**
   * The observation the agent would receive standing on (x, y) facing `dir` in the current world,
   * holding what it holds now: value and policy maps over hypothetical poses (UI overlays). Read
   * only; the episode (pose, step count, expert plan) is untouched. At the agent's own pose it
   * equals the last observation returned by reset/step.
   */
  observeAt(x: number, y: number, dir: number): GridObs {
    const grid = this.world('observeAt');
    if (!grid.inBounds(x, y)) throw new RangeError(`${this.spec.id}: observeAt(${x}, ${y}) is outside the ${grid.width}×${grid.height} map`);
    if (!(Number.isInteger(dir) && dir >= 0 && dir < 4)) throw new RangeError(`${this.spec.id}: observeAt direction ${String(dir)} is not one of 0..3 (${DIR_NAMES.join(', ')})`);
    return this.viewFrom(grid, x, y, dir);
  }

  /** A copy of the current map. */
  currentGrid(): Grid {
    return this.world('currentGrid').clone();
  }

  // ---------------------------------------------------------------------------------------
  // Internals

  private world(caller: string): Grid {
    if (this.grid === null) throw new Error(`${this.spec.id}: ${caller}() before reset(); call reset() first`);
    return this.grid;
  }

  private observe(): GridObs {
    return this.viewFrom(this.world('observe'), this.x, this.y, this.dir);
  }

  private viewFrom(grid: Grid, x: number, y: number, dir: number): GridObs {
    const size = this.viewSize;
    const bytes = size * size * 3;
    let chunk = this.imageChunk;
    if (chunk === null || this.imageChunkUsed + bytes > chunk.length) {
      chunk = this.imageChunk = new Uint8Array(bytes * IMAGES_PER_CHUNK);
      this.imageChunkUsed = 0;
    }
    const image = new Uint8Array(chunk.buffer, this.imageChunkUsed, bytes);
    this.imageChunkUsed += bytes;
    const { type, color } = this.carry;
    writeEgocentricView(grid, x, y, dir, size, type, color, image, (this.visibleScratch ??= new Uint8Array(size * size)));
    // The text reads only values fixed here (this observation's own image, the carry as it is
    // now), so it never changes after the fact.
    return lazyGridObs(image, dir, size, type, color);
  }

  /** Applies one action to `s` in place; returns how the episode ends, if it does. */
  private transition(s: SimState, action: number): Outcome {
    const width = this.grid!.width;
    const height = this.grid!.height;
    if (action === ACTION.left) {
      s.dir = (s.dir + 3) & 3;
      return null;
    }
    if (action === ACTION.right) {
      s.dir = (s.dir + 1) & 3;
      return null;
    }
    if (action === ACTION.done) return null;

    const [dx, dy] = DIR_VEC[s.dir];
    const fx = s.x + dx;
    const fy = s.y + dy;
    if (fx < 0 || fy < 0 || fx >= width || fy >= height) return null;
    const o = (fy * width + fx) * 3;
    const type = s.cells[o];
    const color = s.cells[o + 1];
    const state = s.cells[o + 2];

    switch (action) {
      case ACTION.forward:
        if (!canOverlap(type, state)) return null;
        s.x = fx;
        s.y = fy;
        return this.outcomeAt(type, fx, fy);
      case ACTION.pickup:
        if (s.carryType === OBJ.unseen && canPickUp(type) && this.pickupAllowed(fx, fy)) {
          s.carryType = type;
          s.carryColor = color;
          writeCell(s, o, OBJ.empty, 0, 0);
        }
        return null;
      case ACTION.drop:
        if (s.carryType !== OBJ.unseen && type === OBJ.empty) {
          writeCell(s, o, s.carryType, s.carryColor, 0);
          s.carryType = OBJ.unseen;
          s.carryColor = 0;
        }
        return null;
      case ACTION.toggle:
        if (type !== OBJ.door) return null;
        if (state === DOOR.locked) {
          if (s.carryType === OBJ.key && s.carryColor === color) writeCell(s, o, type, color, DOOR.open);
        } else {
          writeCell(s, o, type, color, state === DOOR.open ? DOOR.closed : DOOR.open);
        }
        return null;
      default:
        throw new RangeError(`unknown action ${action}`);
    }
  }

  /**
   * Breadth-first search over full states (position, heading, what is carried, and the map,
   * which holds door states and where keys lie). Maps are interned: a state stores the id of
   * its map, and a new map is created only when an action changes a cell. Failure endings
   * (lava, wrong object) are dead ends; the first success found is a shortest solution, which
   * is also the highest-reward one since reward falls with the step count. Returns the action
   * sequence, or null when no solution exists.
   */
  private solve(): number[] | null {
    const grid = this.grid!;
    const { width: W, height: H } = grid;
    const maps: Uint8Array[] = [grid.cells.slice()];
    const mapIds = new Map<string, number>();
    let rootInterned = false;
    const intern = (cells: Uint8Array): number => {
      if (!rootInterned) {
        mapIds.set(String.fromCharCode(...maps[0]), 0);
        rootInterned = true;
      }
      const k = String.fromCharCode(...cells);
      let id = mapIds.get(k);
      if (id === undefined) {
        id = maps.length;
        maps.push(cells);
        mapIds.set(k, id);
      }
      return id;
    };
    // A carried object is (type, colour): 0 for nothing, else 1 + type * 6 + colour.
    const CARRY_CODES = 1 + (MAX_CELL_VALUE + 1) * 6;
    const keyOf = (mapId: number, s: Omit<SimState, 'cells' | 'owned'>): number => {
      const carry = s.carryType === OBJ.unseen ? 0 : 1 + s.carryType * 6 + s.carryColor;
      return (((mapId * CARRY_CODES + carry) * H + s.y) * W + s.x) * 4 + s.dir;
    };

    // Node arrays (struct of arrays): node i's state, parent node and the action that led to it.
    const nx: number[] = [this.x];
    const ny: number[] = [this.y];
    const nd: number[] = [this.dir];
    const nct: number[] = [this.carry.type];
    const ncc: number[] = [this.carry.color];
    const nmap: number[] = [0];
    const parent: number[] = [-1];
    const via: number[] = [-1];
    const seen = new Set<number>();
    seen.add(keyOf(0, { x: this.x, y: this.y, dir: this.dir, carryType: this.carry.type, carryColor: this.carry.color }));

    const s: SimState = { cells: maps[0], owned: false, x: 0, y: 0, dir: 0, carryType: 0, carryColor: 0 };
    for (let head = 0; head < nx.length; head++) {
      for (let action = 0; action < ACTION.done; action++) {
        s.cells = maps[nmap[head]];
        s.owned = false;
        s.x = nx[head];
        s.y = ny[head];
        s.dir = nd[head];
        s.carryType = nct[head];
        s.carryColor = ncc[head];
        const outcome = this.transition(s, action);
        if (outcome === 'failure') continue;
        const mapId = s.owned ? intern(s.cells) : nmap[head];
        const key = keyOf(mapId, s);
        if (seen.has(key)) continue;
        seen.add(key);
        nx.push(s.x);
        ny.push(s.y);
        nd.push(s.dir);
        nct.push(s.carryType);
        ncc.push(s.carryColor);
        nmap.push(mapId);
        parent.push(head);
        via.push(action);
        if (outcome === 'success') {
          const path: number[] = [];
          for (let n = nx.length - 1; n > 0; n = parent[n]) path.push(via[n]);
          return path.reverse();
        }
      }
    }
    return null;
  }
}

/** Writes cell bytes at offset `o` of `s.cells`, copying a shared map first (copy on write). */
function writeCell(s: SimState, o: number, t: number, c: number, st: number): void {
  if (!s.owned) {
    s.cells = s.cells.slice();
    s.owned = true;
  }
  s.cells[o] = t;
  s.cells[o + 1] = c;
  s.cells[o + 2] = st;
}
