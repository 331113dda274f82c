/**
 * Potentials Φ for potential-based shaping (`shaping.ts`), one per env family.
 * Any bounded Φ keeps the optimal policy (Ng et al. 1999); a good Φ only makes learning faster,
 * so these may be rough approximations of the true value.
 */
import type { Frame, GridFrame } from '../envs/types.ts';
import { DOOR, OBJ } from '../envs/grid/objects.ts';
import { MAX_DOORS } from '../envs/grid/mapSpec.ts';
import { DIR_VEC } from '../envs/grid/view.ts';
import type { Potential } from './shaping.ts';

/**
 * Grid worlds: Φ(s) = −(shortest walking distance, in cells, from the agent to the nearest goal).
 * Walls and lava block; doors (in any state) and objects count as passable, so the distance is
 * optimistic in door-key layouts (it ignores fetching the key and turning). No reachable goal:
 * Φ = −(width·height), below every reachable distance.
 */
export const gridGoalDistance: Potential<Frame> = {
  id: 'grid/neg-goal-distance',
  doc: 'Minus the BFS walking distance (cells) from the agent to the nearest goal; walls and lava block.',
  phi(frame: Frame): number {
    if (frame.kind !== 'grid') throw new TypeError(`gridGoalDistance: needs a grid frame, got '${frame.kind}'`);
    const { width: W, height: H, cells, agent } = frame;
    const dist = new Int32Array(W * H).fill(-1);
    const queue = new Int32Array(W * H);
    let head = 0, tail = 0;
    const start = agent.y * W + agent.x;
    dist[start] = 0;
    queue[tail++] = start;
    while (head < tail) {
      const p = queue[head++];
      if (cells[p * 3] === OBJ.goal) return -dist[p];
      const x = p % W, y = (p - x) / W;
      const next = [x > 0 ? p - 1 : -1, x < W - 1 ? p + 1 : -1, y > 0 ? p - W : -1, y < H - 1 ? p + W : -1];
      for (const q of next) {
        if (q < 0 || dist[q] >= 0) continue;
        const t = cells[q * 3];
        if (t === OBJ.wall || t === OBJ.lava) continue;
        dist[q] = dist[p] + 1;
        queue[tail++] = q;
      }
    }
    return -(W * H);
  },
  /** −(W·H): below every walking distance on the map. */
  floor(frame: Frame): number {
    if (frame.kind !== 'grid') throw new TypeError(`gridGoalDistance: needs a grid frame, got '${frame.kind}'`);
    return -(frame.width * frame.height);
  },
};

/**
 * Most doors the step-count potential tracks as closed-or-open (a studio map has at most
 * MAX_DOORS): the search's states grow as 2^doors (25·25·4·2·2^4 = 80,000). Doors beyond them,
 * in reading order, count as passable, as gridGoalDistance counts every door.
 */
export const STEPS_MAX_DOORS = MAX_DOORS;
/** Layouts whose step tables are kept (least recently used dropped): a batch's envs and a key pickup per episode. */
const STEPS_CACHE_SIZE = 64;

/**
 * One layout's distances: for every state (x, y, heading, key held, open-door mask) the fewest
 * actions to a goal, −1 where no goal can be reached. A layout is the map with where the key
 * lies (or that it is carried) and which doors open without one; which doors are open is part
 * of the state.
 */
interface StepsTable {
  W: number;
  H: number;
  /** Cell index of each tracked door. */
  doorCells: Int32Array;
  /** Whether a key is in play (on the floor, or carried when none lies on the floor). */
  hasKey: boolean;
  /** Cell index of the key on the floor, −1 when carried or absent. */
  keyCell: number;
  /** [W·H·4·2·2^doors] actions to a goal from each state, −1 unreachable or not a state. */
  dist: Int32Array;
  /** The most steps any state of this layout needs (the table's longest finite distance). */
  maxFinite: number;
}

const stepsCache = new Map<string, StepsTable>();

/** Scratch for a frame's layout codes, and the last layout looked up (a batch's slots mostly share one map). */
let codes = new Uint16Array(0);
let lastCodes = new Uint16Array(0);
let lastTable: StepsTable | null = null;

/**
 * A frame's layout codes into `codes`: size, what is carried, and each cell as (type, colour,
 * closed-unlocked door or not); whether a door is open is left out (the search tracks it).
 */
function layoutCodes(frame: GridFrame): Uint16Array {
  const { cells, width: W, height: H, agent } = frame;
  if (codes.length !== W * H + 3) codes = new Uint16Array(W * H + 3);
  codes[0] = W;
  codes[1] = H;
  codes[2] = agent.carrying ? 1 + agent.carrying.type * 8 + agent.carrying.color : 0;
  for (let p = 0; p < W * H; p++) {
    const t = cells[p * 3];
    // A door is 'closed' (opens without a key) or not: a locked door and an open one share a
    // layout (an open door's lock no longer matters, and it is open in the state), so opening
    // the doors of a map does not build new tables.
    const closed = t === OBJ.door && cells[p * 3 + 2] === DOOR.closed ? 1 : 0;
    codes[p + 3] = (t * 8 + cells[p * 3 + 1]) * 2 + closed;
  }
  return codes;
}

