import { safeExp, type IsDescriptor } from './types.ts';

/** Token-level truncated IS (veRL rollout_is 'token'; TRL vllm_importance_sampling_mode 'token_truncate'): w_t = min(ρ_t, cap). Low variance, biased. */
export const tokenIs: IsDescriptor = {
  name: 'token',
  kind: 'is',
  help: 'token-level truncated IS: each token\'s advantage × min(π_old/μ, cap)',
  perSequence: false,
  ratios(b) {
    const out = new Float64Array(b.logRatio.length);
    for (let i = 0; i < out.length; i++) if (b.mask[i]) out[i] = safeExp(b.logRatio[i]);
    return out;
  },
};
