import type { LessonInput } from '../schema.ts';

/** Lesson: a behaviour the demonstrations lack (stopping once the answer is in hand), found by RL, against demonstrations that had it. */
export default {
  id: 'rl-learns-what-imitation-cannot',
  title: 'What RL learns that imitation can\'t',
  summary: 'Fetch a value from an API (each call costs) and answer within 3 turns. Imitation copies a demonstrator who keeps calling; RL finds, from the success reward alone, that one call is enough. Then the same task with a demonstrator who already stopped.',
  badge: 'outcome',
  takeaway: 'Imitation can only copy what the demonstrations show: a demonstrator that over-calls gives a policy that over-calls and runs out of turns. RL trains on the policy\'s own samples, and the few that happened to answer after one call got the reward: the behaviour spread until calls per episode reached the minimum and success climbed from near 0. With demonstrations that had the behaviour, imitation alone gave it from the first iteration, and RL was left only to sharpen the rest. Agentic RL earns its keep where the behaviour is missing from the data but reachable by sampling.',
  steps: [
    {
      title: 'RL discovers stopping',
      text: 'The warm start (shipped, so RL starts within seconds) imitated a demonstrator that fetches the value again 85% of the time after getting it. Here there are only 3 turns, so a policy that keeps calling never answers: the success rate starts near 0. Nothing in the demonstrations shows stopping. Watch "Tool calls per episode" fall from about 2.7 toward 1 while the success rate climbs: the behaviour moves first, success follows.',
      action: 'Press Start and watch "Tool calls per episode" and the success rate.',
      setup: { preset: 'flaky-stop-discovery', overrides: [] },
      check: {
        all: [
          { metric: 'tools/call_frequency', op: 'fall', by: 0.8, window: 3 },
          { metric: 'episode/success_rate', op: 'rise', by: 0.25, window: 3 },
        ],
        for: 2,
        within: 15,
        says: 'tool calls per episode down by 0.8 and success up by 25 points (means of 3 iterations) from the start, 2 iterations in a row',
      },
    },
    {
      title: 'The same task, demonstrations that stopped',
      text: 'Now the demonstrator calls once and answers (its extra-call probability is 0), everything else as before. Imitation alone carries the behaviour: from the first iteration "Tool calls per episode" sits at about 1, where step 1 started near 2.7 and needed RL to get there. What is left for RL is the rest of the task: the warm start still miscopies some values, so the success rate starts around 0.4 to 0.7 (measured in the CLI on this seed) and RL sharpens it from there.',
      action: 'Press Start and compare the first iterations with step 1\'s.',
      setup: { preset: 'flaky-stop-discovery', overrides: [['warmStart.envKwargs.expertExtraCallProb', 0], ['iterations', 8]] },
      check: {
        all: [{ metric: 'tools/call_frequency', op: '<=', value: 1.2, window: 3 }],
        for: 1,
        within: 3,
        says: 'from the start: ≤ 1.2 tool calls per episode (mean of the first 3 iterations)',
      },
    },
  ],
} satisfies LessonInput;
