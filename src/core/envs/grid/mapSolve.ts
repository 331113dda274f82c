/**
 * The studio's expert: a breadth-first search over (position, heading, key held, doors open)
 * for a map drawn in the map legend (mapSpec.ts), under the grid rules of world.ts. It says
 * whether the map can be solved, in how many steps, and when it cannot, why in words.
 *
 * The state is small because a map has at most one key and MAX_DOORS doors: a held key means its
 * cell is empty (dropping it never helps, as nothing else can be carried), an open door stays
 * open (closing one never helps), so `(x, y, dir, key, doorMask)` is the whole world. Each state
 * is one integer, so `seen` is a typed array of `W·H·4·2·2^doors` bytes (25·25·4·2·16 = 80,000 at
 * most).
 */
import { AGENT_CHARS, DOOR, OBJ } from './objects.ts';
import { MAP_TILES } from './mapSpec.ts';
import { DIR_VEC } from './view.ts';
import { ACTION } from './world.ts';

export type MapVerdict =
  | { solvable: true; steps: number; actions: number[] }
  | { solvable: false; reason: string; /** Shortest solution length when it exists but exceeds the step limit. */ steps?: number };

/** What a cell is to the solver. */
const CELL = { floor: 0, block: 1, goal: 2, lava: 3, key: 4, door: 5 } as const;

/**
 * A map as the solver sees it, from the map's text (`parse`) or from a world mid-episode
 * (`problemFromWorld`): per cell a CELL kind; the doors, each with whether it is open now and
 * whether it needs the key (locked) or opens with a toggle (closed); the agent's pose and
 * whether it holds the key.
 */
interface Problem {
  W: number;
  H: number;
  /** CELL kind per cell, row-major. */
  kind: Uint8Array;
  /** Door index per cell, -1 elsewhere. */
  doorAt: Int8Array;
  doors: number;
  /** Bit i: door i is locked (toggling opens it only while the key is held). */
  lockedMask: number;
  /** Bit i: the key opens door i (its colour matches the door's). */
  keyOpensMask: number;
  start: { x: number; y: number; dir: number; key: number; mask: number };
}

/** The map text's facts the explanations read (the solver reads the Problem). */
interface Parsed extends Problem {
  cells: string[];
  key: { x: number; y: number } | null;
  goals: number;
}

function parse(rows: readonly string[]): Parsed {
  const H = rows.length;
  const W = rows[0]?.length ?? 0;
  const doorAt = new Int8Array(W * H).fill(-1);
  const kind = new Uint8Array(W * H);
  let doors = 0;
  let key: Parsed['key'] = null;
  let start: { x: number; y: number; dir: number } | null = null;
  let goals = 0;
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const ch = rows[y][x];
      const dir = AGENT_CHARS.indexOf(ch);
      const i = y * W + x;
      if (dir >= 0) start = { x, y, dir };
      else if (ch === MAP_TILES.door) {
        doorAt[i] = doors++;
        kind[i] = CELL.door;
      } else if (ch === MAP_TILES.key) {
        key = { x, y };
        kind[i] = CELL.key;
      } else if (ch === MAP_TILES.goal) {
        goals++;
        kind[i] = CELL.goal;
      } else if (ch === MAP_TILES.lava) kind[i] = CELL.lava;
      else if (ch === MAP_TILES.wall) kind[i] = CELL.block;
    }
  }
  if (!start) throw new Error('solveMap: the map has no agent start');
  // A map's doors are all locked, and its key (the default colour, as every door's) opens each.
  const all = (1 << doors) - 1;
  return { W, H, kind, doorAt, doors, lockedMask: all, keyOpensMask: all, start: { ...start, key: 0, mask: 0 }, cells: [...rows], key, goals };
}

/** Most doors the world-state solver takes: its `seen` has W·H·8·2^doors bytes (25·25·8·256 = 1.3 MB at 8). */
const MAX_SOLVER_DOORS = 8;

/** The world mid-episode, as GridWorld holds it: cells are `type, colour, state` bytes, row-major. */
export interface WorldState {
  width: number;
  height: number;
  cells: Uint8Array;
  x: number;
  y: number;
  dir: number;
  /** What the agent carries: OBJ.unseen for nothing. */
  carryType: number;
  carryColor: number;
}

