/** PPO (Schulman et al. 2017): a learned critic, GAE(γ, λ) advantages per step, several epochs per batch. */
import { defineAlgo } from './types.ts';

export const ppo = defineAlgo({
  name: 'ppo',
  label: 'PPO (critic + GAE)',
  help: "'ppo': a learned critic and GAE per step, several passes over each batch.",
  advantage: { kind: 'gae' },
  group: false,
  critic: true,
  updateEpochs: 4,
  fields: ['gamma', 'lambda'],
});
