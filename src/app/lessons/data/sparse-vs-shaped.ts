import type { LessonInput } from '../schema.ts';

/** Lesson (a): a sparse reward vs potential-based shaping on a grid. */
export default {
  id: 'sparse-vs-shaped',
  title: 'Sparse vs shaped reward',
  summary: 'With only a reward at the goal, an agent learns nothing until it stumbles onto the goal by chance. Potential-based shaping pays for every step toward the goal and still leaves the best policy unchanged.',
  badge: 'signal',
  takeaway: 'Shaping buys signal: every step gets a reward that says "closer" or "further", so groups differ long before anyone reaches the goal. Potential-based shaping F = γΦ(s′) − Φ(s) is the safe kind (Ng, Harada and Russell, 1999): over an episode it adds up to Φ(end) − Φ(start) (plus a small γ term), so it cannot change which policy is best. Other hand-made bonuses can, and are then what the agent optimises instead of the task.',
  steps: [
    {
      title: 'Sparse: a reward only at the goal',
      text: 'The empty 8×8 room with 100 steps per episode instead of 256. The only reward is at the green goal, and a random walk gets there about 2% of the time: most groups score 0 everywhere and teach nothing. Watch the Outcome charts and the zero-spread groups: learning crawls.',
      action: 'Press Start and let it run for about 12 iterations.',
      setup: {
        preset: 'grid-empty-8x8-grpo',
        overrides: [
          ['env.kwargs.maxSteps', 100],
          ['iterations', 30],
        ],
      },
      check: {
        all: [
          { metric: 'it', op: '>=', value: 10 },
          { metric: 'episode/success_rate', op: '<=', value: 0.4 },
        ],
        for: 3,
        within: 15,
        says: 'after 10 iterations success is still ≤ 40%, 3 iterations in a row',
      },
    },
    {
      title: 'Shaped: a potential toward the goal',
      text: 'The same room, with potential shaping on (weight 1, Φ = minus the number of steps to the goal): every step closer pays, every step away costs. Open "Reward by term": the potential term carries the signal from the first iteration, and the outcome term follows. Success climbs in a few iterations.',
      action: 'Press Start and compare the success chart with the sparse run.',
      setup: {
        preset: 'grid-empty-8x8-grpo',
        overrides: [
          ['env.kwargs.maxSteps', 100],
          ['shaping.potential.weight', 1],
          ['iterations', 30],
        ],
      },
      check: {
        all: [{ metric: 'episode/success_rate', op: '>=', value: 0.8 }],
        for: 3,
        within: 15,
        says: 'success ≥ 80% for 3 iterations in a row, within 15 iterations',
      },
    },
  ],
} satisfies LessonInput;
