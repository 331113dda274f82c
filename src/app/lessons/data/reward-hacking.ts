import type { LessonInput } from '../schema.ts';

/** Lesson (g): a shaping term that pays for something other than the task gets farmed; the potential-based form of the same term does not. */
export default {
  id: 'reward-hacking',
  title: 'Reward hacking: the agent optimises what you pay for',
  summary: "A reward-lab term pays +0.1 whenever the agent ends a step closer to the goal and nothing when it moves away. It helps at first, then the agent learns that walking back and forth pays more than arriving. The same term written potential-based cannot be farmed.",
  badge: 'reward',
  takeaway: "The policy maximises the reward you wrote, not the task you meant. A shaping term that pays for a change without charging for its reverse can be collected forever, and ending the episode (reaching the goal) stops the payments. Potential-based shaping, F = γΦ(s′) − Φ(s), telescopes over any loop to zero, so it changes how fast the agent learns but not what is optimal. Read the shaped return next to the task's own success: when the first climbs and the second falls, the reward is being gamed.",
  steps: [
    {
      title: 'A term that pays for getting closer',
      text: "The empty 8×8 room with GRPO and one reward-lab term, 'closer' (open the Reward lab to read it). Success climbs for a few iterations, then falls toward 0 while the mean reward keeps rising: the episodes grow long again because the agent now paces near the goal instead of entering it. Watch the Reward badge turn to 'gamed' and the 'Shaped vs task reward' chart split apart.",
      action: 'Press Start; watch success, the mean reward and the Reward badge.',
      setup: { preset: 'grid-empty-8x8-hackable', overrides: [] },
      check: {
        all: [
          { metric: 'reward/mean', op: 'rise', by: 2.5 },
          { metric: 'episode/success_rate', op: '<=', value: 0.25 },
        ],
        for: 3,
        within: 25,
        says: 'the mean reward 2.5 above its start while success is at most 25%, 3 iterations in a row',
      },
    },
    {
      title: 'The same term, potential-based',
      text: "Now 'closer' pays 0.1 × (steps to the goal before − after): moving away costs exactly what moving closer paid, so pacing earns nothing. Success climbs to 100% and the shaped return rises with it; the Reward badge stays 'aligned'.",
      action: 'Press Start and compare the Reward section with the first run.',
      setup: { preset: 'grid-empty-8x8-potential', overrides: [] },
      check: {
        all: [{ metric: 'episode/success_rate', op: '>=', value: 0.9 }],
        for: 3,
        within: 25,
        says: 'success ≥ 90% for 3 iterations in a row',
      },
    },
  ],
} satisfies LessonInput;
