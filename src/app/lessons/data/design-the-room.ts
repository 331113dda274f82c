import type { LessonInput } from '../schema.ts';

/** Lesson 9: the student draws a room where a reward only at the goal fails, then rescues it with potential shaping. */
export default {
  id: 'design-the-room',
  title: 'Design the room',
  summary: 'Draw your own grid world in the Studio: a room where a reward only at the goal teaches nothing, because a random walk never gets there. Then train on it twice: sparse, and with potential-based shaping.',
  badge: 'signal',
  takeaway: 'Whether a sparse reward can be learned is a property of the room, and you can measure it before training: if a random agent almost never reaches the goal, almost every group scores the same and GRPO has nothing to push on. A potential toward the goal (minus the actions still needed to reach it) gives every step a signal, and because it is potential-based it does not change which policy is best. Walls that force a detour are what make a room hard: the straight-line distance lies, the walking distance does not.',
  steps: [
    {
      title: 'Draw a room sparse reward cannot crack',
      text: 'Open the Studio and paint a room whose goal is far from the start, behind walls: the shortest path must take at least 12 steps, and a random agent may reach the goal in at most 1 of 100 episodes. The Map tab shows both as you paint (press Random agent to see its success rate). Rooms, corridors and doorways help; so does lava. The four-rooms example passes; try making your own.',
      action: 'Open the Studio and paint until the check below ticks.',
      setup: { preset: 'grid-map-grpo-shaped', studioMap: true },
      check: {
        map: { minSteps: 12, randomSuccessAtMost: 0.01 },
        says: 'the shortest solution takes at least 12 steps and a random agent succeeds in at most 1% of 100 episodes',
      },
    },
    {
      title: 'Sparse: a reward only at the goal',
      text: 'Your room, with GRPO and the reward only at the goal (the potential weight set to 0). Each group plays 8 episodes from the same start; when none of them reaches the goal they all score 0, the group has no spread, and its advantages are all zero. Watch "zero-spread groups" stay near 100% and the success rate stay near 0.',
      action: 'Press Start and watch the zero-spread groups.',
      setup: {
        preset: 'grid-map-grpo-shaped',
        studioMap: true,
        overrides: [
          ['shaping.potential.weight', 0],
          ['iterations', 20],
        ],
      },
      check: {
        all: [{ metric: 'groups/frac_zero_std', op: '>=', value: 0.75 }],
        for: 5,
        within: 10,
        says: 'at least 75% of groups have no reward spread, 5 iterations in a row',
      },
    },
    {
      title: 'Shaped: the potential rescues it',
      text: 'The same room with potential shaping on (weight 1, Φ = minus the fewest actions still needed to reach the goal; dying in lava ends at the lowest Φ, so it never pays): every step closer pays, every step away costs, so episodes that get nearer the goal beat those that do not, and groups have a spread from the first iteration. On the four-rooms example the success rate first reached 90% at iteration 36 (seeds 2 and 3: 43, 50); a harder room takes longer.',
      action: 'Press Start and watch the success rate climb.',
      setup: {
        preset: 'grid-map-grpo-shaped',
        studioMap: true,
        overrides: [['iterations', 60]],
      },
      check: {
        all: [{ metric: 'episode/success_rate', op: '>=', value: 0.8, window: 3 }],
        for: 2,
        within: 60,
        says: 'success rate at least 80% (mean of 3 iterations), 2 iterations in a row',
      },
    },
  ],
} satisfies LessonInput;
