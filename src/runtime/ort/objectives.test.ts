/**
 * The train-step graph's alternative objectives, CISPO (−sg(clip(r))·A·log π) and GSPO (the
 * clipped surrogate on the sequence's ratio). Two independent checks each: the loss and metrics
 * against a float64 reference computed from the policy graph's log-probs, and the gradient against
 * the clipped surrogate's (already checked by finite differences) at ratio 1 with the advantage
 * pre-multiplied by what the objective weighs each token's ∇log π with: d/dθ[−r·A′] = −A′·∇log π.
 */
import { describe, expect, it } from 'vitest';
import * as ortNode from 'onnxruntime-node';
import { buildTrainStep } from '../../core/update/trainStep.ts';
import { buildPolicyGraph } from '../../core/models/policyGraph.ts';
import { MlpPolicy } from '../../core/models/mlp.ts';
import { TransformerPolicy } from '../../core/models/transformer.ts';
import { initWeights } from '../../core/models/types.ts';
import { syntheticBatch } from '../../core/update/syntheticBatch.ts';
import { PolicySession, TrainSession, type OrtModule } from './session.ts';
import { maxAbsDiff, rawTrainRunner } from './test/util.ts';

const ort = ortNode as unknown as OrtModule;
const A = 4;
const B = 32;
const model = () => new MlpPolicy({ obsDim: 6, hidden: [8, 8], numActions: A, activation: 'tanh', valueHead: false, policyHeadGain: 1 });
const CLIP = { clipLow: 0.1, clipHigh: 0.15 };

/** A batch whose ratios spread on both sides of the clip range (old log-probs shifted from π's). */
async function batchWithRatios(m: MlpPolicy, seed: number) {
  const w = initWeights(m, seed);
  const spec = buildTrainStep(m, { batch: B, loss: { kind: 'policy-gradient', objective: 'cispo', ...CLIP } });
  const batch = syntheticBatch(spec, seed);
  const policy = await PolicySession.create(ort, buildPolicyGraph(m, B), w);
  const pol = await policy.run({ obs: batch.obs as Float32Array });
  await policy.release();
  const lp = Float64Array.from({ length: B }, (_, i) => pol.logprobs[i * A + (batch.actions as Int32Array)[i]]);
  const shifts = [-0.5, -0.05, 0.05, 0.5];
  batch.old_logprobs = Float32Array.from(lp, (x, i) => x + shifts[i % 4]);
  return { w, batch, lp };
}

describe('CISPO objective', () => {
  it('loss and clip fractions match a float64 reference', async () => {
    const m = model();
    const { w, batch, lp } = await batchWithRatios(m, 7);
    const spec = buildTrainStep(m, { batch: B, loss: { kind: 'policy-gradient', objective: 'cispo', ...CLIP } });
    const trainer = await TrainSession.create(ort, spec, w);
    const r = await trainer.step(batch);
    let pg = 0, low = 0, high = 0, n = 0;
    for (let i = 0; i < B; i++) {
      const ratio = Math.exp(lp[i] - batch.old_logprobs[i]);
      const weight = Math.min(Math.max(ratio, 1 - CLIP.clipLow), 1 + CLIP.clipHigh);
      pg += batch.weights[i] * -weight * batch.advantages[i] * lp[i];
      if (batch.mask[i] === 0) continue;
      n++;
      if (ratio < 1 - CLIP.clipLow) low++;
      if (ratio > 1 + CLIP.clipHigh) high++;
    }
    expect(r.metrics['actor/pg_loss']).toBeCloseTo(pg, 5);
    expect(r.metrics['actor/clipfrac_low']).toBeCloseTo(low / n, 6);
    expect(r.metrics['actor/clipfrac_high']).toBeCloseTo(high / n, 6);
    // Shifts of ±0.5 put a quarter of the tokens outside each side: clipping is exercised.
    expect(low).toBeGreaterThan(0);
    expect(high).toBeGreaterThan(0);
    await trainer.release();
  });

  it('its gradient is the clipped weight times the plain policy gradient, for every token (none is cut)', async () => {
    const m = model();
    const { w, batch, lp } = await batchWithRatios(m, 11);
    const cispo = await rawTrainRunner(ort, buildTrainStep(m, { batch: B, loss: { kind: 'policy-gradient', objective: 'cispo', ...CLIP }, exposeGradients: true }));
    const clip = await rawTrainRunner(ort, buildTrainStep(m, { batch: B, loss: { kind: 'policy-gradient', objective: 'clip', ...CLIP }, exposeGradients: true }));
    const got = await cispo({ weights: w }, batch);
    // Ratio 1 everywhere (old = π), advantage × the clipped weight: the surrogate's gradient is −A′∇log π.
    const weighted = Float32Array.from(batch.advantages as Float32Array, (adv, i) => {
      const ratio = Math.exp(lp[i] - batch.old_logprobs[i]);
      return adv * Math.min(Math.max(ratio, 1 - CLIP.clipLow), 1 + CLIP.clipHigh);
    });
    const want = await clip({ weights: w }, { ...batch, old_logprobs: Float32Array.from(lp), advantages: weighted });
    let scale = 0;
    for (const p of m.params) {
      const g = got[`grad.${p.name}`];
      expect(maxAbsDiff(g, want[`grad.${p.name}`]), p.name).toBeLessThan(1e-5);
      for (const x of g) scale = Math.max(scale, Math.abs(x));
    }
    expect(scale).toBeGreaterThan(1e-3);
    // PPO's clip cuts tokens whose ratio left the region in A's direction; CISPO's gradient differs there.
    const ppo = await clip({ weights: w }, batch);
    const last = m.params[m.params.length - 1].name;
    expect(maxAbsDiff(got[`grad.${last}`], ppo[`grad.${last}`])).toBeGreaterThan(1e-4);
  });
});

