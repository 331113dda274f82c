/**
 * The pieces together, as the trainer will chain them on the first (on-policy) update, where
 * ρ = 1 and the surrogate reduces to −Σ w_t·A_t. Shows what the aggregation choice does.
 */
import { describe, expect, it } from 'vitest';
import { drGrpoAdvantages } from './advantages.ts';
import { aggregationWeightsOf } from '../update/batchAdvantages.ts';
import { broadcast, paddedLayout } from '../update/batch.ts';
import { policyLoss } from './losses.ts';

describe('rewards -> advantages -> tokens -> loss', () => {
  // One group of two episodes: rewards [1, 0] -> Dr.GRPO advantages [0.5, −0.5].
  // Seq 0 (the success) has 3 policy tokens, seq 1 (the failure) has 1. B = 2, T = 4.
  const batch = paddedLayout(2, 4, Float32Array.from([0, 1, 1, 1, 0, 1, 0, 0]));
  const adv = broadcast(batch, drGrpoAdvantages([1, 0], 2));
  const weights = (aggregation: 'token' | 'sequence' | 'constant') => aggregationWeightsOf(batch, { aggregation, aggregationLen: null });
  const zeros = new Float64Array(8);
  const loss = (w: Float64Array) =>
    policyLoss({ logp: zeros, oldLogp: zeros, advantages: adv, weights: w, mask: batch.mask }, { clipLow: 0.2, clipHigh: 0.28, klCoef: 0, klEstimator: 'k3', klMode: 'loss', entropyCoef: 0 }).pgLoss;

  it('token-level: −(0.5·3 − 0.5·1)/4 = −0.25 (the longer sequence weighs more)', () => {
    expect(loss(weights('token'))).toBeCloseTo(-0.25, 12);
  });

  it('sequence-level: −(0.5 − 0.5)/2 = 0 (per-token push is 1/len: long sequences diluted)', () => {
    expect(loss(weights('sequence'))).toBeCloseTo(0, 12);
  });

  it('constant (Dr.GRPO), L = T = 4: −(1.5 − 0.5)/(2·4) = −0.125', () => {
    expect(loss(weights('constant'))).toBeCloseTo(-0.125, 12);
  });
});
