/**
 * Train-step graphs: whole-model gradients vs finite differences, Adam(W) + clipping vs a JS
 * reference, loss/metric values vs a float64 JS reference computed from the policy graph,
 * the NaN guard, and a short imitation run that must learn.
 */
import { describe, expect, it } from 'vitest';
import * as ortNode from 'onnxruntime-node';
import * as ortWeb from 'onnxruntime-web';
import { buildTrainStep, type TrainStepGraph } from '../../core/update/trainStep.ts';
import { buildPolicyGraph } from '../../core/models/policyGraph.ts';
import { MlpPolicy } from '../../core/models/mlp.ts';
import { TransformerPolicy } from '../../core/models/transformer.ts';
import { initWeights, type PolicyModel, type Weights } from '../../core/models/types.ts';
import { syntheticBatch } from '../../core/update/syntheticBatch.ts';
import { valueLoss } from '../../core/algos/losses.ts';
import { Rng } from '../../core/util/rng.ts';
import { PolicySession, TrainSession, type OrtModule } from './session.ts';
import { maxAbsDiff, rawTrainRunner, unflatten } from './test/util.ts';

ortWeb.env.wasm.numThreads = 1;
const node = ortNode as unknown as OrtModule;
const web = ortWeb as unknown as OrtModule;

const smallMlp = () => new MlpPolicy({ obsDim: 6, hidden: [8, 8], numActions: 4, activation: 'tanh', valueHead: true, policyHeadGain: 1 });
const smallTransformer = () => new TransformerPolicy({ vocabSize: 11, dModel: 8, nLayers: 2, nHeads: 2, dFF: 16, context: 5, valueHead: true });

/** Non-trivial weights: defaults plus noise on biases and norm gains so no gradient is structurally zero. */
function weightsFor(model: PolicyModel, seed: number): Weights {
  const w = initWeights(model, seed);
  const rng = new Rng(seed + 99);
  for (const p of model.params) {
    const a = w[p.name];
    const s = p.init.kind === 'normal' ? Math.max(p.init.std, 0.2) / p.init.std : 1;
    for (let i = 0; i < a.length; i++) a[i] = p.init.kind === 'normal' ? a[i] * s : a[i] + 0.2 * rng.normal();
  }
  return w;
}

async function wholeModelGradcheck(model: PolicyModel, spec: TrainStepGraph, seed: number): Promise<number> {
  const run = await rawTrainRunner(node, spec);
  const w = weightsFor(model, seed);
  const batch = syntheticBatch(spec, seed);
  let base = await run({ weights: w }, batch);
  if (batch.old_logprobs) {
    // Put every ratio well inside or well outside the clip range [0.8, 1.2]: a finite
    // difference that straddles the clip kink measures neither side's derivative.
    const shifts = [-0.5, -0.05, 0.05, 0.5];
    batch.old_logprobs = base.logprobs.map((lp, i) => lp + shifts[i % 4]);
    base = await run({ weights: w }, batch);
  }
  if (batch.old_values) {
    // The same for the value clip (c = 0.2): V − V_old inside it, and well outside on both sides.
    const shifts = [-0.5, -0.05, 0.05, 0.5];
    batch.old_values = base.values.map((v, i) => v + shifts[(i + 1) % 4]);
    base = await run({ weights: w }, batch);
  }
  const rng = new Rng(seed);
  const h = 3e-3;
  let worst = 0;
  let maxGrad = 0;
  for (const p of model.params) {
    const ana = base[`grad.${p.name}`];
    for (let k = 0; k < 4; k++) {
      const j = rng.int(0, ana.length);
      const plus = { ...w, [p.name]: w[p.name].slice() };
      const minus = { ...w, [p.name]: w[p.name].slice() };
      plus[p.name][j] += h;
      minus[p.name][j] -= h;
      const fd = ((await run({ weights: plus }, batch)).loss[0] - (await run({ weights: minus }, batch)).loss[0]) / (2 * h);
      worst = Math.max(worst, Math.abs(fd - ana[j]) / (Math.abs(fd) + Math.abs(ana[j]) + 1e-2));
      maxGrad = Math.max(maxGrad, Math.abs(ana[j]));
    }
  }
  expect(maxGrad).toBeGreaterThan(1e-2);
  return worst;
}