describe('GSPO objective', () => {
  const GCLIP = { clipLow: 0.05, clipHigh: 0.08 };
  const loss = (objective: 'gspo' | 'clip') => ({ kind: 'policy-gradient' as const, objective, ...GCLIP });

  /** float64 sequence ratios s_i and the weight s_i·A_i·[not cut] each token's ∇log π gets. */
  function reference(lp: ArrayLike<number>, b: Record<string, Float32Array | Int32Array>, seqOf: (i: number) => number) {
    const n = lp.length;
    const sum = new Map<number, number>();
    const cnt = new Map<number, number>();
    for (let i = 0; i < n; i++) {
      if (b.mask[i] === 0) continue;
      const s = seqOf(i);
      sum.set(s, (sum.get(s) ?? 0) + lp[i] - b.old_logprobs[i]);
      cnt.set(s, (cnt.get(s) ?? 0) + 1);
    }
    let pg = 0, cut = 0;
    const weighted = new Float32Array(n);
    for (let i = 0; i < n; i++) {
      const s = Math.exp((sum.get(seqOf(i)) ?? 0) / (cnt.get(seqOf(i)) ?? 1));
      const adv = b.advantages[i];
      const clipped = Math.min(Math.max(s, 1 - GCLIP.clipLow), 1 + GCLIP.clipHigh);
      pg += b.weights[i] * -Math.min(s * adv, clipped * adv);
      const isCut = (adv > 0 && s > 1 + GCLIP.clipHigh) || (adv < 0 && s < 1 - GCLIP.clipLow);
      if (isCut && b.mask[i] !== 0) cut++;
      weighted[i] = isCut ? 0 : s * adv;
    }
    return { pg, cut, weighted };
  }

  async function check(m: MlpPolicy | TransformerPolicy, batchRows: number, seqOf: (i: number) => number, seed: number) {
    const w = initWeights(m, seed);
    const spec = buildTrainStep(m, { batch: batchRows, loss: loss('gspo'), exposeGradients: true });
    const batch = syntheticBatch(spec, seed);
    const policy = await PolicySession.create(ort, buildPolicyGraph(m, batchRows, m instanceof TransformerPolicy ? m.config.context : undefined), w);
    const obs: Record<string, Int32Array | Float32Array> = m instanceof TransformerPolicy ? { tokens: batch.tokens as Int32Array } : { obs: batch.obs as Float32Array };
    const pol = await policy.run(obs);
    await policy.release();
    const A = m.numActions;
    const lp = Float64Array.from({ length: batch.mask.length }, (_, i) => pol.logprobs[i * A + (batch.actions as Int32Array)[i]]);
    // Sequence ratios spread around the clip range: shift each sequence's old log-probs as a whole.
    const shifts = [-0.3, -0.02, 0.02, 0.3];
    batch.old_logprobs = Float32Array.from(lp, (x, i) => x + shifts[seqOf(i) % 4]);
    const ref = reference(lp, batch, seqOf);
    const gspo = await rawTrainRunner(ort, spec);
    const clip = await rawTrainRunner(ort, buildTrainStep(m, { batch: batchRows, loss: loss('clip'), exposeGradients: true }));
    const got = await gspo({ weights: w }, batch);
    expect(got.pg_loss[0]).toBeCloseTo(ref.pg, 5);
    expect(ref.cut).toBeGreaterThan(0);
    const { seq_ids: _ids, ...rest } = batch;
    const want = await clip({ weights: w }, { ...rest, old_logprobs: Float32Array.from(lp), advantages: ref.weighted });
    let scale = 0;
    for (const p of m.params) {
      expect(maxAbsDiff(got[`grad.${p.name}`], want[`grad.${p.name}`]), p.name).toBeLessThan(2e-5);
      for (const x of got[`grad.${p.name}`]) scale = Math.max(scale, Math.abs(x));
    }
    expect(scale).toBeGreaterThan(1e-3);
  }

  it('flat step rows grouped by seq_ids (MLP): sequence ratios, loss and gradient', async () => {
    await check(model(), B, (i) => Math.floor(i / 4), 13);
  });

  it('a [B, T] lead, one sequence per row (transformer)', async () => {
    const m = new TransformerPolicy({ vocabSize: 11, dModel: 8, nLayers: 1, nHeads: 2, dFF: 16, context: 6, valueHead: false });
    await check(m, 8, (i) => Math.floor(i / 6), 17);
  });
});
