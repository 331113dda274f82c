/**
 * Which tokens Clip-Cov and KL-Cov act on (Cui et al. 2025, "The Entropy Mechanism of
 * Reinforcement Learning for Reasoning Language Models"; veRL `clip_cov`, `kl_cov`). Entropy
 * falls when the policy's confident tokens get positive advantages: each token's share of that
 * fall is the covariance term cov_i = (A_i − Ā)·(log π_i − mean log π), both means over the
 * minibatch's policy tokens. Clip-Cov stops the gradient of a few random tokens with cov in
 * (lb, ub); KL-Cov puts a KL penalty on the tokens of largest cov. The graph side is
 * update/surrogates.ts (`cov_mask`).
 *
 * log π here is the fed π_old of each token (the learner's log-prob at the batch's start). veRL
 * uses the current policy's; the two are equal on the first minibatch of a synchronous update,
 * and differ by the steps already taken on later minibatches and epochs. Likewise Clip-Cov's
 * "not already clipped by PPO" rule holds exactly there (ratio 1 clips nothing).
 */
import type { CovarianceConfig } from '../algos/covarianceConfig.ts';
import type { Rng } from '../util/rng.ts';

/** cov_i = (A_i − Ā)·(lp_i − l̄p) over mask ≠ 0 (0 elsewhere), float64. */
export function tokenCovariance(adv: ArrayLike<number>, logp: ArrayLike<number>, mask: ArrayLike<number>): Float64Array {
  let n = 0, sa = 0, sl = 0;
  for (let i = 0; i < mask.length; i++) {
    if (mask[i] === 0) continue;
    n++;
    sa += adv[i];
    sl += logp[i];
  }
  const out = new Float64Array(mask.length);
  if (n === 0) return out;
  const ma = sa / n;
  const ml = sl / n;
  for (let i = 0; i < mask.length; i++) if (mask[i] !== 0) out[i] = (adv[i] - ma) * (logp[i] - ml);
  return out;
}

/**
 * The selected tokens of one minibatch, [n] (1 = selected). Clip-Cov: min(k, candidates) tokens
 * drawn uniformly without replacement from those with lb < cov < ub, k = max(⌊clipRatio·N⌋, 1);
 * KL-Cov: the k = max(⌊klRatio·N⌋, 1) tokens of largest cov (ties: the earlier position). N is
 * the minibatch's policy-token count.
 */
export function covarianceSelection(adv: ArrayLike<number>, logp: ArrayLike<number>, mask: ArrayLike<number>, cfg: CovarianceConfig, rng: Rng): Float32Array {
  const sel = new Float32Array(mask.length);
  if (cfg.mode === 'off') return sel;
  const cov = tokenCovariance(adv, logp, mask);
  const valid: number[] = [];
  for (let i = 0; i < mask.length; i++) if (mask[i] !== 0) valid.push(i);
  if (valid.length === 0) return sel;
  if (cfg.mode === 'kl-cov') {
    const k = Math.max(Math.floor(cfg.klRatio * valid.length), 1);
    const top = valid.slice().sort((a, b) => cov[b] - cov[a] || a - b).slice(0, k);
    for (const i of top) sel[i] = 1;
    return sel;
  }
  const cand = valid.filter((i) => cov[i] > cfg.lb && cov[i] < cfg.ub);
  const k = Math.min(Math.max(Math.floor(cfg.clipRatio * valid.length), 1), cand.length);
  // Partial Fisher–Yates: the first k of a uniform shuffle.
  for (let j = 0; j < k; j++) {
    const r = j + rng.int(0, cand.length - j);
    [cand[j], cand[r]] = [cand[r], cand[j]];
    sel[cand[j]] = 1;
  }
  return sel;
}
