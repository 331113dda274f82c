/**
 * Sampling from a row of logits on the rollout side. The trainer recomputes the same
 * log-probabilities in the train-step graph; `mismatch/*` metrics compare the two (TITO).
 * Computed in float64 from float32 logits, with the max subtracted first for stability.
 */
import type { Rng } from '../util/rng.ts';

export interface Sampled {
  action: number;
  /** log π(action) under these logits. */
  logprob: number;
  /** Entropy of the whole distribution, in nats. */
  entropy: number;
}

/**
 * Log-softmax of logits[offset .. offset+n) into `out` (float64 for accuracy). With `allowed` (a
 * packed bit set, text/grammar.ts), the softmax is over the allowed entries only and the others
 * get −∞: the masked distribution constrained decoding samples from.
 */
export function logSoftmaxRow(logits: ArrayLike<number>, offset: number, n: number, out: Float64Array, allowed?: Uint32Array): void {
  const on = (i: number) => allowed === undefined || ((allowed[i >>> 5] >>> (i & 31)) & 1) === 1;
  let max = -Infinity;
  for (let i = 0; i < n; i++) if (on(i)) max = Math.max(max, logits[offset + i]);
  if (max === -Infinity) throw new RangeError('logSoftmaxRow: the mask allows no token');
  let sum = 0;
  for (let i = 0; i < n; i++) if (on(i)) sum += Math.exp(logits[offset + i] - max);
  const lse = max + Math.log(sum);
  for (let i = 0; i < n; i++) out[i] = on(i) ? logits[offset + i] - lse : -Infinity;
}

/**
 * Samples one action from row `row` of a [rows, n] logits array.
 * `temperature` 0 means greedy (argmax; logprob still reported under the untempered policy).
 * `allowed` (packed bits over the n actions): sample from the distribution renormalised over
 * them; logprob and entropy are then the masked distribution's.
 */
export function sampleRow(
  logits: ArrayLike<number>,
  row: number,
  n: number,
  rng: Rng,
  scratch: Float64Array = new Float64Array(n),
  temperature = 1,
  allowed?: Uint32Array,
): Sampled {
  logSoftmaxRow(logits, row * n, n, scratch, allowed);
  // Where rounding leaves a draw past the end, the last allowed action takes it.
  let last = n - 1;
  while (last > 0 && scratch[last] === -Infinity) last--;
  let entropy = 0;
  for (let i = 0; i < n; i++) {
    const p = Math.exp(scratch[i]);
    // 0·log 0 = 0 (a masked action with logit −∞ contributes nothing).
    if (p > 0) entropy -= p * scratch[i];
  }
  let action = 0;
  if (temperature <= 0) {
    for (let i = 1; i < n; i++) if (scratch[i] > scratch[action]) action = i;
  } else if (temperature === 1) {
    // Inverse-CDF sampling; the last index absorbs rounding so a draw never falls off the end.
    let u = rng.random();
    action = last;
    for (let i = 0; i < n; i++) {
      u -= Math.exp(scratch[i]);
      if (u < 0) {
        action = i;
        break;
      }
    }
  } else {
    // Tempered sampling: softmax(logp / T), drawn the same way.
    let max = -Infinity;
    for (let i = 0; i < n; i++) max = Math.max(max, scratch[i] / temperature);
    let z = 0;
    for (let i = 0; i < n; i++) z += Math.exp(scratch[i] / temperature - max);
    let u = rng.random() * z;
    action = last;
    for (let i = 0; i < n; i++) {
      u -= Math.exp(scratch[i] / temperature - max);
      if (u < 0) {
        action = i;
        break;
      }
    }
  }
  return { action, logprob: scratch[action], entropy };
}
