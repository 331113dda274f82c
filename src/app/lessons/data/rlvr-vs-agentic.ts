import type { LessonInput } from '../schema.ts';

/** The small calculator setup both token lessons share: 2-digit operands, a short warm start. */
const SMALL_CALC = [
  ['env.kwargs.minDigits', 2],
  ['env.kwargs.maxDigits', 2],
  ['model.dModel', 48],
  ['model.dFF', 192],
  ['model.context', 96],
  ['warmStart.steps', 300],
  ['algo.lr', 0.0003],
  ['rollout.maxActionTokens', 16],
] as [string, number][];

export { SMALL_CALC };

/** Lesson (e): one-turn verifiable reward vs multi-turn tool use on the same calculator task. */
export default {
  id: 'rlvr-vs-agentic',
  title: 'RLVR vs agentic RL on the calculator',
  summary: 'The same question, "what is 47 * 83?", with the same exact-answer reward, answered in one turn (RLVR: a single verifiable reward) or with a calc(...) tool call over several turns (agentic RL).',
  takeaway: 'Agentic RL changes the unit of learning from one answer to a trajectory: the policy must choose actions, read tool replies and decide when to stop. Rollouts get longer (more turns and tokens), the reward arrives at the end of several actions (credit assignment over turns), and the KV cache is reused across turns instead of starting over. In return, a model far too small to multiply in its head solves the task by calling a tool.',
  steps: [
    {
      title: 'RLVR: one turn, the answer from memory',
      text: 'A tiny transformer (d 48) first imitates the expert for 300 steps, then trains by GRPO. With one turn per episode it has to write answer(...) straight away: there is no turn left to read a tool reply. It cannot multiply two 2-digit numbers in its head (the warm start, cut to one turn, taught it only to reach for the tool), so every episode fails: the success reward never differs inside a group, and the only spread left in the rewards is the small format penalty for malformed calls. Watch turns per episode (1), the success rate (0) and the "Reward by term" chart.',
      action: 'Press Start; the warm start takes a minute or two before RL begins.',
      setup: { preset: 'calc-grpo', overrides: [...SMALL_CALC, ['env.kwargs.maxTurns', 1], ['iterations', 10]] },
      check: {
        all: [
          { metric: 'episode/turns_mean', op: '<=', value: 1 },
          { metric: 'episode/success_rate', op: '<=', value: 0.02 },
        ],
        for: 3,
        within: 10,
        says: 'one turn per episode and success ≤ 2%, 3 iterations in a row',
      },
    },
    {
      title: 'Agentic: call the tool, read, answer',
      text: 'Up to 4 turns: the policy calls calc(47*83), the env replies "result: 3901", and the policy copies it into answer(3901). Watch turns per episode (about 2), tool calls per episode, episode length in tokens, and the KV-cache hit rate: the second turn reuses the keys and values of the first instead of recomputing them. The reward is the same exact-answer reward, but it now depends on two actions.',
      action: 'Press Start and compare turns, length and success with the one-turn run.',
      setup: { preset: 'calc-grpo', overrides: [...SMALL_CALC, ['iterations', 10]] },
      check: {
        all: [
          { metric: 'episode/turns_mean', op: '>=', value: 1.8 },
          { metric: 'tools/call_frequency', op: '>=', value: 0.8 },
          { metric: 'episode/success_rate', op: '>=', value: 0.4 },
        ],
        for: 3,
        within: 10,
        says: '≥ 1.8 turns and ≥ 0.8 tool calls per episode with success ≥ 40%, 3 iterations in a row',
      },
    },
  ],
} satisfies LessonInput;