describe('whole-model gradients match finite differences', () => {
  it('MLP + clipped PG + k3 KL to reference + entropy + value loss', async () => {
    const model = smallMlp();
    const spec = buildTrainStep(model, { batch: 5, loss: { kind: 'policy-gradient', useReference: true, klCoef: 0.3, entropyCoef: 0.05 }, exposeGradients: true });
    const err = await wholeModelGradcheck(model, spec, 3);
    if (process.env.GRADCHECK_REPORT) console.log(`MLP whole-model max rel err ${err.toExponential(2)}`);
    expect(err).toBeLessThan(2e-2);
  });
  it('transformer + clipped PG + k1 KL + value loss (every parameter)', async () => {
    const model = smallTransformer();
    const spec = buildTrainStep(model, { batch: 2, loss: { kind: 'policy-gradient', useReference: true, klEstimator: 'k1', klCoef: 0.2, entropyCoef: 0.02 }, exposeGradients: true });
    const err = await wholeModelGradcheck(model, spec, 5);
    if (process.env.GRADCHECK_REPORT) console.log(`transformer whole-model max rel err ${err.toExponential(2)}`);
    expect(err).toBeLessThan(2e-2);
  });
  it('MLP + clipped value loss', async () => {
    const model = smallMlp();
    const spec = buildTrainStep(model, { batch: 8, loss: { kind: 'policy-gradient', valueClip: 0.2, valueCoef: 2 }, exposeGradients: true });
    expect(spec.batchInputs.map((b) => b.name)).toContain('old_values');
    expect(await wholeModelGradcheck(model, spec, 11)).toBeLessThan(2e-2);
  });
  it('imitation cross-entropy (MLP)', async () => {
    const model = smallMlp();
    const spec = buildTrainStep(model, { batch: 5, loss: { kind: 'imitation' }, exposeGradients: true });
    expect(await wholeModelGradcheck(model, spec, 7)).toBeLessThan(2e-2);
  });
});

describe('Adam(W) with global-norm clipping matches a JS reference', () => {
  it('three chained steps, clipping active, weight decay on matrices only', async () => {
    const model = smallMlp();
    const adam = { lr: 0.01, beta1: 0.8, beta2: 0.95, eps: 1e-6, weightDecay: 0.1, maxGradNorm: 0.05 };
    const spec = buildTrainStep(model, { batch: 5, adam, exposeGradients: true });
    const run = await rawTrainRunner(node, spec);
    let w = weightsFor(model, 1);
    const m: Weights = {};
    const v: Weights = {};
    for (const p of model.params) {
      m[p.name] = new Float32Array(w[p.name].length);
      v[p.name] = new Float32Array(w[p.name].length);
    }
    for (let t = 1; t <= 3; t++) {
      const res = await run({ weights: w, m, v, step: t - 1 }, syntheticBatch(spec, 10 + t));
      let sq = 0;
      for (const p of model.params) for (const x of res[`grad.${p.name}`]) sq += x * x;
      const norm = Math.sqrt(sq);
      expect(res.grad_norm[0]).toBeCloseTo(norm, 4);
      expect(norm).toBeGreaterThan(adam.maxGradNorm); // so clipping is exercised
      const scale = adam.maxGradNorm / norm;
      const next: Weights = {};
      for (const p of model.params) {
        const gr = res[`grad.${p.name}`];
        const ref = new Float64Array(gr.length);
        for (let i = 0; i < gr.length; i++) {
          const gi = gr[i] * scale;
          m[p.name][i] = adam.beta1 * m[p.name][i] + (1 - adam.beta1) * gi;
          v[p.name][i] = adam.beta2 * v[p.name][i] + (1 - adam.beta2) * gi * gi;
          const mh = m[p.name][i] / (1 - adam.beta1 ** t);
          const vh = v[p.name][i] / (1 - adam.beta2 ** t);
          ref[i] = w[p.name][i] - adam.lr * (mh / (Math.sqrt(vh) + adam.eps) + (p.decay ? adam.weightDecay * w[p.name][i] : 0));
        }
        expect(maxAbsDiff(res[`next.${p.name}`], ref)).toBeLessThan(2e-6);
        expect(maxAbsDiff(unflatten(spec, res['next.adam.m'])[p.name], m[p.name])).toBeLessThan(1e-7);
        expect(maxAbsDiff(unflatten(spec, res['next.adam.v'])[p.name], v[p.name])).toBeLessThan(1e-9);
        next[p.name] = res[`next.${p.name}`];
      }
      expect(res['next.adam.step'][0]).toBe(t);
      w = next;
    }
  });
});

