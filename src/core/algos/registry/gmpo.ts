/**
 * GMPO (Zhao et al. 2025, arXiv 2507.20673; veRL `geo_mean`): GRPO's advantages, each episode's
 * objective Â times the geometric mean of its token ratios, each clipped in log space to
 * [−clipLow, clipHigh] in Â's direction (the paper's clip is e^±0.4: clipLow = clipHigh = 0.4).
 * A sequence objective like GSPO's: every episode weighs 1/G ('sequence' aggregation) and its
 * ratio spans all of its steps, so minibatches take whole episodes.
 */
import { grpoEstimator } from './grpo.ts';
import { defineAlgo } from './types.ts';

export const gmpo = defineAlgo({
  name: 'gmpo',
  label: 'GMPO (GRPO + geometric-mean ratio)',
  help: "'gmpo': GRPO's advantages; each episode's ratio is the geometric mean of its token ratios, clipped per token in log space (clipLow/clipHigh are log bounds: the paper uses 0.4).",
  advantage: { kind: 'episode', estimate: grpoEstimator },
  loss: { objective: 'gmpo', aggregation: 'sequence' },
  group: true,
  groupStd: true,
  runCheck: (run) =>
    run.target === 'grid-mlp' && run.learnerBatch < run.maxSteps
      ? [`rollout.learnerBatch: gmpo trains whole episodes per train step (its ratio is over every step of one), so it must hold the longest, ${run.maxSteps} steps (${run.envId}'s maxSteps); got ${run.learnerBatch}`]
      : [],
});
