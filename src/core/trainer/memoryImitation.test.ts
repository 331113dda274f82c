/**
 * The imitation batch with an auxiliary loss on observation tokens (`observationWeight`,
 * used by grid-memory-ppo): hand-worked weights on two short episodes, and weight 0 is the
 * action-only batch exactly (other presets' warm starts stay bit-identical).
 */
import { describe, expect, it } from 'vitest';
import { imitationRows } from './imitation.ts';
import { shiftedBatch } from '../update/batch.ts';

// Token ids are arbitrary; lossMask marks the expert's action tokens (mask of token t + 1 sits
// at row position t after the shift).
const eps = [
  { tokens: Int32Array.from([1, 2, 3, 4, 5]), lossMask: Uint8Array.from([0, 0, 1, 1, 0]) },
  { tokens: Int32Array.from([1, 6, 7]), lossMask: Uint8Array.from([0, 0, 1]) },
];
const T = 6;

describe('imitationRows', () => {
  it('observationWeight 0 is the action-only batch, bit for bit', () => {
    const r = imitationRows(eps, T, 0);
    const ref = shiftedBatch(eps.map((e) => ({ ...e, logprobs: new Float32Array(e.tokens.length) })), T);
    expect(r.tokens).toEqual(ref.tokens);
    expect(r.actions).toEqual(ref.actions);
    expect(r.mask).toEqual(ref.mask);
    // 3 action tokens in the batch: positions 1, 2 of row 0 and 1 of row 1.
    expect(Array.from(r.weights)).toEqual([0, 1 / 3, 1 / 3, 0, 0, 0, 0, 1 / 3, 0, 0, 0, 0].map(Math.fround));
  });

  it('trains the env tokens with weight w / (their count), and nothing past an episode', () => {
    const r = imitationRows(eps, T, 0.5);
    // Observation targets: row 0 positions 0 (token 2) and 3 (token 5); row 1 position 0 (token 6).
    const o = 0.5 / 3;
    const a = 1 / 3;
    expect(Array.from(r.weights)).toEqual([o, a, a, o, 0, 0, o, a, 0, 0, 0, 0].map(Math.fround));
    expect(Array.from(r.mask)).toEqual([1, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0, 0]);
    expect(Array.from(r.actions)).toEqual([2, 3, 4, 5, 0, 0, 6, 7, 0, 0, 0, 0]);
  });
});
