import type { LessonInput } from '../schema.ts';

/** Lesson (a): a sparse reward vs potential-based shaping on a grid. */
export default {
  id: 'sparse-vs-shaped',
  title: 'Sparse vs shaped reward',
  summary: 'With only a reward at the goal, an agent learns nothing until it stumbles onto the goal by chance. Potential-based shaping pays for every step toward the goal and still leaves the best policy unchanged.',
  badge: 'signal',
  takeaway: 'Shaping buys signal: every step gets a reward that says "closer" or "further", so groups differ long before anyone reaches the goal. Potential-based shaping F = γΦ(s′) − Φ(s) is the safe kind (Ng, Harada and Russell, 1999): with γ = 1 it adds up to Φ(end) − Φ(start) over an episode, so it cannot change which policy is best. With γ < 1 (0.99 here) each step also adds (1 − γ)·(−Φ(s)), which pays a little for every step spent far from the goal: that is why the potential term\'s mean sits near +4 in this room while the task\'s own reward (the outcome term) is near 0. Read the outcome term to judge the task. Other hand-made bonuses can, and are then what the agent optimises instead of the task.',
  steps: [
    {
      title: 'Sparse: a reward only at the goal',
      text: 'The empty 8×8 room with 60 steps per episode instead of 256. The only reward is at the green goal, and a random walk almost never gets there: nearly every group scores 0 eight times and teaches nothing. Watch "zero-spread groups" and the Signal badge for the first iterations; let it run on and see how long success takes to leave 0 (about 10 iterations here, when a few lucky groups finally carry a signal).',
      action: 'Press Start and watch the zero-spread groups and the success rate.',
      setup: {
        preset: 'grid-empty-8x8-grpo',
        overrides: [
          ['env.kwargs.maxSteps', 60],
          ['iterations', 30],
        ],
      },
      check: {
        all: [{ metric: 'groups/frac_zero_std', op: '>=', value: 0.7 }],
        for: 3,
        within: 8,
        says: 'at least 70% of groups have no reward spread, 3 iterations in a row'
      },
    },
    {
      title: 'Shaped: a potential toward the goal',
      text: 'The same room, with potential shaping on (weight 1, Φ = minus the number of steps to the goal): every step closer pays, every step away costs. Now episodes that end nearer the goal beat those that end further away, so almost every group has a spread from the very first iteration. Open "Reward by term": the potential term carries the signal, the outcome term follows. On this small room the success curves of the two runs end up close (the agent sees only 7×7 cells around it, so "closer" is hard to act on from far away); the difference is that the shaped run learns from every group from the start.',
      action: 'Press Start and compare the zero-spread groups with the sparse run.',
      setup: {
        preset: 'grid-empty-8x8-grpo',
        overrides: [
          ['env.kwargs.maxSteps', 60],
          ['shaping.potential.weight', 1],
          ['iterations', 30],
        ],
      },
      check: {
        all: [{ metric: 'groups/frac_zero_std', op: '<=', value: 0.1 }],
        for: 3,
        within: 6,
        says: 'at most 10% of groups without reward spread, 3 iterations in a row, from the start'
      },
    },
  ],
} satisfies LessonInput;
