/**
 * What the agent sees: a square window in front of it, rotated so that it always faces up,
 * with the cells it cannot see (behind walls and closed doors) blanked to `unseen`.
 * Plus the text rendering of a view or of the whole map in the shared vocabulary.
 */
import type { Grid } from './grid.ts';
import { AGENT_CHARS, COLOR, COLOR_LETTERS, OBJ, cellChar, isColored, seeBehind } from './objects.ts';

/** Unit steps (dx, dy) for the four headings: 0 east, 1 south, 2 west, 3 north (y grows down). */
export const DIR_VEC: readonly (readonly [number, number])[] = [
  [1, 0],
  [0, 1],
  [-1, 0],
  [0, -1],
];
export const DIR_NAMES = ['east', 'south', 'west', 'north'] as const;

/** What the agent holds: type 0 (`OBJ.unseen`) means nothing. */
export interface Carry {
  type: number;
  color: number;
}

export interface View {
  /** `size × size × 3` bytes, row-major (row 0 farthest ahead, row size-1 the agent's row). */
  image: Uint8Array;
  /** `size × size`, 1 where the cell is visible. */
  visible: Uint8Array;
}

/**
 * World coordinates of each cell of the egocentric view from (ax, ay) facing `dir`
 * (`size × size` each, same order as View), for mapping visibility back onto the map.
 */
export function viewCoords(ax: number, ay: number, dir: number, size: number): { worldX: Int32Array; worldY: Int32Array } {
  const half = (size - 1) >> 1;
  const [fx, fy] = DIR_VEC[dir];
  const [rx, ry] = DIR_VEC[(dir + 1) & 3];
  const worldX = new Int32Array(size * size);
  const worldY = new Int32Array(size * size);
  for (let row = 0; row < size; row++) {
    for (let col = 0; col < size; col++) {
      worldX[row * size + col] = ax + fx * (size - 1 - row) + rx * (col - half);
      worldY[row * size + col] = ay + fy * (size - 1 - row) + ry * (col - half);
    }
  }
  return { worldX, worldY };
}

/**
 * The egocentric view from (ax, ay) facing `dir`. The agent sits at the bottom row, centre
 * column, facing up (towards row 0); view column c is `c - (size-1)/2` cells to its right.
 * Cells outside the map read as walls. The agent's own cell shows what it carries (or empty),
 * as in MiniGrid, so an image-only policy can tell whether it holds the key.
 * `visibleOut` (size × size) receives the visibility mask instead of a new array.
 */
export function egocentricView(grid: Grid, ax: number, ay: number, dir: number, size: number, carry: Carry, visibleOut?: Uint8Array): View {
  const image = new Uint8Array(size * size * 3);
  const visible = visibleOut ?? new Uint8Array(size * size);
  writeEgocentricView(grid, ax, ay, dir, size, carry.type, carry.color, image, visible);
  return { image, visible };
}

/**
 * egocentricView into caller-owned arrays (`image` size × size × 3 bytes, every byte written;
 * `visible` size × size): no allocation, for the env step.
 */
export function writeEgocentricView(grid: Grid, ax: number, ay: number, dir: number, size: number, carryType: number, carryColor: number, image: Uint8Array, visible: Uint8Array): void {
  const half = (size - 1) >> 1;
  // Indexing, not destructuring: this runs once per env step.
  const fx = DIR_VEC[dir][0], fy = DIR_VEC[dir][1];
  const rx = DIR_VEC[(dir + 1) & 3][0], ry = DIR_VEC[(dir + 1) & 3][1]; // "right" is one clockwise turn from "forward"
  const W = grid.width, H = grid.height, cells = grid.cells;
  for (let row = 0; row < size; row++) {
    const ahead = size - 1 - row;
    for (let col = 0; col < size; col++) {
      const right = col - half;
      const x = ax + fx * ahead + rx * right;
      const y = ay + fy * ahead + ry * right;
      const i = (row * size + col) * 3;
      if (x >= 0 && y >= 0 && x < W && y < H) {
        const o = (y * W + x) * 3;
        image[i] = cells[o];
        image[i + 1] = cells[o + 1];
        image[i + 2] = cells[o + 2];
      } else {
        image[i] = OBJ.wall;
        image[i + 1] = COLOR.grey;
        image[i + 2] = 0;
      }
    }
  }
  const me = ((size - 1) * size + half) * 3;
  image[me] = carryType === OBJ.unseen ? OBJ.empty : carryType;
  image[me + 1] = carryType === OBJ.unseen ? 0 : carryColor;
  image[me + 2] = 0;

  visibilityMask(image, size, visible);
  for (let i = 0; i < size * size; i++) {
    if (!visible[i]) image[i * 3] = image[i * 3 + 1] = image[i * 3 + 2] = 0;
  }
}

