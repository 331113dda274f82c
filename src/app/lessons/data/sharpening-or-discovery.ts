import type { LessonInput } from '../schema.ts';
import { SMALL_CALC } from './rlvr-vs-agentic.ts';

/** Held-out pass@1 and pass@k every 10 iterations: 32 questions × 4 samples (128 episodes, about one iteration's rollouts). */
const HELD_OUT = [
  ['heldOut.every', 10],
  ['heldOut.questions', 32],
  ['heldOut.k', 4],
] as [string, number][];

/** Lesson: does RL on the calculator teach new answers (pass@k up) or sharpen old ones (pass@1 up to pass@k)? */
export default {
  id: 'sharpening-or-discovery',
  title: 'Sharpening or discovery: pass@1 and pass@k',
  summary: 'Held-out pass@1 (how often one sample is right) and pass@k (how many questions any of k samples gets right), before and during GRPO on the calculator, and the zero-spread groups that explain what RL cannot fix.',
  badge: 'signal',
  takeaway: 'On a task the warm start already half solves, GRPO mostly sharpens: pass@1 climbs toward pass@k, and pass@k itself barely moves, because a question no sample solves gives a group of identical failures with zero spread: no advantage, no gradient. RL adds a skill only where some samples succeed and others fail (Yue et al. 2025 measured the same for RLVR on large models). The discovery presets get their gain by making the missing behaviour reachable by sampling.',
  steps: [
    {
      title: 'pass@1 and pass@k, before and after RL',
      text: 'The small calculator (2-digit operands, d 48) with its warm start shipped, so RL starts within seconds. Every 10 iterations, before that update, the policy answers 32 held-out questions 4 times each at temperature 1. The "Held-out pass@1 and pass@k" chart draws both; its first point is the warm start before any RL. pass@k says which questions the policy can solve at all, pass@1 how reliably. Which of the two does RL move?',
      action: 'Press Start and compare the chart\'s first points (before RL) with its last.',
      setup: { preset: 'calc-grpo', overrides: [...SMALL_CALC, ...HELD_OUT, ['iterations', 30]] },
      check: {
        all: [
          { metric: 'it', op: '>=', value: 21 },
          { metric: 'eval/pass_at_k', op: '>=', value: 0.8 },
        ],
        for: 1,
        within: 30,
        says: 'the held-out measurement after 20 RL updates is in, with pass@k ≥ 80%',
      },
    },
    {
      title: 'Confident errors give no signal',
      text: 'The full calculator preset (4-digit operands, its 800-step warm start shipped) with dynamic sampling off, so every group stays in the batch. A group is 8 samples of one question; when all 8 agree (all right, or all confidently wrong) its rewards have zero spread and GRPO\'s advantage is 0 for every sample: that question teaches nothing. The "Zero-spread groups" chart is the share of such groups. The questions the policy always gets wrong sit in that share for good: RL never sees a success on them, so pass@k cannot rise there.',
      action: 'Press Start and watch the "Zero-spread groups" chart beside the success rate.',
      setup: { preset: 'calc-grpo', overrides: [...HELD_OUT, ['algo.dynamicSampling.enabled', false], ['iterations', 15]] },
      check: {
        all: [{ metric: 'groups/frac_zero_std', op: '>=', value: 0.3, window: 3 }],
        for: 3,
        within: 15,
        says: 'zero-spread groups ≥ 30% (mean of 3 iterations), 3 iterations in a row',
      },
    },
  ],
} satisfies LessonInput;
