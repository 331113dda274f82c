/** Helpers shared by the ORT tests: run a train-step graph directly with explicit state. */
import type * as Ort from 'onnxruntime-web';
import type { TrainStepGraph } from '../../../core/update/trainStep.ts';
import type { Weights } from '../../../core/models/types.ts';
import type { Feed, OrtModule } from '../session.ts';

export interface RawState {
  weights: Weights;
  m?: Weights;
  v?: Weights;
  step?: number;
}

/** A function that runs the train graph once with the given state, batch and hyperparameters. */
export async function rawTrainRunner(ort: OrtModule, spec: TrainStepGraph) {
  const sess = await ort.InferenceSession.create(spec.graph.toOnnx());
  return async (st: RawState, batch: Record<string, Feed>, hyper: Record<string, number> = spec.hyper): Promise<Record<string, Float32Array>> => {
    const feeds: Record<string, Ort.Tensor> = {};
    const flat = (w: Weights | undefined): Float32Array | undefined => {
      if (!w) return undefined;
      const out = new Float32Array(spec.flatLayout.reduce((a, l) => a + l.size, 0));
      for (const l of spec.flatLayout) out.set(w[l.name], l.offset);
      return out;
    };
    for (const s of spec.state) {
      const n = s.shape.reduce((a, b) => a * b, 1);
      const src = s.kind === 'param' ? st.weights[s.input] : s.kind === 'adam_m' ? flat(st.m) : s.kind === 'adam_v' ? flat(st.v) : Float32Array.of(st.step ?? 0);
      feeds[s.input] = new ort.Tensor('float32', src ?? new Float32Array(n), s.shape);
    }
    for (const b of spec.batchInputs) {
      const d = batch[b.name];
      feeds[b.name] = d instanceof Int32Array ? new ort.Tensor('int32', d, b.shape) : new ort.Tensor('float32', d, b.shape);
    }
    for (const [k, v] of Object.entries(hyper)) feeds[`hp.${k}`] = new ort.Tensor('float32', Float32Array.of(v), []);
    const res = await sess.run(feeds);
    const out: Record<string, Float32Array> = {};
    for (const [k, t] of Object.entries(res)) out[k] = t.data as Float32Array;
    return out;
  };
}

export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new RangeError(`length ${a.length} vs ${b.length}`);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

/** Split a flat Adam moment vector back into per-parameter arrays. */
export function unflatten(spec: TrainStepGraph, flat: Float32Array): Weights {
  const out: Weights = {};
  for (const l of spec.flatLayout) out[l.name] = flat.subarray(l.offset, l.offset + l.size);
  return out;
}
