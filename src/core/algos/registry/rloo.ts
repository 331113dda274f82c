/** RLOO (Ahmadian et al. 2024): each episode's reward minus the mean of the others in its group. */
import { rlooAdvantages } from '../advantages.ts';
import { defineAlgo, perGroup } from './types.ts';

export const rloo = defineAlgo({
  name: 'rloo',
  label: 'RLOO (leave-one-out)',
  help: "'rloo': each episode's reward minus the mean of the other episodes of its group (unbiased leave-one-out baseline).",
  advantage: { kind: 'episode', estimate: perGroup((r, g) => rlooAdvantages(r, g)) },
  group: true,
  groupOfOne: 'a leave-one-out baseline needs another episode in the group',
});
