/**
 * ReMax (Li et al. 2023): each episode's reward minus the reward of one greedy (argmax) episode
 * from its group's start, played by the same policy (`remaxAdvantages`, algos/remax.ts): a
 * baseline that costs one rollout per group instead of a critic.
 */
import { defineAlgo } from './types.ts';

export const remax = defineAlgo({
  name: 'remax',
  label: 'ReMax (greedy baseline)',
  help: "'remax': each episode's reward minus that of one greedy episode from the same start: one extra rollout per group instead of a critic.",
  advantage: { kind: 'greedy-baseline' },
  collects: ['greedy-baseline'],
  group: true,
  refuses: {
    async: "remax compares each episode with a greedy one from the same policy version; use 'sync'",
  },
  check: (c) =>
    c.dynamicSampling.enabled
      ? [{ path: 'dynamicSampling.enabled', message: "ReMax's baseline is one greedy episode per group: a group with no spread can still beat or trail it, so there is nothing to resample; turn dynamic sampling off" }]
      : [],
  metrics: ['remax/greedy_reward_mean', 'remax/greedy_success_rate'],
  charts: [
    {
      id: 'remax',
      title: 'ReMax baseline',
      help: "remax/greedy_reward_mean: the reward of each group's greedy episode (the most likely action at every step, from the group's start), the baseline ReMax subtracts; reward/mean: the sampled episodes' mean. While the greedy line is below the sampled mean, successes stand out as positive advantages; once it is above, most samples trail it and get pushed down (entropy can rise).",
      lines: [
        { key: 'reward/mean', label: 'sampled', tone: 'primary' },
        { key: 'remax/greedy_reward_mean', label: 'greedy', tone: 'secondary' },
      ],
    },
  ],
});
