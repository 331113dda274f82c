import type { LessonInput } from '../schema.ts';

/** Lesson (f): a group baseline vs a learned critic on the same grid. */
export default {
  id: 'grpo-vs-ppo',
  title: 'GRPO vs PPO: a group baseline or a critic',
  summary: 'Both push up actions that did better than expected. GRPO gets "expected" from the other episodes of a group that started in the same state; PPO learns a value network that predicts it for every state.',
  takeaway: 'GRPO needs no critic but needs groups: G episodes from one start, so a task that cannot be replayed from a state, or groups that all score alike, leave it without a baseline. PPO pays for a value head and must learn it first (explained variance rises before success does), but then it credits each step separately, which matters on long episodes. Large models mostly use GRPO-style group baselines because a critic as large as the policy is expensive; small agents often do fine with either.',
  steps: [
    {
      title: 'GRPO: 8 groups of 8 from one start each',
      text: 'The first preset: GRPO on the empty 8×8 room. Each episode\'s advantage is its reward minus its group\'s mean, divided by the group\'s spread: the same advantage for every step of the episode. Open the Groups tab to see the groups and their advantages.',
      action: 'Press Start and note how many iterations success needs to pass 80%.',
      setup: { preset: 'grid-empty-8x8-grpo', overrides: [['iterations', 40]] },
      check: { all: [{ metric: 'episode/success_rate', op: '>=', value: 0.8 }], for: 3, within: 40, says: 'success ≥ 80% for 3 iterations in a row' },
    },
    {
      title: 'PPO: a critic and GAE',
      text: 'Same room, same batch (64 episodes), now PPO: a value head predicts the return from each state and GAE(γ 0.99, λ 0.95) gives each step its own advantage. Watch the Critic charts: explained variance climbs from 0 as the value head learns which states are near the goal, and success follows.',
      action: 'Press Start and watch "explained variance" next to success.',
      setup: {
        preset: 'grid-empty-8x8-grpo',
        overrides: [
          ['algo.algo', 'ppo'],
          ['rollout.episodes', 64],
          ['algo.updateEpochs', 4],
          ['iterations', 40],
        ],
      },
      check: {
        all: [
          { metric: 'episode/success_rate', op: '>=', value: 0.8 },
          { metric: 'critic/explained_variance', op: '>=', value: 0.2 },
        ],
        for: 3,
        within: 40,
        says: 'success ≥ 80% and the critic explains ≥ 20% of the return variance, 3 iterations in a row',
      },
    },
  ],
} satisfies LessonInput;