/**
 * The solver's problem for a world mid-episode, or null when its small state does not describe
 * that world exactly: more than one key, a ball or box (they can be carried and moved), more than
 * MAX_SOLVER_DOORS doors, or something other than a key in hand. Otherwise it is exact for the
 * shortest solution: with one key as the only object that can be carried, dropping it only puts
 * an obstacle on the floor, and closing a door only closes a way, so neither is ever on a
 * shortest solution, and the world is (pose, key held, which doors are open), with the key
 * where it lies now and each door as it is now (open, closed, locked).
 */
export function problemFromWorld(w: WorldState): Problem | null {
  const { width: W, height: H, cells } = w;
  if (w.carryType !== OBJ.unseen && w.carryType !== OBJ.key) return null;
  const kind = new Uint8Array(W * H);
  const doorAt = new Int8Array(W * H).fill(-1);
  let doors = 0;
  let lockedMask = 0;
  let keyOpensMask = 0;
  let mask = 0;
  let keyColor = w.carryType === OBJ.key ? w.carryColor : -1;
  const doorColors: number[] = [];
  for (let i = 0; i < W * H; i++) {
    const type = cells[i * 3];
    const color = cells[i * 3 + 1];
    const state = cells[i * 3 + 2];
    if (type === OBJ.empty || type === OBJ.floor || type === OBJ.unseen || type === OBJ.agent) kind[i] = CELL.floor;
    else if (type === OBJ.goal) kind[i] = CELL.goal;
    else if (type === OBJ.lava) kind[i] = CELL.lava;
    else if (type === OBJ.wall) kind[i] = CELL.block;
    else if (type === OBJ.key) {
      if (keyColor >= 0) return null;
      keyColor = color;
      kind[i] = CELL.key;
    } else if (type === OBJ.door) {
      if (doors === MAX_SOLVER_DOORS) return null;
      kind[i] = CELL.door;
      doorAt[i] = doors;
      if (state === DOOR.open) mask |= 1 << doors;
      if (state === DOOR.locked) lockedMask |= 1 << doors;
      doorColors.push(color);
      doors++;
    } else return null;
  }
  doorColors.forEach((c, d) => {
    if (c === keyColor) keyOpensMask |= 1 << d;
  });
  return { W, H, kind, doorAt, doors, lockedMask, keyOpensMask, start: { x: w.x, y: w.y, dir: w.dir, key: w.carryType === OBJ.key ? 1 : 0, mask } };
}

/**
 * Shortest action sequence from the start to a goal (null when none), as world.ts's rules
 * play it: turns, forward into floor/goal/open door, pickup of the key in front with empty
 * hands, toggle of a door in front (a locked one only while holding a key of its colour).
 * Lava ends the episode in failure, so it is never on a solution.
 */
function search(p: Problem): number[] | null {
  const { W, H, kind, doorAt } = p;
  const masks = 1 << p.doors;
  const code = (x: number, y: number, dir: number, key: number, mask: number) => (((mask * 2 + key) * H + y) * W + x) * 4 + dir;
  const seen = new Uint8Array(W * H * 4 * 2 * masks);
  const parent = new Int32Array(seen.length).fill(-1);
  const via = new Int8Array(seen.length);
  const s0 = code(p.start.x, p.start.y, p.start.dir, p.start.key, p.start.mask);
  seen[s0] = 1;
  const queue = [s0];
  const next: [number, number][] = [];
  for (let head = 0; head < queue.length; head++) {
    const s = queue[head];
    const dir = s & 3;
    let rest = s >> 2;
    const x = rest % W;
    rest = (rest - x) / W;
    const y = rest % H;
    rest = (rest - y) / H;
    const key = rest & 1;
    const mask = rest >> 1;
    const [dx, dy] = DIR_VEC[dir];
    const fx = x + dx;
    const fy = y + dy;
    const inside = fx >= 0 && fy >= 0 && fx < W && fy < H;
    const front = inside ? kind[fy * W + fx] : CELL.block;
    const door = inside ? doorAt[fy * W + fx] : -1;
    next.length = 0;
    next.push([ACTION.left, code(x, y, (dir + 3) & 3, key, mask)], [ACTION.right, code(x, y, (dir + 1) & 3, key, mask)]);
    // A picked-up key's cell is floor from then on.
    const keyGone = key === 1 && front === CELL.key;
    const open = door >= 0 && (mask >> door) & 1;
    if (front === CELL.goal) return [...pathTo(s, parent, via), ACTION.forward];
    const walkable = front === CELL.floor || keyGone || open;
    if (walkable) next.push([ACTION.forward, code(fx, fy, dir, key, mask)]);
    if (front === CELL.key && key === 0) next.push([ACTION.pickup, code(x, y, dir, 1, mask)]);
    if (door >= 0 && !open) {
      const locked = (p.lockedMask >> door) & 1;
      if (!locked || (key === 1 && (p.keyOpensMask >> door) & 1)) next.push([ACTION.toggle, code(x, y, dir, key, mask | (1 << door))]);
    }
    for (const [action, n] of next) {
      if (seen[n]) continue;
      seen[n] = 1;
      parent[n] = s;
      via[n] = action;
      queue.push(n);
    }
  }
  return null;
}

