/**
 * Constrained decoding on the rollout side and in the batch: sampling under a mask, the masked
 * log-prob the scorers recompute, and where each token's mask lands in the learner's feed.
 */
import { describe, expect, it } from 'vitest';
import { sampleRow } from './categorical.ts';
import { Rng } from '../util/rng.ts';
import { maskedLogprob } from '../update/sequenceScorer.ts';
import { tokenRolloutBatch } from '../update/batch.ts';
import { writeLogitMask } from '../update/sequenceFeed.ts';
import { LOGIT_MASKED } from '../update/trainStep.ts';
import type { TokenEpisode } from './tokenEpisode.ts';

const bits = (...ids: number[]) => {
  const m = new Uint32Array(1);
  for (const i of ids) m[0] |= 1 << i;
  return m;
};

describe('sampling under a mask', () => {
  // Logits ln [1, 2, 3, 4]: unmasked probs 0.1 .. 0.4. Allowing {1, 3}: probs 2/6 and 4/6.
  const logits = Float32Array.from([1, 2, 3, 4], Math.log);
  const allowed = bits(1, 3);

  it('draws only allowed tokens, in the renormalised proportions', () => {
    const rng = new Rng(3);
    const counts = [0, 0, 0, 0];
    for (let i = 0; i < 30000; i++) counts[sampleRow(logits, 0, 4, rng, new Float64Array(4), 1, allowed).action]++;
    expect(counts[0] + counts[2]).toBe(0);
    expect(counts[3] / 30000).toBeCloseTo(2 / 3, 2);
  });

  it('reports the masked log-prob and entropy (hand-worked), not the unmasked ones', () => {
    const s = sampleRow(logits, 0, 4, new Rng(1), new Float64Array(4), 0, allowed);
    expect(s.action).toBe(3);
    expect(s.logprob).toBeCloseTo(Math.log(2 / 3), 6);
    const h = -(1 / 3) * Math.log(1 / 3) - (2 / 3) * Math.log(2 / 3);
    expect(s.entropy).toBeCloseTo(h, 6);
    // Unmasked, greedy would also pick 3, but with log-prob ln 0.4: the wrong variant.
    expect(Math.abs(s.logprob - Math.log(0.4))).toBeGreaterThan(0.4);
  });

  it('the scorers renormalise a log-prob row over the same mask', () => {
    const logp = Float64Array.from([1, 2, 3, 4], (x) => Math.log(x / 10));
    expect(maskedLogprob(logp, 0, 4, 1, allowed, 0)).toBeCloseTo(Math.log(1 / 3), 12);
    expect(maskedLogprob(logp, 0, 4, 1, undefined, 0)).toBeCloseTo(Math.log(0.2), 12);
  });
});

describe('masks in the batch and the learner feed', () => {
  // An episode of 4 tokens: <bos>, an env token, then two policy tokens drawn under masks A and B.
  const A = bits(2, 5);
  const B = bits(7);
  const full = 0xffffffff;
  const ep = {
    envId: 't', seed: 0, group: 0,
    tokens: Int32Array.of(1, 3, 5, 7),
    lossMask: Uint8Array.of(0, 0, 1, 1),
    logprobs: new Float32Array(4), entropies: new Float32Array(4), versions: Int32Array.of(-1, -1, 0, 0),
    allow: Uint32Array.of(full, full, A[0], B[0]),
    rewards: Float64Array.of(1), infos: [{}], actions: ['x'], observations: ['o', 'p'],
    forcedEnds: 0, turns: 1, terminated: true, truncated: false, contextLimited: false, success: true, transcript: '',
  } as TokenEpisode;

  it('position t holds the mask of token t + 1 (the action it predicts); padding allows all', () => {
    const b = tokenRolloutBatch([ep], 6, 8);
    if (b.feed.kind !== 'sequences') throw new Error('sequences');
    const allow = b.feed.allow!;
    // Past the episode: every one of the V = 8 tokens allowed (bits 0..7).
    expect(Array.from(allow)).toEqual([full, A[0], B[0], 0xff, 0xff, 0xff]);
    expect(Array.from(b.mask)).toEqual([0, 1, 1, 0, 0, 0]);
  });

  it('a batch mixing constrained and unconstrained episodes is refused', () => {
    expect(() => tokenRolloutBatch([ep, { ...ep, allow: undefined }], 6, 8)).toThrow(/all or none/);
  });

  it('the additive logit mask is 0 on allowed tokens and LOGIT_MASKED elsewhere', () => {
    const out = new Float32Array(2 * 8);
    writeLogitMask(out, 0, Uint32Array.of(A[0], B[0]), 0, 2, 8);
    const row = (k: number) => Array.from(out.subarray(k * 8, (k + 1) * 8));
    expect(row(0)).toEqual([0, 1, 2, 3, 4, 5, 6, 7].map((v) => (v === 2 || v === 5 ? 0 : LOGIT_MASKED)));
    expect(row(1)).toEqual([0, 1, 2, 3, 4, 5, 6, 7].map((v) => (v === 7 ? 0 : LOGIT_MASKED)));
  });
});
