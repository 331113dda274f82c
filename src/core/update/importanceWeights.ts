/**
 * Off-policy correction and staleness for asynchronous rollouts (the third invariant: the shift
 * between rollout, update and serving must stay bounded; ARCHITECTURE.md, 'Rollout scheduling').
 *
 * Three policies meet at every sampled token:
 * - μ, the behaviour policy: the rollout worker's weights (version v_tok) and numerics; its
 *   log-prob `behaviourLogp` is stored with the token (TITO).
 * - π_old, the trainer's policy at the start of this update (version v_trainer), recomputed
 *   by the trainer: `trainerOldLogp`. It is the denominator of PPO's ratio.
 * - π_θ, the parameters being updated.
 *
 * Truncated importance sampling (TIS; Ionides 2008; Yao et al. 2025, "Your efficient RL
 * framework secretly brings you off-policy RL training") corrects for μ ≠ π_old:
 *   ratio_i  = exp(trainerOldLogp_i − behaviourLogp_i) = π_old(a_i)/μ(a_i)
 *   weight_i = min(ratio_i, cap)
 * and the weight multiplies token i's policy-gradient loss as a constant (`isWeights` in
 * `policyLoss`). Truncation bounds the variance at the cost of a small bias.
 */
import type { Numbers } from '../algos/stats.ts';

export interface TisResult {
  /** [N] min(ratio, cap) on policy tokens, 0 elsewhere. */
  weights: Float64Array;
  /** `async/is_ratio_mean`: mean of the *untruncated* ratio over policy tokens (shows the real drift). */
  ratioMean: number;
  /** `async/is_ratio_max`: max of the untruncated ratio over policy tokens. */
  ratioMax: number;
  /** `async/is_clipfrac`: share of policy tokens with ratio > cap (weight truncated). */
  clipfrac: number;
}

/** Truncated importance weights, per token. All arrays [N]; cap > 0. */
export function truncatedIsWeights(trainerOldLogp: Numbers, behaviourLogp: Numbers, mask: Numbers, cap: number): TisResult {
  const n = trainerOldLogp.length;
  if (behaviourLogp.length !== n || mask.length !== n) {
    throw new RangeError(`truncatedIsWeights: lengths differ (trainer ${n}, behaviour ${behaviourLogp.length}, mask ${mask.length})`);
  }
  if (!(cap > 0)) throw new RangeError(`truncatedIsWeights: cap must be > 0, got ${cap}`);
  const weights = new Float64Array(n);
  let tok = 0, sum = 0, mx = 0, clipped = 0;
  for (let i = 0; i < n; i++) {
    if (mask[i] === 0) continue;
    const r = Math.exp(trainerOldLogp[i] - behaviourLogp[i]);
    weights[i] = Math.min(r, cap);
    tok++;
    sum += r;
    if (r > mx) mx = r;
    if (r > cap) clipped++;
  }
  return { weights, ratioMean: tok ? sum / tok : NaN, ratioMax: tok ? mx : NaN, clipfrac: tok ? clipped / tok : 0 };
}

export interface StalenessResult {
  /** [N] trainerVersion − tokenVersion on policy tokens, 0 elsewhere. */
  perToken: Int32Array;
  /** `async/staleness_mean` over policy tokens (0 for synchronous training). */
  mean: number;
  /** `async/staleness_max` over policy tokens. */
  max: number;
}

/**
 * Staleness in policy versions, per token: how many optimizer updates the trainer is ahead of
 * the weights that sampled the token. A token from the future is a bookkeeping bug: thrown.
 * @param tokenVersions [N] policy version that sampled each token.
 */
export function staleness(trainerVersion: number, tokenVersions: Numbers, mask: Numbers): StalenessResult {
  const n = tokenVersions.length;
  if (mask.length !== n) throw new RangeError(`staleness: ${n} versions vs ${mask.length} mask entries`);
  const perToken = new Int32Array(n);
  let tok = 0, sum = 0, mx = 0;
  for (let i = 0; i < n; i++) {
    if (mask[i] === 0) continue;
    const s = trainerVersion - tokenVersions[i];
    if (s < 0) throw new RangeError(`staleness: token ${i} has version ${tokenVersions[i]}, newer than the trainer's ${trainerVersion}`);
    perToken[i] = s;
    tok++;
    sum += s;
    if (s > mx) mx = s;
  }
  return { perToken, mean: tok ? sum / tok : 0, max: mx };
}

/**
 * `mismatch/logprob_abs_diff_mean|max`: |rollout log-prob − trainer log-prob| at the *same*
 * policy version, over policy tokens. Nonzero only from numerics (kernels, precision, KV-cache
 * path); a large value means the rollout and trainer compute different functions (TITO broken).
 */
export function logprobMismatch(rolloutLogp: Numbers, trainerLogp: Numbers, mask: Numbers): { absDiffMean: number; absDiffMax: number } {
  const n = rolloutLogp.length;
  if (trainerLogp.length !== n || mask.length !== n) throw new RangeError('logprobMismatch: lengths differ');
  let tok = 0, sum = 0, mx = 0;
  for (let i = 0; i < n; i++) {
    if (mask[i] === 0) continue;
    const d = Math.abs(rolloutLogp[i] - trainerLogp[i]);
    tok++;
    sum += d;
    if (d > mx) mx = d;
  }
  return { absDiffMean: tok ? sum / tok : 0, absDiffMax: mx };
}
