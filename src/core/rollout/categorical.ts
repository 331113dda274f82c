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

/** Log-softmax of logits[offset .. offset+n) into `out` (float64 for accuracy). */
export function logSoftmaxRow(logits: ArrayLike<number>, offset: number, n: number, out: Float64Array): void {
  let max = -Infinity;
  for (let i = 0; i < n; i++) max = Math.max(max, logits[offset + i]);
  let sum = 0;
  for (let i = 0; i < n; i++) sum += Math.exp(logits[offset + i] - max);
  const lse = max + Math.log(sum);
  for (let i = 0; i < n; i++) out[i] = logits[offset + i] - lse;
}

/**
 * Samples one action from row `row` of a [rows, n] logits array.
 * `temperature` 0 means greedy (argmax; logprob still reported under the untempered policy).
 */
export function sampleRow(
  logits: ArrayLike<number>,
  row: number,
  n: number,
  rng: Rng,
  scratch: Float64Array = new Float64Array(n),
  temperature = 1,
): Sampled {
  logSoftmaxRow(logits, row * n, n, scratch);
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
    action = n - 1;
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
    action = n - 1;
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
