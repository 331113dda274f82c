/**
 * Named model presets. The bench compares engines on exactly these shapes, so changing one
 * changes published numbers: add a new preset instead.
 */
import { VOCAB_SIZE } from '../text/codec.ts';
import { MlpPolicy } from './mlp.ts';
import { TransformerPolicy } from './transformer.ts';
import type { PolicyModel } from './types.ts';

export interface ModelPreset {
  id: string;
  description: string;
  make(): PolicyModel;
  /** Bench batch: rows (MLP) or sequences (transformer, each `context` tokens long). */
  benchBatch: number;
}

export const MODEL_PRESETS: Record<string, ModelPreset> = {
  'mlp-76k': {
    id: 'mlp-76k',
    description: 'MLP 160 → 256 → 128 → 7 actions, tanh, shared-trunk value head (75,144 params). Batch 64 rows.',
    make: () => new MlpPolicy({ obsDim: 160, hidden: [256, 128], numActions: 7, activation: 'tanh', valueHead: true }),
    benchBatch: 64,
  },
  'transformer-1m': {
    id: 'transformer-1m',
    description: `Decoder-only transformer, vocab ${VOCAB_SIZE}, d_model 128, 5 layers, 4 heads, ffn 512, context 32, GELU, pre-LN, untied head (≈1.02M params). Batch 64 × 32 tokens.`,
    make: () => new TransformerPolicy({ vocabSize: VOCAB_SIZE, dModel: 128, nLayers: 5, nHeads: 4, dFF: 512, context: 32, valueHead: false }),
    benchBatch: 64,
  },
  'mlp-5k': {
    id: 'mlp-5k',
    description: 'MLP 49 → 64 → 7 actions, tanh, value head (3,720 params): the smallest grid policy.',
    make: () => new MlpPolicy({ obsDim: 49, hidden: [64], numActions: 7, activation: 'tanh', valueHead: true }),
    benchBatch: 64,
  },
  'transformer-tiny': {
    id: 'transformer-tiny',
    description: `Decoder-only transformer, vocab ${VOCAB_SIZE}, d_model 32, 1 layer, 2 heads, ffn 64, context 16 (≈12k params). For tests.`,
    make: () => new TransformerPolicy({ vocabSize: VOCAB_SIZE, dModel: 32, nLayers: 1, nHeads: 2, dFF: 64, context: 16 }),
    benchBatch: 8,
  },
};

export function makePresetModel(id: string): PolicyModel {
  const p = MODEL_PRESETS[id];
  if (!p) throw new RangeError(`unknown model preset '${id}' (known: ${Object.keys(MODEL_PRESETS).join(', ')})`);
  return p.make();
}
