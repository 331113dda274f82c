/**
 * Structured grid observation -> the MLP's input vector. Each view cell becomes one-hot object
 * type (11), colour (6) and state (3); the heading is one-hot (4). A 7×7 view gives
 * 49·20 + 4 = 984 floats. One-hot (not raw ids) so the MLP need not learn that "door" (4) is
 * not halfway between "floor" (3) and "key" (5).
 */
import type { GridObs, StepObs } from '../envs/types.ts';

export const CELL_TYPES = 11;
export const CELL_COLORS = 6;
export const CELL_STATES = 3;
const PER_CELL = CELL_TYPES + CELL_COLORS + CELL_STATES;

export function gridFeatureSize(viewSize: number): number {
  return viewSize * viewSize * PER_CELL + 4;
}

/** Writes the features of `obs` into `out` at `offset` (length gridFeatureSize). */
export function encodeGridObs(obs: GridObs, out: Float32Array, offset = 0): void {
  encodeGridImage(obs.image, 0, obs.image.length / 3, obs.direction, out, offset);
}

/**
 * The same from an image stored at `imageOffset` of a larger byte array (`cells` view cells of
 * 3 bytes): recorded episodes keep images, not features (27× smaller for a 7×7 view).
 */
export function encodeGridImage(image: Uint8Array, imageOffset: number, cells: number, direction: number, out: Float32Array, offset = 0): void {
  const size = cells * PER_CELL + 4;
  out.fill(0, offset, offset + size);
  for (let c = 0; c < cells; c++) {
    const base = offset + c * PER_CELL;
    const type = image[imageOffset + c * 3];
    const color = image[imageOffset + c * 3 + 1];
    const state = image[imageOffset + c * 3 + 2];
    if (type < CELL_TYPES) out[base + type] = 1;
    if (color < CELL_COLORS) out[base + CELL_TYPES + color] = 1;
    if (state < CELL_STATES) out[base + CELL_TYPES + CELL_COLORS + state] = 1;
  }
  out[offset + cells * PER_CELL + (direction & 3)] = 1;
}

/**
 * The feature that is 1 when the acting agent's own view cell (bottom row, centre) shows colour
 * `color`: in a multi-agent grid (EnvSpec.agentColors) it says which agent acts.
 */
export function gridOwnColorFeature(viewSize: number, color: number): number {
  const own = (viewSize - 1) * viewSize + ((viewSize - 1) >> 1);
  return own * PER_CELL + CELL_TYPES + color;
}

/**
 * The MLP's input for any observation a step pool plays: a grid view's one-hot features
 * (encodeGridObs), or a vector observation's floats as they are (a Box: `obs.vector.length` floats).
 */
export function encodeStepObs(obs: StepObs, out: Float32Array, offset = 0): void {
  if ('vector' in obs) out.set(obs.vector, offset);
  else encodeGridObs(obs, out, offset);
}
