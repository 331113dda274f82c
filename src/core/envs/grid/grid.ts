/**
 * The world map: `width × height` cells, row-major, three bytes per cell
 * `(object type, colour, state)` as in objects.ts. x grows east (right), y grows south (down).
 *
 * The bytes are the whole map state, so copying the map is one `Uint8Array.slice()`: the
 * expert's search relies on that to branch on pickups and door toggles cheaply.
 */
import type { Rng } from '../../util/rng.ts';
import { DEFAULT_COLOR, DOOR, OBJ, canOverlap } from './objects.ts';

export class Grid {
  readonly cells: Uint8Array;

  constructor(
    readonly width: number,
    readonly height: number,
    cells?: Uint8Array,
  ) {
    if (cells) {
      if (cells.length !== width * height * 3) throw new RangeError(`cells has ${cells.length} bytes, expected ${width * height * 3}`);
      this.cells = cells;
    } else {
      this.cells = new Uint8Array(width * height * 3);
      for (let i = 0; i < width * height; i++) this.cells[i * 3] = OBJ.empty;
    }
  }

  inBounds(x: number, y: number): boolean {
    return x >= 0 && y >= 0 && x < this.width && y < this.height;
  }

  /** Byte offset of cell (x, y). */
  offset(x: number, y: number): number {
    return (y * this.width + x) * 3;
  }

  type(x: number, y: number): number {
    return this.cells[this.offset(x, y)];
  }

  color(x: number, y: number): number {
    return this.cells[this.offset(x, y) + 1];
  }

  state(x: number, y: number): number {
    return this.cells[this.offset(x, y) + 2];
  }

  /** Puts an object at (x, y); colour defaults per type (objects.ts), state defaults to 0. */
  set(x: number, y: number, type: number, color: number = DEFAULT_COLOR[type] ?? 0, state = 0): void {
    if (!this.inBounds(x, y)) throw new RangeError(`cell (${x}, ${y}) is outside the ${this.width}x${this.height} grid`);
    const o = this.offset(x, y);
    this.cells[o] = type;
    this.cells[o + 1] = color;
    this.cells[o + 2] = state;
  }

  clear(x: number, y: number): void {
    this.set(x, y, OBJ.empty, 0, 0);
  }

  isEmpty(x: number, y: number): boolean {
    return this.type(x, y) === OBJ.empty;
  }

  /** Can the agent stand on (x, y)? */
  walkable(x: number, y: number): boolean {
    return this.inBounds(x, y) && canOverlap(this.type(x, y), this.state(x, y));
  }

  horizontalWall(x0: number, y: number, length: number, type: number = OBJ.wall): void {
    for (let x = x0; x < x0 + length; x++) this.set(x, y, type);
  }

  verticalWall(x: number, y0: number, length: number, type: number = OBJ.wall): void {
    for (let y = y0; y < y0 + length; y++) this.set(x, y, type);
  }

  /** Walls around the rectangle with top-left (x, y) and the given outer size. */
  wallRect(x: number, y: number, w: number, h: number): void {
    this.horizontalWall(x, y, w);
    this.horizontalWall(x, y + h - 1, w);
    this.verticalWall(x, y, h);
    this.verticalWall(x + w - 1, y, h);
  }

  door(x: number, y: number, color: number, state: number = DOOR.closed): void {
    this.set(x, y, OBJ.door, color, state);
  }

  /**
   * A uniformly random empty cell inside the rectangle [x0, x0+w) × [y0, y0+h), excluding
   * `avoid` (e.g. the agent's position). Throws when there is none, naming the rectangle.
   */
  randomEmptyCell(rng: Rng, x0 = 0, y0 = 0, w = this.width, h = this.height, avoid?: { x: number; y: number }): { x: number; y: number } {
    const candidates: { x: number; y: number }[] = [];
    for (let y = y0; y < y0 + h; y++) {
      for (let x = x0; x < x0 + w; x++) {
        if (this.inBounds(x, y) && this.isEmpty(x, y) && !(avoid && avoid.x === x && avoid.y === y)) candidates.push({ x, y });
      }
    }
    if (candidates.length === 0) throw new Error(`no empty cell in the ${w}x${h} rectangle at (${x0}, ${y0})`);
    return rng.choice(candidates);
  }

  clone(): Grid {
    return new Grid(this.width, this.height, this.cells.slice());
  }
}
