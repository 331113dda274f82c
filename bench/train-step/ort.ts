/**
 * Ours: the engine's train-step graph (src/core/graph `buildTrainStep` over src/core/models)
 * driven by the engine's `TrainSession` (src/runtime/ort), which keeps parameters and Adam
 * state as runtime tensors fed back step to step: exactly what the trainer runs.
 *
 * - `web-wasm`: onnxruntime-web's WASM backend in Node, one thread (env.wasm.numThreads = 1).
 * - `node`: onnxruntime-node (native CPU EP), intra- and inter-op threads 1: the native reference.
 *
 * Configuration, so that the graph computes the function the peers compute (models.ts):
 * clip 0.2 both sides, entropy coefficient 0, value coefficient 0.5 (the engine's value loss is
 * ½·mean (V−R)²), Adam lr 1e-3 with bias correction, weight decay 0, gradient clipping off,
 * loss weights 1/N (a plain mean over positions), mask all ones. The engine graph still computes
 * work the peers skip (entropy, clip-fraction / KL metrics, the gradient norm, the NaN guard and
 * a copy of the per-position log-probs back to JS), so the comparison is conservative for us.
 */
import * as ortNode from 'onnxruntime-node';
import * as ortWeb from 'onnxruntime-web';
import { buildTrainStep } from '../../src/core/update/trainStep.ts';
import { MlpPolicy } from '../../src/core/models/mlp.ts';
import { TransformerPolicy } from '../../src/core/models/transformer.ts';
import type { PolicyModel, Weights } from '../../src/core/models/types.ts';
import { TrainSession } from '../../src/runtime/ort/session.ts';
import type { Feed, OrtModule } from '../../src/runtime/ort/session.ts';
import { HYPER, paramSpecs } from './models.ts';
import type { Batch, ModelConfig, Params, TrainStep } from './models.ts';

export type OrtRuntime = 'web-wasm' | 'node';

/** The engine model with the same architecture as `cfg`. */
export function engineModel(cfg: ModelConfig): PolicyModel {
  const model =
    cfg.kind === 'mlp'
      ? new MlpPolicy({ obsDim: cfg.obsDim, hidden: cfg.hidden, numActions: cfg.numActions, activation: 'tanh', valueHead: true })
      : new TransformerPolicy({
          vocabSize: cfg.vocab,
          dModel: cfg.dModel,
          nLayers: cfg.layers,
          nHeads: cfg.heads,
          dFF: cfg.ffn,
          context: cfg.context,
          valueHead: false,
          lnEps: HYPER.lnEps,
        });
  const mismatch = specMismatch(cfg, model);
  if (mismatch) throw new Error(`ort: the engine model differs from the bench definition: ${mismatch}`);
  return model;
}

/** First difference between the bench's parameter list and an engine model's, or null. */
export function specMismatch(cfg: ModelConfig, model: Pick<PolicyModel, 'params'>): string | null {
  const ours = paramSpecs(cfg);
  const theirs = model.params;
  for (let i = 0; i < Math.max(ours.length, theirs.length); i++) {
    const a = ours[i];
    const b = theirs[i];
    if (!a || !b) return `parameter count ${ours.length} (bench) vs ${theirs.length} (engine)`;
    if (a.name !== b.name || a.shape.join() !== b.shape.join())
      return `parameter ${i}: ${a.name} [${a.shape}] (bench) vs ${b.name} [${b.shape}] (engine)`;
  }
  return null;
}

/** The engine's batch inputs for our batch: weights 1/N make Σ w·ℓ the plain mean. */
export function engineBatch(batch: Batch): Record<string, Feed> {
  const n = batch.actions.length;
  const common = {
    actions: batch.actions,
    advantages: batch.advantages,
    old_logprobs: batch.oldLogp,
    weights: new Float32Array(n).fill(1 / n),
    mask: new Float32Array(n).fill(1),
  };
  return batch.kind === 'mlp' ? { ...common, obs: batch.obs, returns: batch.returns } : { ...common, tokens: batch.tokens };
}

let webConfigured = false;

export async function createOrtTrainStep(runtime: OrtRuntime, cfg: ModelConfig, init: Params, batch: Batch): Promise<TrainStep> {
  const model = engineModel(cfg);
  const spec = buildTrainStep(model, {
    batch: cfg.batch,
    loss: { kind: 'policy-gradient', clipLow: HYPER.clip, clipHigh: HYPER.clip, entropyCoef: 0, valueCoef: HYPER.valueCoef, useReference: false },
    adam: { lr: HYPER.lr, beta1: HYPER.beta1, beta2: HYPER.beta2, eps: HYPER.eps, weightDecay: 0, maxGradNorm: 0 },
  });
  const weights: Weights = Object.fromEntries(init);
  let ort: OrtModule;
  let meta: TrainStep['meta'];
  let sessionOptions: Parameters<typeof TrainSession.create>[3];
  if (runtime === 'web-wasm') {
    if (!webConfigured) {
      // Must be set before the first session: the WASM module is instantiated once per process.
      ortWeb.env.wasm.numThreads = 1;
      webConfigured = true;
    }
    ort = ortWeb as unknown as OrtModule;
    sessionOptions = { sessionOptions: { executionProviders: ['wasm'] } };
    meta = { runtime: `onnxruntime-web ${ortWeb.env.versions.web ?? ''}`.trim(), ep: 'wasm', threads: ortWeb.env.wasm.numThreads ?? 1 };
  } else {
    ort = ortNode as unknown as OrtModule;
    sessionOptions = { sessionOptions: { executionProviders: ['cpu'], intraOpNumThreads: 1, interOpNumThreads: 1 } };
    meta = { runtime: `onnxruntime-node ${ortNode.env.versions.node ?? ''}`.trim(), ep: 'cpu', intraOpThreads: 1, interOpThreads: 1 };
  }
  const session = await TrainSession.create(ort, spec, weights, sessionOptions);
  const feeds = engineBatch(batch);
  return {
    async step() {
      const r = await session.step(feeds);
      if (!r.applied) throw new Error(`ort-${runtime}: the NaN guard skipped the update (loss ${r.metrics['actor/loss']})`);
      return r.metrics['actor/loss'];
    },
    async params() {
      return new Map(Object.entries(await session.getWeights()));
    },
    dispose() {
      void session.release();
    },
    meta,
  };
}

export function ortFactory(runtime: OrtRuntime): (cfg: ModelConfig, params: Params, batch: Batch) => Promise<TrainStep> {
  return (cfg, params, batch) => createOrtTrainStep(runtime, cfg, params, batch);
}
