/**
 * CISPO (MiniMax-M1, 2025): GRPO's advantages with the importance weight clipped to
 * [1 − clipLow, 1 + clipHigh] and detached, so every token keeps a gradient.
 */
import { grpoEstimator } from './grpo.ts';
import { defineAlgo } from './types.ts';

export const cispo = defineAlgo({
  name: 'cispo',
  label: 'CISPO (GRPO + clipped IS weight)',
  help: "'cispo': GRPO's advantages, but the importance weight is clipped and detached instead of the update, so rare tokens keep their gradient.",
  advantage: { kind: 'episode', estimate: grpoEstimator },
  loss: { objective: 'cispo' },
  group: true,
  groupStd: true,
});
