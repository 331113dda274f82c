/**
 * GSPO (Qwen3, Zheng et al. 2025): GRPO's advantages with the clipped surrogate on each episode's
 * length-normalised sequence ratio; its objective (1/G) Σ_i min(s_i·Â_i, clip(s_i)·Â_i) weighs
 * every sequence 1/G, hence 'sequence' aggregation (each token 1/(G·|y_i|)).
 */
import { grpoEstimator } from './grpo.ts';
import { defineAlgo } from './types.ts';

export const gspo = defineAlgo({
  name: 'gspo',
  label: 'GSPO (GRPO + sequence ratio)',
  help: "'gspo': GRPO's advantages, clipped on each episode's length-normalised ratio instead of each token's: use clips near 3e-4 / 4e-4.",
  advantage: { kind: 'episode', estimate: grpoEstimator },
  loss: { objective: 'gspo', aggregation: 'sequence' },
  group: true,
  groupStd: true,
  runCheck: (run) =>
    // An episode's steps are GSPO's sequence: its ratio is over all of them, in one train step.
    run.target === 'grid-mlp' && run.learnerBatch < run.maxSteps
      ? [`rollout.learnerBatch: gspo trains whole episodes per train step (its ratio is over every step of one), so it must hold the longest, ${run.maxSteps} steps (${run.envId}'s maxSteps); got ${run.learnerBatch}`]
      : [],
});