/** float64 reference of the PG loss and metrics from full log-probs [N, A]. */
function pgReference(logp: Float32Array, values: Float32Array, A: number, b: Record<string, Float32Array | Int32Array>, c: { clipLow: number; clipHigh: number; klCoef: number; entropyCoef: number; valueCoef: number }) {
  const n = b.mask.length;
  let pg = 0, ent = 0, entW = 0, kl = 0, klW = 0, ak = 0, cl = 0, ch = 0, vl = 0, msum = 0;
  for (let i = 0; i < n; i++) {
    const lp = logp[i * A + b.actions[i]];
    let H = 0;
    for (let a = 0; a < A; a++) H -= Math.exp(logp[i * A + a]) * logp[i * A + a];
    const r = Math.exp(lp - b.old_logprobs[i]);
    const adv = b.advantages[i];
    const clipped = Math.min(Math.max(r, 1 - c.clipLow), 1 + c.clipHigh);
    const w = b.weights[i];
    const mk = b.mask[i];
    pg += w * -Math.min(r * adv, clipped * adv);
    entW += w * H;
    const d = b.ref_logprobs[i] - lp;
    const k3 = Math.exp(d) - 1 - d;
    klW += w * k3;
    msum += mk;
    ent += mk * H;
    kl += mk * k3;
    ak += mk * (r - 1 - Math.log(r));
    cl += mk * (r < 1 - c.clipLow && adv < 0 ? 1 : 0);
    ch += mk * (r > 1 + c.clipHigh && adv > 0 ? 1 : 0);
    vl += mk * (values[i] - b.returns[i]) ** 2;
  }
  const valueLoss = (0.5 * vl) / msum;
  return {
    'actor/pg_loss': pg,
    'actor/entropy': ent / msum,
    'actor/kl_ref': kl / msum,
    'actor/approx_kl': ak / msum,
    'actor/clipfrac_low': cl / msum,
    'actor/clipfrac_high': ch / msum,
    'critic/value_loss': valueLoss,
    'actor/loss': pg - c.entropyCoef * entW + c.klCoef * klW + c.valueCoef * valueLoss,
  };
}

describe('loss and metrics match a float64 reference; trainer log-probs match rollout log-probs', () => {
  for (const [label, ort] of [['ort-web wasm', web], ['ort-node', node]] as const) {
    it(`MLP on ${label}`, async () => {
      const model = smallMlp();
      const loss = { kind: 'policy-gradient' as const, clipLow: 0.1, clipHigh: 0.15, useReference: true, klCoef: 0.2, entropyCoef: 0.03, valueCoef: 0.7 };
      const B = 32;
      const spec = buildTrainStep(model, { batch: B, loss });
      const w = weightsFor(model, 4);
      const batch = syntheticBatch(spec, 4);
      // Advantages of both signs and ratios spread on both sides of the clip range.
      const policy = await PolicySession.create(ort, buildPolicyGraph(model, B), w);
      const pol = await policy.run({ obs: batch.obs as Float32Array });
      const trainer = await TrainSession.create(ort, spec, w);
      const r = await trainer.step(batch);
      const ref = pgReference(pol.logprobs, pol.value, 4, batch, loss);
      for (const [k, v] of Object.entries(ref)) expect(r.metrics[k], k).toBeCloseTo(v, 5);
      expect(ref['actor/clipfrac_low'] + ref['actor/clipfrac_high']).toBeGreaterThan(0);
      const rollout = Float32Array.from({ length: B }, (_, i) => pol.logprobs[i * 4 + (batch.actions as Int32Array)[i]]);
      expect(maxAbsDiff(rollout, r.logprobs)).toBeLessThanOrEqual(1e-5);
      expect(maxAbsDiff(pol.value, r.values!)).toBeLessThanOrEqual(1e-5);
      expect(r.applied).toBe(true);
      await trainer.release();
    });
  }
});

