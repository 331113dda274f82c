/**
 * The loss lens's payload: for a bounded, deterministic sample of a batch's trained positions,
 * each one's log-ratio log π_θ − log π_old at the step that trained it (the learner's log-prob in
 * the first update pass, before that step's optimizer update), its advantage and its sequence.
 * The page reads these under any loss (lossLens.ts); Float32 keeps the transfer small.
 */
import type { RolloutBatch } from './batch.ts';

/** What the page receives per iteration for the loss lens. */
export interface LensSample {
  /** [k] log π_θ − log π_old of each sampled position, nats. */
  logRatio: Float32Array;
  /** [k] the advantage it was trained with. */
  adv: Float32Array;
  /** [k] its sequence (episode) index in the batch: the sequence objectives average within it. */
  seq: Int32Array;
  /** Trained positions in the batch (k ≤ this; k < it when the sample was thinned). */
  total: number;
}

/** Default cap on sampled positions: a scatter stays readable and the message stays a few tens of kB. */
export const LENS_MAX_TOKENS = 2000;

/**
 * Samples up to `max` trained positions (mask on, aggregation weight non-zero) at an even stride
 * in position order, so the same batch always gives the same sample.
 * @param oldLogp [size] π_old the update used. @param adv [size] advantages the update used.
 * @param stepLogp [size] the learner's log-probs in the first pass (UpdateResult.stepLogprobs).
 * @param weights [size] aggregation weights the update used (0 = no loss on that position).
 */
export function lensSample(
  b: Pick<RolloutBatch, 'n' | 'starts' | 'lengths' | 'mask'>,
  oldLogp: ArrayLike<number>,
  adv: ArrayLike<number>,
  stepLogp: ArrayLike<number>,
  weights: ArrayLike<number>,
  max = LENS_MAX_TOKENS,
): LensSample {
  const pos: number[] = [];
  const seqOf: number[] = [];
  for (let s = 0; s < b.n; s++) {
    for (let p = b.starts[s]; p < b.starts[s] + b.lengths[s]; p++) {
      if (b.mask[p] === 0 || weights[p] === 0) continue;
      pos.push(p);
      seqOf.push(s);
    }
  }
  const k = Math.min(max, pos.length);
  const out: LensSample = { logRatio: new Float32Array(k), adv: new Float32Array(k), seq: new Int32Array(k), total: pos.length };
  for (let j = 0; j < k; j++) {
    const i = Math.floor((j * pos.length) / k);
    const p = pos[i];
    out.logRatio[j] = stepLogp[p] - oldLogp[p];
    out.adv[j] = adv[p];
    out.seq[j] = seqOf[i];
  }
  return out;
}
