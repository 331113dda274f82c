/**
 * Finite-difference gradient checking of graphs built with src/core/graph, run in an ONNX
 * runtime (used by the tests; kept out of src/core because it needs onnxruntime).
 */
import { Graph, type Tensor } from '../../core/graph/builder.ts';
import { numel } from '../../core/graph/shape.ts';
import { Rng } from '../../core/util/rng.ts';
import type * as Ort from 'onnxruntime-web';
import type { OrtModule } from './session.ts';

export interface GradcheckInput {
  shape: number[];
  /** Values; default uniform in [-1, 1]. */
  values?: Float32Array | Int32Array;
  dtype?: 'float32' | 'int32';
  /** Differentiate w.r.t. this input (default: true for float32). */
  diff?: boolean;
}

export interface GradcheckResult {
  /** max over checked entries of |fd − analytic| / (|fd| + |analytic| + 1e-3). */
  maxRelErr: number;
  /** Entries checked. */
  checked: number;
  /** Largest |analytic| seen (a check on all-zero gradients proves nothing). */
  maxAbsGrad: number;
}

/**
 * Builds loss = Σ f(x) ⊙ R (R a fixed random tensor, so every output element matters), takes
 * analytic gradients from the graph and compares them with central differences of the same
 * graph's loss, entry by entry (at most `maxEntries` per input, chosen at random).
 */
export async function gradcheck(
  ort: OrtModule,
  inputs: GradcheckInput[],
  f: (g: Graph, xs: Tensor[]) => Tensor,
  opts: { h?: number; maxEntries?: number; seed?: number } = {},
): Promise<GradcheckResult> {
  const h = opts.h ?? 1e-2;
  const rng = new Rng(opts.seed ?? 1);
  const g = new Graph('gradcheck');
  const xs = inputs.map((inp, i) => g.input(`x${i}`, inp.shape, inp.dtype ?? 'float32'));
  const y = f(g, xs);
  const R = Float32Array.from({ length: numel(y.shape) }, () => rng.random() * 2 - 1);
  const loss = g.reduceSum(g.mul(y, g.constant(R, y.shape)));
  g.output(loss, 'loss');
  const diffIdx = inputs.map((inp, i) => ((inp.dtype ?? 'float32') === 'float32' && inp.diff !== false ? i : -1)).filter((i) => i >= 0);
  const grads = g.grad(loss, diffIdx.map((i) => xs[i]));
  grads.forEach((gr, k) => g.output(gr, `grad_x${diffIdx[k]}`));
  const sess = await ort.InferenceSession.create(g.toOnnx());
  const values = inputs.map((inp) => inp.values ?? Float32Array.from({ length: numel(inp.shape) }, () => rng.random() * 2 - 1));
  const feeds = (vals: (Float32Array | Int32Array)[]) => {
    const out: Record<string, Ort.Tensor> = {};
    vals.forEach((v, i) => (out[`x${i}`] = new ort.Tensor(v instanceof Int32Array ? 'int32' : 'float32', v, inputs[i].shape)));
    return out;
  };
  const base = await sess.run(feeds(values));
  let maxRelErr = 0;
  let checked = 0;
  let maxAbsGrad = 0;
  for (const i of diffIdx) {
    const ana = base[`grad_x${i}`].data as Float32Array;
    const n = ana.length;
    const maxEntries = opts.maxEntries ?? 24;
    const idx = n <= maxEntries ? [...Array(n).keys()] : Array.from({ length: maxEntries }, () => rng.int(0, n));
    for (const j of idx) {
      const plus = values.map((v) => v.slice());
      const minus = values.map((v) => v.slice());
      plus[i][j] += h;
      minus[i][j] -= h;
      const lp = (await sess.run(feeds(plus))).loss.data[0] as number;
      const lm = (await sess.run(feeds(minus))).loss.data[0] as number;
      const fd = (lp - lm) / (2 * h);
      const err = Math.abs(fd - ana[j]) / (Math.abs(fd) + Math.abs(ana[j]) + 1e-3);
      maxRelErr = Math.max(maxRelErr, err);
      maxAbsGrad = Math.max(maxAbsGrad, Math.abs(ana[j]));
      checked++;
    }
  }
  await sess.release();
  return { maxRelErr, checked, maxAbsGrad };
}
