/**
 * One episode of a step environment (grid world) as a rollout records it: what the trainer
 * learns from, the inspector replays, and trajectories.jsonl stores. Pools (stepPool.ts) produce them.
 */
import type { Info, StepObs } from '../envs/types.ts';
import { encodeGridImage } from './features.ts';

export interface StepEpisode {
  envId: string;
  /** reset seed: episodes with the same seed start from the same state (a GRPO group). */
  seed: number;
  /** Group index within the iteration (−1 when not grouped). */
  group: number;
  /**
   * [T, K] the egocentric image (K = view² × 3 bytes) of the observation each action was taken
   * in; `stepFeatures` encodes a step for the policy. Images, not features: 27× fewer bytes to
   * record, move between threads and collect.
   */
  images: Uint8Array;
  /** [T] that observation's heading (0 for vector observations: it still counts the steps). */
  directions: Uint8Array;
  /**
   * [T, n] the observation each action was taken in, for envs with vector observations (a Box
   * of n floats; `images` is then empty). Absent for grid envs.
   */
  vectors?: Float32Array;
  /** [T] actions taken. */
  actions: Int32Array;
  /** [T] behaviour log-probabilities μ(a_t|s_t). */
  logprobs: Float32Array;
  /** [T] entropy of the behaviour policy at each step, nats. */
  entropies: Float32Array;
  /** [T] V(s_t) at rollout time (0 without a value head). */
  values: Float32Array;
  /** V(s_T) for bootstrapping a truncated episode (0 when terminated). */
  bootstrapValue: number;
  /** [T] env rewards. */
  rewards: Float64Array;
  infos: Info[];
  /** [T] policy version that chose each action. */
  versions: Int32Array;
  /** [T+1] Φ(s_0..s_T) for potential-based shaping, when a potential was given. */
  potentials?: Float64Array;
  /** The potential's floor for this episode (its lowest Φ), with `potentials`: a failed episode ends at it. */
  potentialFloor?: number;
  /** Raw observations s_0..s_T (for replays), kept only when asked. */
  observations?: StepObs[];
  terminated: boolean;
  truncated: boolean;
  success: boolean;
  /**
   * User reward terms (reward lab): term → [T] finite values per step, added to the env reward by
   * the score phase. Set by the trainer after collection, absent without user terms.
   */
  termRewards?: Record<string, Float64Array>;
}

/** Step t's policy input (gridFeatureSize floats, or the vector's n) into `out` at `offset`. */
export function stepFeatures(ep: Pick<StepEpisode, 'images' | 'directions' | 'vectors'>, t: number, out: Float32Array, offset: number): void {
  if (ep.vectors) {
    const n = ep.vectors.length / ep.directions.length;
    out.set(ep.vectors.subarray(t * n, (t + 1) * n), offset);
    return;
  }
  const K = ep.images.length / ep.directions.length;
  encodeGridImage(ep.images, t * K, K / 3, ep.directions[t], out, offset);
}

/**
 * GiGPO's anchor state of each step: the observation the action was taken in (heading and
 * egocentric view, FNV-1a hashed). States that look alike share a key: in open rooms two cells
 * with the same view alias, which merges their step groups. A vector observation is hashed by its
 * float bits: only exactly equal vectors share a key (continuous states rarely repeat).
 */
export function stepStateKeys(ep: Pick<StepEpisode, 'images' | 'directions' | 'vectors'>): string[] {
  const T = ep.directions.length;
  if (ep.vectors) {
    const n = T ? ep.vectors.length / T : 0;
    const bits = new Uint32Array(ep.vectors.buffer, ep.vectors.byteOffset, ep.vectors.length);
    return Array.from({ length: T }, (_, t) => {
      let h = 0x811c9dc5;
      for (let i = t * n; i < (t + 1) * n; i++) h = Math.imul(h ^ bits[i], 0x01000193);
      return `v:${(h >>> 0).toString(36)}:${n}`;
    });
  }
  const K = T ? ep.images.length / T : 0;
  return Array.from({ length: T }, (_, t) => {
    let h = 0x811c9dc5;
    for (let i = t * K; i < (t + 1) * K; i++) h = Math.imul(h ^ ep.images[i], 0x01000193);
    return `${ep.directions[t]}:${(h >>> 0).toString(36)}:${K}`;
  });
}
