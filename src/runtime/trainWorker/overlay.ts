/**
 * Value and policy maps over a grid (REINFORCEjs style), computed in the training worker with
 * the learner's current weights: for every cell the agent could stand on, in the world as it was
 * at one step of a replayed episode (doors opened, key carried), the observation the agent would
 * get there facing each of the 4 directions, run through the policy in batches.
 *
 * Pure parts (which poses, their features, assembling outputs) are split from the ONNX call so
 * they are testable without a runtime.
 */
import { makeEnv, type EnvKwargs } from '../../core/envs/index.ts';
import { GridWorld } from '../../core/envs/grid/world.ts';
import { SwitchDoorEnv } from '../../core/envs/grid/switch-door.ts';
import { OBJ } from '../../core/envs/grid/objects.ts';
import type { GridObs } from '../../core/envs/types.ts';
import { encodeGridObs, gridFeatureSize } from '../../core/rollout/features.ts';
import type { GridOverlay } from './types.ts';

export interface OverlayInputs {
  width: number;
  height: number;
  /** [n·2] (x, y) of each free cell. */
  cells: Int16Array;
  /** [n·4, D] features, row = cell·4 + direction (0 east, 1 south, 2 west, 3 north). */
  features: Float32Array;
  /** Feature width D. */
  dim: number;
}

/**
 * The world after `actions[0..step)` from `seed`, and the features of every standable pose in it.
 * Cells that end the episode on entry (goal, lava) are left out: the agent never acts there.
 */
export function overlayInputs(envId: string, kwargs: EnvKwargs, seed: number, actions: ArrayLike<number>, step: number): OverlayInputs {
  const env = makeEnv(envId, kwargs);
  // Grid worlds, and grid/switch-door (its acting agent's view at each pose; the other agent stays put).
  if (!(env instanceof GridWorld || env instanceof SwitchDoorEnv)) throw new Error(`${envId} is not a grid world: no value map`);
  let obs = env.reset({ seed }).obs;
  const upto = Math.max(0, Math.min(step, actions.length));
  for (let t = 0; t < upto; t++) {
    const r = env.step(actions[t]);
    obs = r.obs;
    if (r.terminated || r.truncated) break;
  }
  const grid = env.currentGrid();
  const xy: number[] = [];
  for (let y = 0; y < grid.height; y++) {
    for (let x = 0; x < grid.width; x++) {
      const type = grid.type(x, y);
      if (grid.walkable(x, y) && type !== OBJ.goal && type !== OBJ.lava) xy.push(x, y);
    }
  }
  const n = xy.length / 2;
  const dim = gridFeatureSize(Math.round(Math.sqrt((obs as GridObs).image.length / 3)));
  const features = new Float32Array(n * 4 * dim);
  for (let c = 0; c < n; c++) {
    for (let d = 0; d < 4; d++) encodeGridObs(env.observeAt(xy[2 * c], xy[2 * c + 1], d), features, (c * 4 + d) * dim);
  }
  return { width: grid.width, height: grid.height, cells: Int16Array.from(xy), features, dim };
}

/** Runs `rows` feature rows through a fixed-batch policy; returns log-probs [rows, A] and values [rows] (or null without a value head). */
export async function runRows(
  run: (obs: Float32Array) => Promise<Record<string, Float32Array>>,
  batch: number,
  features: Float32Array,
  dim: number,
  numActions: number,
): Promise<{ logprobs: Float32Array; values: Float32Array | null }> {
  const rows = features.length / dim;
  const logprobs = new Float32Array(rows * numActions);
  let values: Float32Array | null = null;
  const input = new Float32Array(batch * dim);
  for (let r0 = 0; r0 < rows; r0 += batch) {
    const k = Math.min(batch, rows - r0);
    input.fill(0);
    input.set(features.subarray(r0 * dim, (r0 + k) * dim));
    const out = await run(input);
    logprobs.set(out.logprobs.subarray(0, k * numActions), r0 * numActions);
    if (out.value) {
      values ??= new Float32Array(rows);
      values.set(out.value.subarray(0, k), r0);
    }
  }
  return { logprobs, values };
}

/** Packs the per-row outputs into the overlay the UI draws (probabilities, not log-probs). */
export function assembleOverlay(inp: OverlayInputs, out: { logprobs: Float32Array; values: Float32Array | null }, numActions: number, version: number, step: number): GridOverlay {
  const probs = new Float32Array(out.logprobs.length);
  for (let i = 0; i < probs.length; i++) probs[i] = Math.exp(out.logprobs[i]);
  return { width: inp.width, height: inp.height, cells: inp.cells, numActions, probs, values: out.values, version, step };
}
