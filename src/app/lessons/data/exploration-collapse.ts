import type { LessonInput } from '../schema.ts';

/** Lesson (b): a high learning rate with no entropy bonus collapses the policy before it solves the task. */
export default {
  id: 'exploration-collapse',
  title: 'Exploration collapse: certain too early',
  summary: 'A learning rate a hundred times too high and no entropy bonus push all probability onto whatever the first batches happened to reward. Entropy falls to almost 0 before the task is solved, and then nothing new is ever tried.',
  badge: 'exploration',
  takeaway: 'Entropy is the room the policy leaves itself to find something better. Falling entropy is expected once a task is solved; falling entropy with success still low is a collapse: the policy keeps repeating one behaviour and every group scores alike. Protect exploration with a smaller learning rate, an entropy bonus or a higher clip (clip-higher, as DAPO does), and read the Exploration badge together with success.',
  steps: [
    {
      title: 'Too fast, no entropy bonus',
      text: 'The empty 8×8 room with GRPO, a learning rate of 0.1 (the preset uses 0.001) and entropy coef 0. Watch the Entropy chart and the Exploration badge: after one or two updates entropy is close to 0 and success is stuck near 0. The policy has become sure of a habit (turning in place, walking into a wall) that rarely reaches the goal.',
      action: 'Press Start and watch entropy and the Exploration badge.',
      setup: {
        preset: 'grid-empty-8x8-grpo',
        overrides: [
          ['algo.lr', 0.1],
          ['algo.entropyCoef', 0],
          ['iterations', 30],
        ],
      },
      check: {
        all: [
          { metric: 'actor/entropy', op: '<=', value: 0.2 },
          { metric: 'episode/success_rate', op: '<=', value: 0.5 },
        ],
        for: 3,
        within: 10,
        says: 'entropy ≤ 0.2 nats (about 10% of its maximum, ln 7) while success ≤ 50%, 3 iterations in a row',
      },
    },
    {
      title: 'A sane step size keeps options open',
      text: 'The preset as it was meant: learning rate 0.001 and an entropy bonus of 0.01. Entropy now falls slowly, and only as success rises: the policy narrows because it found the goal, not before. The Exploration badge stays healthy and ends at "converged".',
      action: 'Press Start and compare the Entropy chart with the previous run.',
      setup: {
        preset: 'grid-empty-8x8-grpo',
        overrides: [['iterations', 40]],
      },
      check: {
        all: [
          { metric: 'episode/success_rate', op: '>=', value: 0.8 },
        ],
        for: 3,
        within: 40,
        says: 'success ≥ 80% for 3 iterations in a row',
      },
    },
  ],
} satisfies LessonInput;
