import type { LessonInput } from '../schema.ts';

/** Lesson (c): zero-spread groups give GRPO no gradient; dynamic sampling refills the batch. */
export default {
  id: 'signal-degeneration',
  title: 'Signal degeneration: when every group scores alike',
  summary: 'GRPO learns from differences inside a group. On a task too hard for the current policy every episode of a group fails, all advantages are 0, and the update has no direction. Dynamic sampling throws such groups away and samples more.',
  badge: 'signal',
  takeaway: 'A batch can be full of episodes and still carry no signal: what GRPO learns from is the spread inside each group. Watch groups/frac_zero_std and the Signal badge; when most groups are flat, make the task reachable (shaping, an easier start, a warm start), raise the group size, or resample the flat groups (dynamic sampling, as DAPO does). The same happens at the other end, once every episode of a group succeeds.',
  steps: [
    {
      title: 'Too hard: groups without spread',
      text: 'The empty 8×8 room again, but the agent now has 60 steps to reach the goal instead of 256, and each group is 4 episodes from one start. A random policy gets there well under 1% of the time, so most groups are four failures: the same reward 0 four times, advantage 0 for everyone, no gradient. Open the Dashboard and watch the Signal badge and the "zero-spread groups" chart.',
      action: 'Press Start on the Train view and watch the Signal badge.',
      setup: {
        preset: 'grid-empty-8x8-grpo',
        overrides: [
          ['env.kwargs.maxSteps', 60],
          ['algo.groupSize', 4],
          ['rollout.groups', 8],
          ['iterations', 30],
        ],
      },
      check: { all: [{ metric: 'groups/frac_zero_std', op: '>=', value: 0.8 }], for: 3, within: 15, says: 'at least 80% of groups have zero reward spread for 3 iterations in a row' },
    },
    {
      title: 'Dynamic sampling refills the batch',
      text: 'Same task, same group size, with dynamic sampling on: groups whose rewards are all equal are dropped and fresh groups are sampled, up to 8 rounds per iteration, until the batch holds 8 groups with a success and a failure in them. The zero-spread chart still counts every group sampled (the task is just as hard), but "groups dropped" rises and the learner now trains only on comparisons it can use: after a slow start (many iterations find no success at all and skip their update), success starts to climb.',
      action: 'Press Start, then compare "groups dropped" and the success rate with the previous step.',
      setup: {
        preset: 'grid-empty-8x8-grpo',
        overrides: [
          ['env.kwargs.maxSteps', 60],
          ['algo.groupSize', 4],
          ['rollout.groups', 8],
          ['algo.dynamicSampling.enabled', true],
          ['algo.dynamicSampling.maxRounds', 8],
          // Headless (one seed, one order of episodes) the check completes by iteration 40; in the
          // tab the rollout workers' order varies it (22-34 in CI runs): 60 leaves a slow start room.
          ['iterations', 60],
        ],
      },
      check: {
        all: [
          { metric: 'groups/dropped', op: '>=', value: 1 },
          { metric: 'episode/success_rate', op: 'rise', by: 0.2 },
        ],
        for: 2,
        within: 60,
        says: 'groups are being dropped and the success rate rose by 0.2 from its start, 2 iterations in a row',
      },
    },
  ],
} satisfies LessonInput;