function sameCodes(a: Uint16Array, b: Uint16Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function stepsTable(frame: GridFrame): StepsTable {
  const c = layoutCodes(frame);
  if (lastTable && sameCodes(c, lastCodes)) return lastTable;
  let key = '';
  for (let i = 0; i < c.length; i += 4096) key += String.fromCharCode(...c.subarray(i, i + 4096));
  let table = stepsCache.get(key);
  if (table) {
    // Most recently used goes last, so the first entry is the one to drop.
    stepsCache.delete(key);
  } else {
    table = buildStepsTable(frame);
    if (stepsCache.size >= STEPS_CACHE_SIZE) stepsCache.delete(stepsCache.keys().next().value!);
  }
  stepsCache.set(key, table);
  lastCodes = c.slice();
  lastTable = table;
  return table;
}

/**
 * The table of a frame's layout: the grid rules of world.ts over (x, y, heading, key held,
 * open doors), searched backwards from the goals. Turns, forward into empty / floor / goal /
 * an open door / the key's cell once the key is held, pickup of the key in front, toggle of a
 * closed door in front (a locked one only while holding the key of its colour). Lava and every
 * other object block. Dropping the key or closing a door never shortens a path (nothing else
 * is carried; a closed door blocks), so neither is searched.
 */
function buildStepsTable(frame: GridFrame): StepsTable {
  const layout = scanLayout(frame);
  const edges = forwardEdges(layout);
  const { dist, maxFinite } = stepsBack(layout.N, edges);
  // Only the distances are kept (a 25×25 map with 4 doors: 320 KB; the edges would add 1.3 MB).
  return { W: layout.W, H: layout.H, doorCells: layout.doorCells, hasKey: layout.hasKey, keyCell: layout.keyCell, dist, maxFinite };
}

/** What the search needs of a frame: its cells, the doors it tracks (≤ STEPS_MAX_DOORS), the key, and the state count. */
interface Layout {
  cells: GridFrame['cells'];
  W: number;
  H: number;
  doorCells: Int32Array;
  /** Door index of each cell (-1: not a tracked door). */
  doorIndex: Int8Array;
  keyCell: number;
  keyColor: number;
  hasKey: boolean;
  /** States: cells × 4 headings × key held or not × each subset of tracked doors open. */
  N: number;
}

function scanLayout(frame: GridFrame): Layout {
  const { cells, width: W, height: H, agent } = frame;
  const doorList: number[] = [];
  let keyCell = -1;
  let keyColor = -1;
  for (let p = 0; p < W * H; p++) {
    const t = cells[p * 3];
    if (t === OBJ.door && doorList.length < STEPS_MAX_DOORS) doorList.push(p);
    if (t === OBJ.key && keyCell < 0) {
      keyCell = p;
      keyColor = cells[p * 3 + 1];
    }
  }
  if (keyCell < 0 && agent.carrying?.type === OBJ.key) keyColor = agent.carrying.color;
  const doorIndex = new Int8Array(W * H).fill(-1);
  doorList.forEach((p, i) => (doorIndex[p] = i));
  return { cells, W, H, doorCells: Int32Array.from(doorList), doorIndex, keyCell, keyColor, hasKey: keyColor >= 0, N: W * H * 4 * 2 * (1 << doorList.length) };
}

/** Forward edges (CSR) and the goal marks of a layout's states. */
interface Edges {
  succStart: Int32Array;
  succ: Int32Array;
  /** 1 where the state's front action enters a goal. */
  reachesGoal: Uint8Array;
  /** Edge count. */
  m: number;
}

/** Forward successors, at most 3 per state (left, right, and forward / pickup / toggle), and a mark on states whose front action enters a goal. */
function forwardEdges(l: Layout): Edges {
  const { cells, W, H, doorIndex, keyCell, keyColor, hasKey, N } = l;
  const code = (p: number, dir: number, held: number, mask: number) => (((mask * 2 + held) * W * H + p) << 2) | dir;
  /** Can the agent stand on cell p with the key held or not and these doors open? */
  const standable = (p: number, held: number, mask: number): boolean => {
    const t = cells[p * 3];
    if (t === OBJ.empty || t === OBJ.floor || t === OBJ.agent) return true;
    if (p === keyCell) return held === 1;
    if (t === OBJ.door) {
      const i = doorIndex[p];
      return i < 0 || ((mask >> i) & 1) === 1;
    }
    return false;
  };
  const succStart = new Int32Array(N + 1);
  const succ = new Int32Array(3 * N);
  const reachesGoal = new Uint8Array(N);
  let m = 0;
  for (let s = 0; s < N; s++) {
    succStart[s] = m;
    const dir = s & 3;
    const rest = s >> 2;
    const p = rest % (W * H);
    const hm = (rest - p) / (W * H);
    const held = hm & 1;
    const mask = hm >> 1;
    if ((held === 1 && !hasKey) || !standable(p, held, mask)) continue;
    succ[m++] = code(p, (dir + 3) & 3, held, mask);
    succ[m++] = code(p, (dir + 1) & 3, held, mask);
    const x = p % W;
    const y = (p - x) / W;
    const [dx, dy] = DIR_VEC[dir];
    const fx = x + dx;
    const fy = y + dy;
    if (fx < 0 || fy < 0 || fx >= W || fy >= H) continue;
    const f = fy * W + fx;
    const t = cells[f * 3];
    if (t === OBJ.goal) {
      reachesGoal[s] = 1;
      continue;
    }
    if (standable(f, held, mask)) succ[m++] = code(f, dir, held, mask);
    else if (f === keyCell && held === 0) succ[m++] = code(p, dir, 1, mask);
    else if (t === OBJ.door && doorIndex[f] >= 0) {
      // Locked unless it is closed-unlocked now (an open door counts as locked: see layoutCodes).
      const locked = cells[f * 3 + 2] !== DOOR.closed;
      if (!locked || (held === 1 && keyColor === cells[f * 3 + 1])) succ[m++] = code(p, dir, held, mask | (1 << doorIndex[f]));
    }
  }
  succStart[N] = m;
  return { succStart, succ, reachesGoal, m };
}

/** Steps to a goal from each state (-1: none): reverse edges (CSR), then a breadth-first search back from the states one step from a goal. */
function stepsBack(N: number, { succStart, succ, reachesGoal, m }: Edges): { dist: Int32Array; maxFinite: number } {
  const predStart = new Int32Array(N + 1);
  for (let e = 0; e < m; e++) predStart[succ[e] + 1]++;
  for (let s = 0; s < N; s++) predStart[s + 1] += predStart[s];
  const fill = predStart.slice(0, N);
  const pred = new Int32Array(m);
  for (let s = 0; s < N; s++) for (let e = succStart[s]; e < succStart[s + 1]; e++) pred[fill[succ[e]]++] = s;
  const dist = new Int32Array(N).fill(-1);
  const queue = new Int32Array(N);
  let head = 0, tail = 0;
  for (let s = 0; s < N; s++) {
    if (!reachesGoal[s]) continue;
    dist[s] = 1;
    queue[tail++] = s;
  }
  let maxFinite = 0;
  while (head < tail) {
    const s = queue[head++];
    maxFinite = dist[s];
    for (let e = predStart[s]; e < predStart[s + 1]; e++) {
      const q = pred[e];
      if (dist[q] >= 0) continue;
      dist[q] = dist[s] + 1;
      queue[tail++] = q;
    }
  }
  return { dist, maxFinite };
}

/** The frame's state index in its table: position, heading, key held, doors open. */
function stateOf(table: StepsTable, frame: GridFrame): number {
  const { cells, agent } = frame;
  const held = table.hasKey && table.keyCell < 0 && agent.carrying?.type === OBJ.key ? 1 : 0;
  let mask = 0;
  table.doorCells.forEach((p, i) => {
    if (cells[p * 3 + 2] === DOOR.open) mask |= 1 << i;
  });
  return (((mask * 2 + held) * table.W * table.H + agent.y * table.W + agent.x) << 2) | agent.dir;
}

function gridFrameOf(frame: Frame, who: string): GridFrame {
  if (frame.kind !== 'grid') throw new TypeError(`${who}: needs a grid frame, got '${frame.kind}'`);
  return frame;
}

/**
 * Grid worlds: Φ(s) = −(the fewest actions that reach a goal from the actual state): position,
 * heading, whether the key is held, which doors are open. Turning, picking up the key and
 * opening a door each cost their step, so holding the key or opening the door on the way
 * raises Φ, where gridGoalDistance (walking distance through any door) stays put at a locked
 * door. 0 on a goal. Where no goal can be reached (on lava, or walled in), Φ is one below the
 * layout's longest finite distance, which is also `floor` (read at reset): the shaper clamps
 * to it and ends failed episodes at it (shaping.ts, ARCHITECTURE.md "Potential shaping"). A key
 * dropped far away can make a later layout's distances longer; those clamp to the floor.
 *
 * Cost: one backward search per layout (where the key lies, which doors are locked), kept in
 * a small cache; a step then reads one table entry after a pass over the cells for the key.
 */
export const gridStepsToSuccess: Potential<Frame> = {
  id: 'grid/neg-steps-to-success',
  doc: 'Minus the fewest actions (turns, moves, key pickup, door opening) from the actual state to a goal; 0 on the goal.',
  phi(state: Frame): number {
    const frame = gridFrameOf(state, 'gridStepsToSuccess');
    const { cells, width: W, agent } = frame;
    const here = cells[(agent.y * W + agent.x) * 3];
    if (here === OBJ.goal) return 0;
    const table = stepsTable(frame);
    const d = here === OBJ.lava ? -1 : table.dist[stateOf(table, frame)];
    return d >= 0 ? -d : -(table.maxFinite + 1);
  },
  floor(state: Frame): number {
    // One below the longest finite distance of the layout the episode starts in: every state
    // the agent can stand in needs at most that many actions, or cannot reach a goal at all.
    return -(stepsTable(gridFrameOf(state, 'gridStepsToSuccess')).maxFinite + 1);
  },
};
