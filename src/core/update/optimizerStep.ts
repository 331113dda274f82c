/**
 * The train-step graph's backward pass and optimizer (update/trainStep.ts): global grad-norm
 * clipping, Adam(W) on one flat vector of all parameters, and the NaN guard.
 */
import type { Tensor } from '../graph/builder.ts';
import { indicator } from '../graph/nn.ts';
import type { PolicyModel } from '../models/types.ts';
import type { StepBuild } from './trainLosses.ts';
import { ADAM_M, ADAM_V, HYPER_INPUTS, next, STEP, type AdamConfig, type TrainStepGraph } from './trainStepSpec.ts';
/**
 * Backward pass and the optimizer: global grad-norm clipping, Adam(W) with bias correction on one
 * flat vector of all parameters, and the NaN guard; declares the state inputs and outputs.
 */
export function optimizerStep(b: StepBuild, model: PolicyModel, P: Record<string, Tensor>, total: Tensor, adam: AdamConfig, exposeGradients: boolean): Pick<TrainStepGraph, 'state' | 'flatLayout'> {
  const { g, hp, metric } = b;
  // ---- backward
  const params = model.params.map((p) => P[p.name]);
  const grads = g.grad(total, params);
  if (exposeGradients) model.params.forEach((p, i) => g.output(grads[i], `grad.${p.name}`));

  // ---- global grad-norm clipping: scale = maxNorm / ‖g‖ when ‖g‖ > maxNorm > 0, else 1
  const lr = hp(HYPER_INPUTS.lr, adam.lr);
  const beta1 = hp(HYPER_INPUTS.beta1, adam.beta1);
  const beta2 = hp(HYPER_INPUTS.beta2, adam.beta2);
  const eps = hp(HYPER_INPUTS.eps, adam.eps);
  const wd = hp(HYPER_INPUTS.weightDecay, adam.weightDecay);
  const maxNorm = hp(HYPER_INPUTS.maxGradNorm, adam.maxGradNorm);
  // The optimizer works on one flat vector of all parameters (decayed ones first): a handful of
  // large elementwise kernels instead of ~16 small ones per parameter tensor, which matters most
  // on WebGPU where every node is a dispatch. Params stay separate graph inputs/outputs (so a
  // policy session can share them); the Adam moments are the flat vectors `adam.m`, `adam.v`.
  const { order, flatLayout, N, nDecay } = flatParamLayout(model);
  const flatten = (ts: readonly Tensor[]) => (ts.length === 1 ? g.reshape(ts[0], [N]) : g.concat(order.map((i) => g.reshape(ts[i], [-1])), 0));
  const gFlat = flatten(grads);
  const pFlat = flatten(params);
  // g² is shared by the norm and the second moment.
  const gg = g.mul(gFlat, gFlat);
  const gradNorm = g.sqrt(g.reduceSum(gg));
  metric(gradNorm, 'grad_norm', 'actor/grad_norm');
  const doClip = g.mul(indicator(g, g.greater(gradNorm, maxNorm)), indicator(g, g.greater(maxNorm, 0)));
  const scale = g.add(g.mul(g.sub(g.div(maxNorm, g.add(gradNorm, 1e-12)), 1), doClip), 1);

  // ---- Adam(W) with bias correction; t = step + 1 is this update's index.
  // Every per-step scalar is folded before touching the big vectors (fewer elementwise passes):
  //   m' = β1·m + ((1−β1)·s)·g,  v' = β2·v + ((1−β2)·s²)·g²   (s = clip scale)
  //   p' = (1 − lr·λ)·p − (lr/bc1)·m' / (√v'/√bc2 + ε)          (bc_i = 1 − β_i^t)
  // and √v'/√bc2 + ε = (√v' + ε·√bc2)/√bc2, so the update is α·m'/(√v' + ε̂) with
  // α = lr·√bc2/bc1 and ε̂ = ε·√bc2: PyTorch's formulation, identical to the textbook one.
  const step = g.input(STEP, []);
  const t = g.add(step, 1);
  const bc1 = g.sub(1, g.node('Pow', [beta1, t], {}, [], 'float32'));
  const sqrtBc2 = g.sqrt(g.sub(1, g.node('Pow', [beta2, t], {}, [], 'float32')));
  const c1 = g.mul(g.sub(1, beta1), scale);
  const c2 = g.mul(g.sub(1, beta2), g.mul(scale, scale));
  const negAlpha = g.neg(g.div(g.mul(lr, sqrtBc2), bc1));
  const epsHat = g.mul(eps, sqrtBc2);
  const decayFactor = g.sub(1, g.mul(lr, wd));
  // Per-element decay factor: (1 − lr·λ) on the decayed prefix, 1 on the rest.
  const decay =
    nDecay === N ? decayFactor : nDecay === 0 ? null : g.concat([g.expand(decayFactor, [nDecay]), g.expand(g.scalar(1), [N - nDecay])], 0);
  const m = g.input(ADAM_M, [N]);
  const v = g.input(ADAM_V, [N]);
  const m2 = g.add(g.mul(m, beta1), g.mul(gFlat, c1));
  const v2 = g.add(g.mul(v, beta2), g.mul(gg, c2));
  const upd = g.mul(g.div(m2, g.add(g.sqrt(v2), epsHat)), negAlpha);
  const pRaw = g.add(decay ? g.mul(pFlat, decay) : pFlat, upd);

  // ---- NaN guard: x − x is 0 only for finite x. Any NaN/±Inf in the loss, the gradient norm or
  // the updated parameters fails it, and the step keeps every old value. Finite gradients can
  // still write Inf into the weights (lr 1e300, or ε so small that 0/0 appears); Σ p'·0 is NaN
  // exactly when some p' is. A finite gradient norm bounds every g², so m' and v' are finite then.
  const probe = g.add(g.add(total, gradNorm), g.reduceSum(g.mul(pRaw, 0)));
  const finite = g.equal(g.sub(probe, probe), g.scalar(0));
  metric(indicator(g, finite), 'finite', 'train/finite');
  const guard = (updated: Tensor, old: Tensor) => g.where(finite, updated, old);
  const pNext = guard(pRaw, pFlat);
  const state: TrainStepGraph['state'] = [];
  flatLayout.forEach((l, k) => {
    const spec = model.params[order[k]];
    g.output(g.reshape(g.slice(pNext, 0, l.offset, l.offset + l.size), spec.shape), next(spec.name));
  });
  for (const spec of model.params) state.push({ input: spec.name, output: next(spec.name), shape: [...spec.shape], kind: 'param' });
  g.output(guard(m2, m), next(ADAM_M));
  g.output(guard(v2, v), next(ADAM_V));
  g.output(g.where(finite, t, step), next(STEP));
  state.push(
    { input: ADAM_M, output: next(ADAM_M), shape: [N], kind: 'adam_m' },
    { input: ADAM_V, output: next(ADAM_V), shape: [N], kind: 'adam_v' },
    { input: STEP, output: next(STEP), shape: [], kind: 'step' },
  );
  return { state, flatLayout };
}

/** Where each parameter sits in the optimizer's flat vectors: weight-decayed ones first, in `order`. */
function flatParamLayout(model: PolicyModel): { order: number[]; flatLayout: TrainStepGraph['flatLayout']; N: number; nDecay: number } {
  const order = model.params.map((_, i) => i).sort((x, y) => Number(model.params[y].decay) - Number(model.params[x].decay));
  const flatLayout: TrainStepGraph['flatLayout'] = [];
  let N = 0;
  for (const i of order) {
    const size = model.params[i].shape.reduce((x, y) => x * y, 1);
    flatLayout.push({ name: model.params[i].name, offset: N, size });
    N += size;
  }
  const nDecay = flatLayout.filter((_, k) => model.params[order[k]].decay).reduce((s, l) => s + l.size, 0);
  return { order, flatLayout, N, nDecay };
}
