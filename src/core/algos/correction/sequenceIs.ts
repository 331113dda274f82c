import { perPosition, safeExp, sequenceLogRatioSums, type IsDescriptor } from './types.ts';

/**
 * Sequence-level truncated IS (veRL rollout_is 'sequence'; TRL 'sequence_truncate'): every token
 * of a sequence takes min(Π_t ρ_t, cap), the product over the sequence's trained tokens.
 * Unbiased for the sequence's likelihood ratio before truncation; its variance grows with length.
 */
export const sequenceIs: IsDescriptor = {
  name: 'sequence',
  kind: 'is',
  help: 'sequence-level truncated IS: every token × min(Π π_old/μ over the episode, cap)',
  perSequence: true,
  ratios(b) {
    return perPosition(b, Array.from(sequenceLogRatioSums(b), safeExp));
  },
};
