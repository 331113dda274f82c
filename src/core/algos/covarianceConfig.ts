/**
 * The settings of covariance-based entropy control (Clip-Cov, KL-Cov; Cui et al. 2025), part of
 * the algorithm config. The token selection and its graph side are update/covariance.ts and
 * update/surrogates.ts.
 */

export const COVARIANCE_MODES = ['off', 'clip-cov', 'kl-cov'] as const;

/** Covariance-based entropy control, on any policy-gradient algorithm. */
export interface CovarianceConfig {
  /** 'off', 'clip-cov' (stop the gradient of a random few high-covariance tokens) or 'kl-cov' (KL penalty on the top ones). */
  mode: (typeof COVARIANCE_MODES)[number];
  /** Clip-Cov: share of the minibatch's policy tokens to stop (at least 1), veRL clip_cov_ratio. */
  clipRatio: number;
  /** Clip-Cov: only tokens with cov > lb are candidates (advantage × nats), veRL clip_cov_lb. */
  lb: number;
  /** Clip-Cov: only tokens with cov < ub are candidates (advantage × nats), veRL clip_cov_ub. */
  ub: number;
  /** KL-Cov: share of the minibatch's policy tokens, largest cov first, to penalise (at least 1), veRL kl_cov_ratio. */
  klRatio: number;
  /** KL-Cov: coefficient on |log π − log π_old| of those tokens, veRL ppo_kl_coef. */
  klCoef: number;
}

/** veRL's defaults. */
export const COVARIANCE_DEFAULTS: CovarianceConfig = { mode: 'off', clipRatio: 2e-4, lb: 1, ub: 5, klRatio: 2e-4, klCoef: 1 };
