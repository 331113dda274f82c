/**
 * SAPO (Gao et al. 2025, arXiv 2511.20347): GRPO's advantages with the clip replaced by a soft
 * gate, J = (1/G) Σ_i (1/|y_i|) Σ_t f(r_i,t)·Â_i, f(r) = (4/τ)·σ(τ(r − 1)), τ = τ_pos for Â > 0
 * and τ_neg for Â < 0 (`algo.sapo`); each sequence weighs 1/G, hence 'sequence' aggregation.
 */
import { grpoEstimator } from './grpo.ts';
import { defineAlgo } from './types.ts';

export const sapo = defineAlgo({
  name: 'sapo',
  label: 'SAPO (GRPO + soft gate)',
  help: "'sapo': GRPO's advantages; a smooth gate (4/τ)·σ(τ(r − 1)) replaces the clip, so off-policy tokens fade out instead of being cut (algo.sapo.tauPos / tauNeg).",
  advantage: { kind: 'episode', estimate: grpoEstimator },
  loss: { objective: 'sapo', aggregation: 'sequence' },
  group: true,
  groupStd: true,
  fields: ['sapo'],
});
