/**
 * CISPO's objective in the train-step graph: −sg(clip(r, 1 − ε_low, 1 + ε_high))·A·log π.
 * Two independent checks: the loss and metrics against a float64 reference computed from the
 * policy graph's log-probs, and the gradient against the clipped surrogate's (already checked by
 * finite differences) at ratio 1 with the advantage pre-multiplied by the clipped weight, which is
 * the same gradient by construction: d/dθ[−r·A′] = −A′·∇log π at r = 1.
 */
import { describe, expect, it } from 'vitest';
import * as ortNode from 'onnxruntime-node';
import { buildTrainStep } from '../../core/update/trainStep.ts';
import { buildPolicyGraph } from '../../core/models/policyGraph.ts';
import { MlpPolicy } from '../../core/models/mlp.ts';
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
