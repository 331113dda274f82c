/** SlotColumns: a slot's per-step records survive growth and reuse, and features encode what was stored. */
import { stepFeatures } from './stepEpisode.ts';
import { describe, expect, it } from 'vitest';
import type { GridObs } from '../envs/types.ts';
import { encodeGridObs, gridFeatureSize } from './features.ts';
import { SlotColumns } from './stepSlots.ts';

/** A 3×3 view (27 bytes) whose cells differ by step, so a misplaced row shows. */
function obsAt(t: number): GridObs {
  const image = new Uint8Array(27);
  for (let c = 0; c < 9; c++) image.set([(t + c) % 11, (2 * t + c) % 6, (t + 2 * c) % 3], 3 * c);
  return { image, direction: t % 4, text: '' };
}

/** Features of steps 0..T−1 from the columns' stored images and headings. */
function features(cols: SlotColumns, T: number, D: number): Float32Array {
  const out = new Float32Array(T * D);
  const ep = { images: cols.images.subarray(0, T * cols.imageBytes), directions: cols.directions.subarray(0, T) };
  for (let t = 0; t < T; t++) stepFeatures(ep, t, out, t * D);
  return out;
}

describe('SlotColumns', () => {
  it('keeps what was recorded when it grows past its reservation, and when reused for a shorter episode', () => {
    const D = gridFeatureSize(3);
    const cols = new SlotColumns();
    const T = 40; // past the first reservation of 16 steps: two growths
    for (let t = 0; t < T; t++) {
      cols.reserve(t + 1, obsAt(t));
      cols.putObservation(t, obsAt(t));
      cols.actions[t] = t % 7;
      cols.rewards[t] = t / 10;
      cols.versions[t] = t >> 3;
    }
    const want = new Float32Array(T * D);
    for (let t = 0; t < T; t++) encodeGridObs(obsAt(t), want, t * D);
    expect(features(cols, T, D)).toEqual(want);
    expect(Array.from(cols.actions.subarray(0, T))).toEqual(Array.from({ length: T }, (_, t) => t % 7));
    expect(Array.from(cols.rewards.subarray(0, T))).toEqual(Array.from({ length: T }, (_, t) => t / 10));
    expect(Array.from(cols.versions.subarray(0, T))).toEqual(Array.from({ length: T }, (_, t) => t >> 3));

    // Next batch: a 3-step episode overwrites the start; its features are its own 3 rows only.
    for (let t = 0; t < 3; t++) cols.putObservation(t, obsAt(100 + t));
    const short = new Float32Array(3 * D);
    for (let t = 0; t < 3; t++) encodeGridObs(obsAt(100 + t), short, t * D);
    expect(features(cols, 3, D)).toEqual(short);
  });
});
