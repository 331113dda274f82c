import { describe, expect, it } from 'vitest';
import { computeAdvantages } from '../../update/batchAdvantages.ts';
import type { RolloutBatch } from '../../update/batch.ts';
import { defaultsFor } from '../config.ts';
import { EMA_BASELINE_INIT } from '../advantages.ts';
import { sequenceAdvantages, unequalGroupAdvantages } from './index.ts';

const close = (got: ArrayLike<number>, want: number[], digits = 10): void => {
  expect(got.length).toBe(want.length);
  want.forEach((w, i) => expect(got[i]).toBeCloseTo(w, digits));
};

/**
 * veRL's masked_whiten written out over explicit token rows, as a reference independent of the
 * weighted form the estimator uses: mean and Bessel variance over the tokens where mask = 1.
 */
function whitenTokens(values: number[][], mask: number[][]): number[][] {
  const sel = values.flatMap((row, b) => row.filter((_, t) => mask[b][t] === 1));
  const mu = sel.reduce((s, x) => s + x, 0) / sel.length;
  const v = sel.reduce((s, x) => s + (x - mu) ** 2, 0) / (sel.length - 1);
  return values.map((row) => row.map((x) => (x - mu) / Math.sqrt(v + 1e-8)));
}

describe('REINFORCE++ (group baseline, batch-normalised) advantages', () => {
  const cfg = { ...defaultsFor('reinforcepp'), groupSize: 2 };

  it('hand-worked: group mean out, then whitened over the batch positions', () => {
    // Groups [1, 0] and [1, 1]: means 0.5 and 1 → a = [0.5, −0.5, 0, 0]. Positions 2, 3, 1, 4 (10
    // in all): μ = (2·0.5 − 3·0.5)/10 = −0.05; deviations 0.55, −0.45, 0.05, 0.05;
    // σ² = (2·0.3025 + 3·0.2025 + 0.0025 + 4·0.0025)/9 = 1.225/9 = 49/360.
    const s = Math.sqrt(49 / 360 + 1e-8);
    const r = sequenceAdvantages(cfg, [1, 0, 1, 1], EMA_BASELINE_INIT, [2, 3, 1, 4]);
    close(r.advantages, [0.55 / s, -0.45 / s, 0.05 / s, 0.05 / s]);
    // Without positions (re-scoring) every episode counts once: a = [0.5, −0.5, 0, 0], μ = 0, σ² = 0.5/3.
    const once = sequenceAdvantages(cfg, [1, 0, 1, 1]).advantages;
    const s1 = Math.sqrt(0.5 / 3 + 1e-8);
    close(once, [0.5 / s1, -0.5 / s1, 0, 0]);
  });

  it('equals masked whitening of the broadcast advantages over explicit tokens (veRL)', () => {
    const rewards = [0.9, 0.1, 0.4, 0.3, 0.3, 0.8];
    const mask = [
      [1, 1, 0, 0],
      [1, 1, 1, 1],
      [1, 0, 0, 0],
      [0, 1, 1, 0],
      [1, 1, 1, 0],
      [0, 0, 0, 1],
    ];
    const G = 3;
    const centred = rewards.map((x, i) => {
      const g = rewards.slice(Math.floor(i / G) * G, Math.floor(i / G) * G + G);
      return x - g.reduce((a, b) => a + b, 0) / G;
    });
    const want = whitenTokens(
      mask.map((row, b) => row.map(() => centred[b])),
      mask,
    ).map((row, b) => row[mask[b].indexOf(1)]);
    const got = sequenceAdvantages({ ...cfg, groupSize: G }, rewards, EMA_BASELINE_INIT, mask.map((row) => row.reduce((a, b) => a + b, 0)));
    close(got.advantages, want, 12);
  });

  it('no per-group std: scaling one group\'s spread changes the others\' advantages (one batch scale)', () => {
    const a = sequenceAdvantages(cfg, [1, 0, 1, 0]).advantages;
    const b = sequenceAdvantages(cfg, [1, 0, 4, 0]).advantages;
    // GRPO would give ±0.707 to both groups in both batches; here the wider second group shrinks the first.
    expect(a[0]).toBeCloseTo(a[2], 12);
    expect(b[0]).toBeLessThan(b[2] / 3);
  });

  it('unequal groups (prompt pool): all-equal groups give 0 before whitening, a lone episode keeps its reward', () => {
    // Groups [2, 2, 2] → 0 each; [1] → 1 (no mean to subtract); [0, 1] → −0.5, 0.5.
    // a = [0, 0, 0, 1, −0.5, 0.5]: μ = 1/6, σ² = (3·(1/6)² + (5/6)² + (2/3)² + (1/3)²)/5 = (1/12 + 25/36 + 4/9 + 1/9)/5 = 4/15.
    const s = Math.sqrt(4 / 15 + 1e-8);
    const got = unequalGroupAdvantages(cfg, [2, 2, 2, 1, 0, 1], [3, 1, 2]);
    close(got, [-1 / 6 / s, -1 / 6 / s, -1 / 6 / s, 5 / 6 / s, -2 / 3 / s, 1 / 3 / s]);
  });

  it('on a token batch, weighs each episode by its policy tokens', () => {
    // Two sequences of T = 3 training positions: 2 and 1 policy tokens; rewards 1, 0 in one group.
    // a = [0.5, −0.5] over 3 positions: μ = 1/6, σ² = (2·(1/3)² + (2/3)²)/2 = 1/3.
    const b = { n: 2, starts: Int32Array.from([0, 3]), lengths: Int32Array.from([3, 3]), size: 6, mask: Float32Array.from([1, 1, 0, 0, 1, 0]), scores: Float64Array.from([1, 0]) } as unknown as RolloutBatch;
    const r = computeAdvantages(cfg, b, EMA_BASELINE_INIT, { groupSize: 2 });
    const s = Math.sqrt(1 / 3 + 1e-8);
    close(r.adv, [1 / 3 / s, 1 / 3 / s, 0, 0, -2 / 3 / s, 0]);
  });
});
