/** GRPO (Shao et al. 2024): group-relative advantages, (r_i − mean_g) / (std_g + ε), with PPO's clipped loss. */
import { grpoAdvantages } from '../advantages.ts';
import { defineAlgo, perGroup } from './types.ts';

export const grpo = defineAlgo({
  name: 'grpo',
  label: 'GRPO (group-relative)',
  help: "'grpo': compare episodes within a group from one start: reward minus the group's mean, divided by its std.",
  advantage: { kind: 'episode', estimate: perGroup((r, g, c) => grpoAdvantages(r, g, { normalizeStd: c.normalizeStd, eps: c.stdEps })) },
  loss: { objective: 'clip', aggregation: 'token' },
  group: true,
  groupStd: true,
  critic: false,
  updateEpochs: 1,
});
