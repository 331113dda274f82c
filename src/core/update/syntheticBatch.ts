/**
 * Random but well-formed train-step batches, for tests and benchmarks: every input a
 * TrainStepGraph declares, with plausible values (token-mean weights over the mask,
 * log-probs near uniform, unit-scale advantages).
 */
import type { TrainStepGraph } from './trainStep.ts';
import { Rng } from '../util/rng.ts';

export function syntheticBatch(spec: TrainStepGraph, seed: number, opts: { maskProb?: number } = {}): Record<string, Float32Array | Int32Array> {
  const rng = new Rng(seed);
  const A = spec.model.numActions;
  const n = spec.lead.reduce((a, b) => a * b, 1);
  const mask = Float32Array.from({ length: n }, () => (rng.random() < (opts.maskProb ?? 0.8) ? 1 : 0));
  if (!mask.some((m) => m === 1)) mask[0] = 1;
  const count = mask.reduce((a, b) => a + b, 0);
  const out: Record<string, Float32Array | Int32Array> = {};
  for (const b of spec.batchInputs) {
    const size = b.shape.reduce((x, y) => x * y, 1);
    switch (b.name) {
      case 'obs':
        out.obs = Float32Array.from({ length: size }, () => rng.random() * 2 - 1);
        break;
      case 'tokens':
      case 'actions':
        out[b.name] = Int32Array.from({ length: size }, () => rng.int(0, A));
        break;
      case 'mask':
        out.mask = mask;
        break;
      case 'weights':
        out.weights = mask.map((m) => m / count);
        break;
      case 'old_logprobs':
      case 'ref_logprobs':
        out[b.name] = Float32Array.from({ length: size }, () => -Math.log(A) + 0.3 * rng.normal());
        break;
      case 'seq_ids':
        // Sequences of 4 consecutive rows (GSPO over flat step rows).
        out.seq_ids = Int32Array.from({ length: size }, (_, i) => Math.floor(i / 4));
        break;
      default: // advantages, returns
        out[b.name] = Float32Array.from({ length: size }, () => rng.normal());
    }
  }
  return out;
}