/**
 * Which view cells the agent can see (MiniGrid's rule). Light spreads from the agent's cell
 * row by row away from it: a visible cell that does not block sight lights its sideways
 * neighbour, the cell ahead of it and the cell diagonally ahead on that side. Two sweeps
 * per row (rightwards, then leftwards) let light travel both ways along a row. A blocking
 * cell (wall, closed door) is itself visible but lights nothing, so what lies behind it stays
 * dark — unless light reaches it around the side.
 */
export function visibilityMask(image: Uint8Array, size: number, out?: Uint8Array): Uint8Array {
  const vis = out ? out.fill(0, 0, size * size) : new Uint8Array(size * size);
  const me = (size - 1) * size + ((size - 1) >> 1);
  vis[me] = 1;
  // `clear(i)` is written out inline (i === me || seeBehind(...)): a closure here would be
  // allocated on every env step.
  for (let row = size - 1; row >= 0; row--) {
    const base = row * size;
    for (let col = 0; col < size - 1; col++) {
      const i = base + col;
      if (!vis[i] || !(i === me || seeBehind(image[i * 3], image[i * 3 + 2]))) continue;
      vis[i + 1] = 1;
      if (row > 0) vis[i - size + 1] = vis[i - size] = 1;
    }
    for (let col = size - 1; col > 0; col--) {
      const i = base + col;
      if (!vis[i] || !(i === me || seeBehind(image[i * 3], image[i * 3 + 2]))) continue;
      vis[i - 1] = 1;
      if (row > 0) vis[i - size - 1] = vis[i - size] = 1;
    }
  }
  return vis;
}

/**
 * One character per cell (legend in objects.ts), one line per row, then
 * `colors: Ky Ld` — the colour letter of each coloured object in reading order — when any
 * coloured object is shown, and `carry: Ky` when the agent holds something.
 *
 * `cells` is `rows × cols × 3`; the agent is drawn at (agentRow, agentCol) with `agentChar`.
 */
export function renderCells(cells: Uint8Array, rows: number, cols: number, agentRow: number, agentCol: number, agentChar: string, carry: Carry): string {
  const lines: string[] = [];
  const colors: string[] = [];
  for (let r = 0; r < rows; r++) {
    let line = '';
    for (let c = 0; c < cols; c++) {
      if (r === agentRow && c === agentCol) {
        line += agentChar;
        continue;
      }
      const o = (r * cols + c) * 3;
      const ch = cellChar(cells[o], cells[o + 2]);
      line += ch;
      if (isColored(cells[o])) colors.push(ch + COLOR_LETTERS[cells[o + 1]]);
    }
    lines.push(line);
  }
  if (colors.length > 0) lines.push(`colors: ${colors.join(' ')}`);
  if (carry.type !== OBJ.unseen) lines.push(`carry: ${cellChar(carry.type, 0)}${COLOR_LETTERS[carry.color]}`);
  return lines.join('\n');
}

/** The text of an egocentric view image: the agent is '^' at the bottom centre. */
export function renderView(image: Uint8Array, size: number, carry: Carry): string {
  return renderCells(image, size, size, size - 1, (size - 1) >> 1, AGENT_CHARS[3], carry);
}

/** An upper bound on `renderView`'s length, for the text space: map, newlines, colours, carry. */
export function maxViewTextLength(size: number): number {
  const map = size * size + (size - 1);
  const colors = '\ncolors:'.length + 3 * (size * size - 1); // " Ky" per coloured cell; the agent's cell is never one
  const carry = '\ncarry: Ky'.length;
  return map + colors + carry;
}
