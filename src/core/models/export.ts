/**
 * Standalone policy export: the policy graph with the trained weights baked in as
 * initializers, loadable by any ONNX runtime (`policy.onnx` in the CLI output).
 * Shapes are static, so the batch size is part of the exported model.
 */
import { buildPolicyGraph } from './policyGraph.ts';
import { TransformerPolicy } from './transformer.ts';
import type { PolicyModel, Weights } from './types.ts';

export interface ExportOptions {
  /** Rows per call in the exported model. Default 1. */
  batch?: number;
  /** Transformer only: 'decode' exports the KV-cache step graph, 'full' scores whole sequences. Default 'full'. */
  graph?: 'full' | 'decode';
  /** Transformer decode only: new tokens per call. Default 1. */
  step?: number;
}

export function exportPolicyOnnx(model: PolicyModel, weights: Weights, opts: ExportOptions = {}): Uint8Array {
  const batch = opts.batch ?? 1;
  for (const p of model.params) if (!weights[p.name]) throw new Error(`exportPolicyOnnx: missing weights for '${p.name}'`);
  const g =
    opts.graph === 'decode'
      ? model instanceof TransformerPolicy
        ? model.buildDecodeGraph(batch, opts.step ?? 1)
        : (() => {
            throw new Error(`exportPolicyOnnx: 'decode' needs a transformer, got ${model.kind}`);
          })()
      : buildPolicyGraph(model, batch);
  return g.toOnnx({ bake: weights, producer: 'agentic-rl-playground policy export' });
}
