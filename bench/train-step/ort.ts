/**
 * Our train-step graph (src/core/graph + src/core/models) on onnxruntime-web WASM and on
 * onnxruntime-node. Placeholder until the engine's graph API lands: both factories fail with a
 * clear reason, and the suite reports the ORT rows as skipped.
 */
import type { Batch, ModelConfig, Params, TrainStep } from './models.ts';

export type OrtRuntime = 'web-wasm' | 'node';

export function ortFactory(runtime: OrtRuntime): (cfg: ModelConfig, params: Params, batch: Batch) => Promise<TrainStep> {
  return async () => {
    throw new Error(`ort-${runtime}: the engine's train-step graph (src/core/graph) is not available yet`);
  };
}
