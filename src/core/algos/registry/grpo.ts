/** GRPO (Shao et al. 2024): group-relative advantages, (r_i − mean_g) / (std_g + ε), with PPO's clipped loss. */
import { grpoAdvantages } from '../advantages.ts';
import { defineAlgo, perGroup } from './types.ts';

/** GRPO's group-relative estimator, shared by the algorithms that keep GRPO's advantages and change the loss. */
export const grpoEstimator = perGroup((r, g, c) => grpoAdvantages(r, g, { normalizeStd: c.normalizeStd, eps: c.stdEps }));

export const grpo = defineAlgo({
  name: 'grpo',
  label: 'GRPO (group-relative)',
  help: "'grpo': compare episodes within a group from one start: reward minus the group's mean, divided by its std.",
  advantage: { kind: 'episode', estimate: grpoEstimator },
  group: true,
  groupStd: true,
});
