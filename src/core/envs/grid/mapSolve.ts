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
import { AGENT_CHARS } from './objects.ts';
import { MAP_TILES } from './mapSpec.ts';
import { DIR_VEC } from './view.ts';
import { ACTION } from './world.ts';

export type MapVerdict =
  | { solvable: true; steps: number; actions: number[] }
  | { solvable: false; reason: string; /** Shortest solution length when it exists but exceeds the step limit. */ steps?: number };

interface Parsed {
  W: number;
  H: number;
  cells: string[];
  start: { x: number; y: number; dir: number };
  /** Door index per cell, -1 elsewhere. */
  doorAt: Int8Array;
  doors: number;
  key: { x: number; y: number } | null;
  goals: number;
}

function parse(rows: readonly string[]): Parsed {
  const H = rows.length;
  const W = rows[0]?.length ?? 0;
  const doorAt = new Int8Array(W * H).fill(-1);
  let doors = 0;
  let key: Parsed['key'] = null;
  let start: Parsed['start'] | null = null;
  let goals = 0;
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const ch = rows[y][x];
      const dir = AGENT_CHARS.indexOf(ch);
      if (dir >= 0) start = { x, y, dir };
      else if (ch === MAP_TILES.door) doorAt[y * W + x] = doors++;
      else if (ch === MAP_TILES.key) key = { x, y };
      else if (ch === MAP_TILES.goal) goals++;
    }
  }
  if (!start) throw new Error('solveMap: the map has no agent start');
  return { W, H, cells: [...rows], start, doorAt, doors, key, goals };
}

/**
 * Shortest action sequence from the start to a goal (null when none), as world.ts's rules
 * play it: turns, forward into empty/goal/lava/open door, pickup of the key in front, toggle of a
 * locked door in front while holding the key.
 */
function search(p: Parsed): number[] | null {
  const { W, H, cells, doorAt } = p;
  const masks = 1 << p.doors;
  const code = (x: number, y: number, dir: number, key: number, mask: number) => (((mask * 2 + key) * H + y) * W + x) * 4 + dir;
  const seen = new Uint8Array(W * H * 4 * 2 * masks);
  const parent = new Int32Array(seen.length).fill(-1);
  const via = new Int8Array(seen.length);
  const s0 = code(p.start.x, p.start.y, p.start.dir, 0, 0);
  seen[s0] = 1;
  const queue = [s0];
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
    const front = inside ? cells[fy][fx] : MAP_TILES.wall;
    const door = inside ? doorAt[fy * W + fx] : -1;
    const next: [number, number][] = [
      [ACTION.left, code(x, y, (dir + 3) & 3, key, mask)],
      [ACTION.right, code(x, y, (dir + 1) & 3, key, mask)],
    ];
    const keyGone = key === 1 && front === MAP_TILES.key;
    const open = door >= 0 && (mask >> door) & 1;
    if (front === MAP_TILES.goal) return [...pathTo(s, parent, via), ACTION.forward];
    const walkable = front === MAP_TILES.empty || AGENT_CHARS.includes(front) || keyGone || open;
    // Lava ends the episode in failure: a dead end, never a step on a solution.
    if (walkable) next.push([ACTION.forward, code(fx, fy, dir, key, mask)]);
    if (front === MAP_TILES.key && key === 0) next.push([ACTION.pickup, code(x, y, dir, 1, mask)]);
    if (door >= 0 && !open && key === 1) next.push([ACTION.toggle, code(x, y, dir, key, mask | (1 << door))]);
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
