export * from './types.ts';
export { MlpPolicy, MLP_DEFAULTS, type MlpConfig } from './mlp.ts';
export { TransformerPolicy, TRANSFORMER_DEFAULTS, type TransformerConfig } from './transformer.ts';
export { MODEL_PRESETS, makePresetModel, type ModelPreset } from './presets.ts';
export { exportPolicyOnnx, type ExportOptions } from './export.ts';
export { syntheticBatch } from './synthetic.ts';