/** Shortest solution from a world mid-episode (see problemFromWorld), null when there is none, undefined when this solver does not apply. */
export function solveWorld(w: WorldState): number[] | null | undefined {
  const p = problemFromWorld(w);
  return p ? search(p) : undefined;
}

function pathTo(s: number, parent: Int32Array, via: Int8Array): number[] {
  const path: number[] = [];
  for (let n = s; parent[n] >= 0; n = parent[n]) path.push(via[n]);
  return path.reverse();
}

/** Cells reachable from the start by walking, where `pass(ch)` says which cells can be crossed. */
function flood(p: Parsed, pass: (ch: string) => boolean): Uint8Array {
  const { W, H, cells } = p;
  const seen = new Uint8Array(W * H);
  const stack = [p.start.y * W + p.start.x];
  seen[stack[0]] = 1;
  while (stack.length) {
    const i = stack.pop()!;
    const x = i % W;
    const y = (i - x) / W;
    for (const [dx, dy] of DIR_VEC) {
      const nx = x + dx;
      const ny = y + dy;
      if (nx < 0 || ny < 0 || nx >= W || ny >= H) continue;
      const j = ny * W + nx;
      if (seen[j] || !pass(cells[ny][nx])) continue;
      seen[j] = 1;
      stack.push(j);
    }
  }
  return seen;
}

/** True when a cell of kind `ch` is in `region` or next to it (a key or goal is reached from beside it). */
function touches(p: Parsed, region: Uint8Array, ch: string): boolean {
  const { W, H, cells } = p;
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      if (cells[y][x] !== ch) continue;
      if (region[y * W + x]) return true;
      for (const [dx, dy] of DIR_VEC) {
        const nx = x + dx;
        const ny = y + dy;
        if (nx >= 0 && ny >= 0 && nx < W && ny < H && region[ny * W + nx]) return true;
      }
    }
  }
  return false;
}

const isFloor = (ch: string) => ch === MAP_TILES.empty || AGENT_CHARS.includes(ch);

/** Why a map with no solution has none, found by relaxing the rules one at a time. */
function explain(p: Parsed): string {
  const { goal, key, door, lava, wall } = MAP_TILES;
  // Everything but walls crossable (doors open, the key picked up, lava survivable).
  if (!touches(p, flood(p, (ch) => ch !== wall), goal)) return 'the goal is walled off: no path reaches it even through doors and lava';
  // Doors open and the key picked up, but lava deadly.
  if (!touches(p, flood(p, (ch) => ch !== wall && ch !== lava), goal)) return 'the goal is cut off by lava: every path to it crosses lava, which ends the episode';
  if (p.doors > 0) {
    if (!p.key) return 'the door needs a key, and the map has none';
    // Where the agent can walk before opening any door (the key cell is reached from beside it).
    const beforeDoors = flood(p, isFloor);
    if (!touches(p, beforeDoors, key)) {
      const throughDoors = flood(p, (ch) => isFloor(ch) || ch === door);
      return touches(p, throughDoors, key) ? 'the door needs a key that is behind it' : 'the key cannot be reached: it is walled off or cut off by lava';
    }
  }
  return 'no sequence of moves reaches the goal';
}

/**
 * Whether the map (rows in the map legend, one agent start) can be solved within `maxSteps`,
 * in how many steps at best, with the actions (ACTION ids) of one shortest solution; or why not.
 */
export function solveMap(rows: readonly string[], maxSteps = Infinity): MapVerdict {
  const p = parse(rows);
  if (p.goals === 0) return { solvable: false, reason: 'no goal: paint a goal cell' };
  const actions = search(p);
  if (!actions) return { solvable: false, reason: explain(p) };
  if (actions.length > maxSteps) {
    return { solvable: false, steps: actions.length, reason: `the shortest solution takes ${actions.length} steps, more than the step limit of ${maxSteps}` };
  }
  return { solvable: true, steps: actions.length, actions };
}
