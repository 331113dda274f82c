/**
 * What a policy model is, to the graph builders: a list of parameters and a forward function
 * that emits nodes into a Graph. The policy (rollout) graph and the train-step graph both call
 * the same `forward`, so rollout and trainer compute the same function.
 */
import type { Graph, Tensor } from '../graph/builder.ts';
import { Rng } from '../util/rng.ts';

/** How a parameter is initialised. */
export type ParamInit = { kind: 'zeros' } | { kind: 'ones' } | { kind: 'normal'; std: number };

export interface ParamSpec {
  /** Graph input name of the parameter (also the key in `Weights`). */
  name: string;
  shape: number[];
  init: ParamInit;
  /** Whether decoupled weight decay applies (matrices yes; biases and norm gains no). */
  decay: boolean;
}

/** Parameter values by name, row-major float32. */
export type Weights = Record<string, Float32Array>;

/** Model outputs for a batch; `lead` is the per-step shape ([B] for MLP, [B, T] for tokens). */
export interface ModelOutputs {
  /** Unnormalised action/token scores [...lead, A]. */
  logits: Tensor;
  /** State value [...lead], when the model has a value head. */
  value?: Tensor;
}

export interface PolicyModel {
  readonly kind: 'mlp' | 'transformer';
  readonly params: readonly ParamSpec[];
  /** Size of the action (or token) distribution, A. */
  readonly numActions: number;
  readonly hasValueHead: boolean;
  /**
   * Per-step shape for a batch of `batch` rows: [B] (one decision per row) or [B, T]. Sequence
   * models take `seqLen` (≤ their context, default the context) for graphs over shorter sequences.
   */
  leadShape(batch: number, seqLen?: number): number[];
  /** Declare this model's observation inputs in `g` (e.g. `obs` float [B, D] or `tokens` int32 [B, T]); `seqLen` as in leadShape. */
  declareObservations(g: Graph, batch: number, seqLen?: number): Record<string, Tensor>;
  /** Full forward pass over declared observations. */
  forward(g: Graph, params: Readonly<Record<string, Tensor>>, obs: Readonly<Record<string, Tensor>>): ModelOutputs;
  /**
   * Sequence models: the same network over `groups` groups of sequences that share a prefix of
   * ≤ `prefixLen` tokens, run once per group (TransformerPolicy.withSharedPrefix).
   */
  withSharedPrefix?(groups: number, prefixLen: number): PolicyModel;
}

/** Declare every parameter of `model` as a graph param input; returns them by name. */
export function declareParams(g: Graph, model: PolicyModel): Record<string, Tensor> {
  const out: Record<string, Tensor> = {};
  for (const p of model.params) out[p.name] = g.param(p.name, p.shape);
  return out;
}

export function countParams(model: Pick<PolicyModel, 'params'>): number {
  return model.params.reduce((s, p) => s + p.shape.reduce((a, b) => a * b, 1), 0);
}

/** Fresh weights from each parameter's init rule, deterministic in `seed`. */
export function initWeights(model: Pick<PolicyModel, 'params'>, seed: number): Weights {
  const rng = new Rng(seed);
  const out: Weights = {};
  for (const p of model.params) {
    const n = p.shape.reduce((a, b) => a * b, 1);
    const a = new Float32Array(n);
    if (p.init.kind === 'ones') a.fill(1);
    else if (p.init.kind === 'normal') for (let i = 0; i < n; i++) a[i] = rng.normal() * p.init.std;
    out[p.name] = a;
  }
  return out;
}