describe('clipped value loss matches the float64 reference (src/core/algos/losses.ts valueLoss)', () => {
  it('MLP, V − V_old inside and outside ±c', async () => {
    const model = smallMlp();
    const B = 16;
    const c = 0.2;
    const spec = buildTrainStep(model, { batch: B, loss: { kind: 'policy-gradient', valueClip: c } });
    const w = weightsFor(model, 6);
    const batch = syntheticBatch(spec, 6);
    (batch.mask as Float32Array).fill(1);
    const policy = await PolicySession.create(web, buildPolicyGraph(model, B), w);
    const values = (await policy.run({ obs: batch.obs as Float32Array })).value;
    const shifts = [-0.6, -0.1, 0.1, 0.6];
    batch.old_values = values.map((v, i) => v + shifts[i % 4]);
    const trainer = await TrainSession.create(web, spec, w);
    const r = await trainer.step(batch);
    const common = { values: Array.from(values), oldValues: Array.from(batch.old_values), returns: Array.from(batch.returns as Float32Array), weights: new Array(B).fill(1 / B) };
    const clipped = valueLoss(common, c);
    expect(r.metrics['critic/value_loss']).toBeCloseTo(clipped, 5);
    expect(Math.abs(clipped - valueLoss(common, null))).toBeGreaterThan(1e-3); // the clip is active
    await Promise.all([trainer.release(), policy.release()]);
  });
});

describe('NaN guard', () => {
  it('graph level: a NaN advantage leaves params, moments and step untouched and flags finite = 0', async () => {
    const model = smallMlp();
    const spec = buildTrainStep(model, { batch: 5 });
    const run = await rawTrainRunner(node, spec);
    const w = weightsFor(model, 2);
    const batch = syntheticBatch(spec, 2);
    (batch.advantages as Float32Array)[3] = NaN;
    const res = await run({ weights: w, step: 7 }, batch);
    expect(res.finite[0]).toBe(0);
    for (const p of model.params) {
      expect(maxAbsDiff(res[`next.${p.name}`], w[p.name])).toBe(0);
    }
    expect(res['next.adam.v'].every((x) => x === 0)).toBe(true);
    expect(res['next.adam.step'][0]).toBe(7);
  });
  it('finite loss and gradient but non-finite new weights (lr 1e300 is Inf in float32): skipped, nothing written', async () => {
    const model = smallMlp();
    const spec = buildTrainStep(model, { batch: 5, adam: { lr: 1e300 } });
    const w = weightsFor(model, 2);
    const s = await TrainSession.create(node, spec, w);
    const r = await s.step(syntheticBatch(spec, 2));
    expect(Number.isFinite(r.metrics['actor/loss'])).toBe(true);
    expect(Number.isFinite(r.metrics['actor/grad_norm'])).toBe(true);
    expect(r.applied).toBe(false);
    expect(s.skipped).toBe(1);
    const after = await s.getWeights();
    for (const p of model.params) expect(maxAbsDiff(after[p.name], w[p.name])).toBe(0);
    expect(await s.adamStep()).toBe(0);
  });
  it('session level: the step is skipped, counted, and training continues', async () => {
    const model = smallMlp();
    const spec = buildTrainStep(model, { batch: 5 });
    const w = weightsFor(model, 2);
    const s = await TrainSession.create(node, spec, w);
    const bad = syntheticBatch(spec, 2);
    (bad.old_logprobs as Float32Array)[0] = Infinity;
    (bad.advantages as Float32Array)[0] = NaN;
    const r = await s.step(bad);
    expect(r.applied).toBe(false);
    expect(s.skipped).toBe(1);
    expect(s.version).toBe(0);
    const after = await s.getWeights();
    for (const p of model.params) expect(maxAbsDiff(after[p.name], w[p.name])).toBe(0);
    const ok = await s.step(syntheticBatch(spec, 3));
    expect(ok.applied).toBe(true);
    expect(s.version).toBe(1);
    expect(await s.adamStep()).toBe(1);
  });
});

describe('learning', () => {
  it('imitation drives cross-entropy on a fixed batch toward 0 (transformer, ort-web wasm)', async () => {
    const model = new TransformerPolicy({ vocabSize: 13, dModel: 16, nLayers: 1, nHeads: 2, dFF: 32, context: 8 });
    const spec = buildTrainStep(model, { batch: 4, loss: { kind: 'imitation' }, adam: { lr: 1e-2 } });
    const s = await TrainSession.create(web, spec, initWeights(model, 1));
    const batch = syntheticBatch(spec, 1, { maskProb: 1 });
    const first = (await s.step(batch)).metrics['imitation/ce_loss'];
    let last = first;
    for (let i = 0; i < 150; i++) last = (await s.step(batch)).metrics['imitation/ce_loss'];
    expect(first).toBeGreaterThan(2);
    expect(last).toBeLessThan(0.1 * first);
  });
});
