/**
 * CISPO (MiniMax-M1, 2025): GRPO's advantages with the importance weight clipped to
 * [1 − clipLow, 1 + clipHigh] and detached, so every token keeps a gradient.
 */
import { grpoAdvantages } from '../advantages.ts';
import { defineAlgo, perGroup } from './types.ts';

export const cispo = defineAlgo({
  name: 'cispo',
  label: 'CISPO (GRPO + clipped IS weight)',
  help: "'cispo': GRPO's advantages, but the importance weight is clipped and detached instead of the update, so rare tokens keep their gradient.",
  advantage: { kind: 'episode', estimate: perGroup((r, g, c) => grpoAdvantages(r, g, { normalizeStd: c.normalizeStd, eps: c.stdEps })) },
  loss: { objective: 'cispo', aggregation: 'token' },
  group: true,
  groupStd: true,
  critic: false,
  updateEpochs: 1,
});
