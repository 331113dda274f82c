/**
 * A run's policy as a standalone ONNX file, from its saved checkpoint: the same model its config
 * builds (MLP for grids, a token transformer for tool envs and grids played as text, with a value
 * head under PPO), the checkpoint's parameters baked in, one row per call. What the CLI writes as
 * policy.onnx, for runs trained in the tab: an MLP's full graph (one state per call), a
 * transformer's KV-cache decode graph (one token per call), what a rollout runs.
 */
import { probeShapeFor } from '../engine/shape.ts';
import { exportPolicyOnnx } from '../models/export.ts';
import type { Weights } from '../models/types.ts';
import { stageConfig, type RunConfig } from '../presets/schema.ts';
import type { Checkpoint } from './checkpoint.ts';

/**
 * Why `checkpoint` does not fit the model `config` builds (a parameter missing or of another
 * size), one line each; empty when it fits. Checked on import and --resume, so a file whose
 * tensors belong to another model is refused with its field named, not at Resume with an
 * engine error.
 */
export function checkpointFitProblems(config: RunConfig, checkpoint: Checkpoint, where = 'checkpoint'): string[] {
  let model;
  try {
    model = probeShapeFor(checkpoint.pipeline ? stageConfig(config, checkpoint.pipeline.stage) : config).model;
  } catch (e) {
    return [`${where}: the config's model cannot be built (${(e as Error).message})`];
  }
  const out: string[] = [];
  for (const p of model.params) {
    const t = checkpoint.learner.tensors[p.name];
    const n = p.shape.reduce((a, b) => a * b, 1);
    if (!t) out.push(`${where}.learner.tensors.${p.name}: missing (the config's model has this parameter, ${n} values)`);
    else if (t.length !== n) out.push(`${where}.learner.tensors.${p.name}: has ${t.length} values, the config's model needs ${n} (shape [${p.shape.join(', ')}]): the checkpoint is of another model`);
  }
  return out;
}

export function policyOnnxFromCheckpoint(config: RunConfig, checkpoint: Checkpoint): Uint8Array {
  // A staged run's checkpoint holds the policy of the stage it was saved in (a distill stage's: the student).
  const { model } = probeShapeFor(checkpoint.pipeline ? stageConfig(config, checkpoint.pipeline.stage) : config);
  const weights: Weights = {};
  for (const p of model.params) {
    const t = checkpoint.learner.tensors[p.name];
    const n = p.shape.reduce((a, b) => a * b, 1);
    if (!t || t.length !== n) throw new Error(`the checkpoint does not fit this run's model: parameter '${p.name}' ${t ? `has ${t.length} values, expected ${n}` : 'is missing'}`);
    weights[p.name] = t;
  }
  return exportPolicyOnnx(model, weights, { batch: 1, graph: model.kind === 'transformer' ? 'decode' : 'full' });
}
