/**
 * Dr.GRPO (Liu et al. 2025): GRPO's numerator only (no std division) and a constant loss
 * normaliser, so neither nearly-solved groups nor short answers are up-weighted.
 */
import { drGrpoAdvantages } from '../advantages.ts';
import { defineAlgo, perGroup } from './types.ts';

export const drgrpo = defineAlgo({
  name: 'drgrpo',
  label: 'Dr. GRPO',
  help: "'drgrpo': GRPO without the std division and with a constant loss normaliser (no length or difficulty bias).",
  advantage: { kind: 'episode', estimate: perGroup((r, g) => drGrpoAdvantages(r, g)) },
  loss: { aggregation: 'constant' },
  group: true,
  check: (c) =>
    [
      ...(c.normalizeStd ? [{ path: 'normalizeStd', message: "Dr.GRPO does not divide by the group std; use algo 'grpo' for that" }] : []),
      ...(c.aggregation === 'sequence' ? [{ path: 'aggregation', message: "Dr.GRPO removes per-sequence length normalisation; use 'constant' (or 'token')" }] : []),
    ],
});
