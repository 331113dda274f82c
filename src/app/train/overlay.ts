/**
 * Reading a grid overlay (value and policy per cell, computed in the training worker) for
 * drawing: which heading to show, the value colour scale, and the policy's preferred action per
 * cell. Pure and tested; overlayPaint.ts draws it.
 */
import type { GridOverlay } from '../../runtime/trainWorker/types.ts';

/** Heading to map: the replayed step's own (−1) or a fixed one (0 east, 1 south, 2 west, 3 north). */
export type Facing = -1 | 0 | 1 | 2 | 3;

export const HEADINGS = ['east', 'south', 'west', 'north'] as const;

/** Row of `cell` facing `dir` in the overlay's arrays. */
export const rowOf = (cell: number, dir: number) => cell * 4 + dir;

/** Min and max value over the mapped cells at one heading (NaN, NaN without a value head). */
export function valueRange(ov: GridOverlay, dir: number): { lo: number; hi: number } {
  if (!ov.values) return { lo: NaN, hi: NaN };
  let lo = Infinity;
  let hi = -Infinity;
  for (let c = 0; c < ov.cells.length / 2; c++) {
    const v = ov.values[rowOf(c, dir)];
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  return Number.isFinite(lo) ? { lo, hi } : { lo: NaN, hi: NaN };
}

/**
 * Cell fill for value v: one green ramp from the map's lowest value (pale) to its highest (deep),
 * whatever the signs. Grid rewards are ≥ 0, so a slightly negative V is critic noise, and a
 * diverging scale would paint it an alarming red; the numbers in the cells keep the sign.
 * `alpha` lets the map show through.
 */
export function valueColor(v: number, range: { lo: number; hi: number }, alpha = 0.62): string {
  if (!Number.isFinite(v) || !Number.isFinite(range.lo)) return 'rgba(0,0,0,0)';
  const span = range.hi - range.lo;
  const u = Math.max(0, Math.min(1, span > 1e-9 ? (v - range.lo) / span : 0.5));
  return `hsla(140 ${Math.round(35 + 50 * u)}% ${Math.round(90 - 50 * u)}% / ${alpha})`;
}

/** The most likely action at a cell and heading, with its probability. */
export function argmaxAction(ov: GridOverlay, cell: number, dir: number): { action: number; prob: number } {
  const A = ov.numActions;
  const base = rowOf(cell, dir) * A;
  let best = 0;
  for (let a = 1; a < A; a++) if (ov.probs[base + a] > ov.probs[base + best]) best = a;
  return { action: best, prob: ov.probs[base + best] };
}

/** Index of the mapped cell at (x, y), or −1 when it is not mapped (walls, goal, lava). */
export function cellIndex(ov: GridOverlay, x: number, y: number): number {
  for (let c = 0; c < ov.cells.length / 2; c++) if (ov.cells[2 * c] === x && ov.cells[2 * c + 1] === y) return c;
  return -1;
}
