/**
 * The train-step graph: forward, loss, backward, global grad-norm clipping, Adam(W) and a NaN
 * guard, all in one ONNX model. Parameters, Adam moments and the step count are inputs; their
 * updated values are outputs (`next.<name>`), so a session feeds outputs straight back in and
 * the state never has to visit JS.
 *
 * The loss is Σ_t weight_t · ℓ_t over per-step positions t (one position per MLP row, one per
 * token for the transformer). Aggregation (token-, sequence- or constant-normalised) is decided
 * upstream by the weights (src/core/update/batchAdvantages.ts `aggregationWeightsOf`); `mask` only
 * selects positions for the metrics (entropy, KL, clip fractions are means over mask = 1).
 *
 * Scalar hyperparameters (learning rate, clip ranges, coefficients) are graph inputs, so they can
 * change between steps without rebuilding; structural choices (which loss, which KL estimator,
 * whether a reference policy is fed) are baked into the graph.
 */
import { Graph, type Tensor } from '../graph/builder.ts';
import { entropyFromLogp, logSoftmax, maskedMean, selectLogprob } from '../graph/nn.ts';
import { declareParams, type PolicyModel } from '../models/types.ts';
import type { DType } from '../graph/proto.ts';
import { DISTILL_LOSS_DEFAULTS } from './distillLoss.ts';
import { optimizerStep } from './optimizerStep.ts';
import { distillLoss, imitationLoss, policyGradientLoss, type Positions, type StepBuild } from './trainLosses.ts';
import { ADAM_DEFAULTS, IMITATION_LOSS_DEFAULTS, LOGIT_MASK, PG_LOSS_DEFAULTS, type AdamConfig, type HyperInput, type IoSpec, type LossSpec, type TrainStepGraph, type TrainStepOptions } from './trainStepSpec.ts';

export * from './trainStepSpec.ts';

export function buildTrainStep(base: PolicyModel, opts: TrainStepOptions): TrainStepGraph {
  if (opts.prefix && !base.withSharedPrefix) throw new TypeError(`buildTrainStep: a '${base.kind}' model cannot share prefixes`);
  const model = opts.prefix ? base.withSharedPrefix!(opts.prefix.groups, opts.prefix.length) : base;
  const loss: LossSpec =
    opts.loss?.kind === 'imitation'
      ? { ...IMITATION_LOSS_DEFAULTS, ...opts.loss }
      : opts.loss?.kind === 'distill'
        ? { ...DISTILL_LOSS_DEFAULTS, ...opts.loss }
        : { ...PG_LOSS_DEFAULTS, ...(opts.loss ?? {}), kind: 'policy-gradient' };
  const adam: AdamConfig = { ...ADAM_DEFAULTS, ...opts.adam };
  const B = opts.batch;
  const g = new Graph(`train_${model.kind}_${loss.kind}`);
  const P = declareParams(g, model);
  const obs = model.declareObservations(g, B, opts.seqLen);
  const lead = model.leadShape(B, opts.seqLen);
  const batchInputs: IoSpec[] = Object.values(obs).map((t) => ({ name: t.name, shape: [...t.shape], dtype: t.dtype }));
  const hyper: Partial<Record<HyperInput, number>> = {};
  const inp = (name: string, dtype: DType = 'float32', last: number[] = []): Tensor => {
    const t = g.input(name, [...lead, ...last], dtype);
    batchInputs.push({ name, shape: [...lead, ...last], dtype });
    return t;
  };
  const hp = (name: HyperInput, value: number): Tensor => {
    hyper[name] = value;
    return g.input(`hp.${name}`, []);
  };
  const metrics: Record<string, string> = {};
  const metric = (t: Tensor, name: string, key: string) => {
    g.output(t, name);
    metrics[name] = key;
  };
  const b: StepBuild = { g, lead, inp, hp, metric };

  // ---- forward and per-position quantities
  const out = model.forward(g, P, obs);
  const A = out.logits.shape[out.logits.shape.length - 1];
  const logp = logSoftmax(g, opts.logitMask ? g.add(out.logits, inp(LOGIT_MASK, 'float32', [A])) : out.logits); // [...lead, A]
  const actions = inp('actions', 'int32');
  const weights = inp('weights');
  const mask = inp('mask');
  const lp = selectLogprob(g, logp, actions); // [...lead]
  const ent = entropyFromLogp(g, logp);
  const wsum = (x: Tensor) => g.reduceSum(g.mul(x, weights));

  const pos: Positions = { lp, ent, mask, wsum, value: out.value };
  const total = loss.kind === 'policy-gradient' ? policyGradientLoss(b, loss, pos) : loss.kind === 'imitation' ? imitationLoss(b, loss, pos) : distillLoss(b, loss, logp, pos);
  metric(total, 'loss', 'actor/loss');
  metric(maskedMean(g, ent, mask), 'entropy', 'actor/entropy');
  g.output(lp, 'logprobs');
  const perStep = ['logprobs'];
  if (out.value) {
    g.output(out.value, 'values');
    perStep.push('values');
  }

  const { state, flatLayout } = optimizerStep(b, model, P, total, adam, opts.exposeGradients ?? false);
  return { graph: g, model, batch: B, lead, state, flatLayout, batchInputs, hyper, metrics, perStep };
}
