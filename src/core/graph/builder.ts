/**
 * A typed tensor-graph builder with reverse-mode autodiff that emits ONNX (opset 18).
 *
 * Every op method emits one or a few ONNX nodes, computes the static output shape, and (for
 * float outputs) records one VJP rule on a tape. `grad(loss, wrt)` walks the tape backwards and
 * emits the backward nodes into the same graph, so forward + backward (+ optimizer) is one ONNX
 * model. Shapes are fully static: every tensor has a known shape at build time, which is what
 * lets each VJP reduce broadcast gradients without runtime shape ops.
 *
 * Op set kept to kernels that both onnxruntime-web WASM and the native WebGPU EP implement:
 * no LogSoftmax (decomposed in nn.ts), no Scatter (embedding grads are one-hot MatMuls), no
 * And/Or/Not (logic is done with Where and float Mul). Opset 18 throughout: reductions take
 * their axes as an int64 input.
 */
import type { AttrValue, DType } from './proto.ts';
import { GraphCore, type Tensor } from './core.ts';

import { broadcastShapes, fmt, normAxis, numel, sameShape, type Shape } from './shape.ts';

export type { DType } from './proto.ts';

export { OPSET, type Tensor } from './core.ts';

export class Graph extends GraphCore {
  // ------------------------------------------------------------------ broadcast helpers

  /** Sum a broadcast gradient back down to `shape` (numpy rules). */
  unbroadcast(g: Tensor, shape: Shape): Tensor {
    if (sameShape(g.shape, shape)) return g;
    const r = g.shape.length;
    const k = shape.length;
    const axes: number[] = [];
    for (let i = 0; i < r; i++) {
      const j = i - (r - k);
      if (j < 0 || (shape[j] === 1 && g.shape[i] !== 1)) axes.push(i);
    }
    const s = axes.length ? this.reduceSum(g, axes, true) : g;
    return this.reshape(s, shape);
  }

  /** Broadcast to a larger shape (ONNX Expand). */
  expand(x: Tensor, shape: Shape): Tensor {
    const outShape = broadcastShapes(x.shape, shape);
    if (sameShape(outShape, x.shape)) return x;
    const out = this.node('Expand', [x, this.ints(outShape)], {}, outShape, x.dtype);
    return this.record('Expand', out, [x], (gy) => [this.unbroadcast(gy, x.shape)]);
  }

  // ------------------------------------------------------------------ elementwise binary

  private binary(op: 'Add' | 'Sub' | 'Mul' | 'Div', a: Tensor, b: Tensor): Tensor {
    this.checkFloat(op, a, b);
    const shape = broadcastShapes(a.shape, b.shape);
    const out = this.node(op, [a, b], {}, shape, 'float32');
    return this.record(op, out, [a, b], (gy, needs) => {
      switch (op) {
        case 'Add':
          return [needs[0] ? this.unbroadcast(gy, a.shape) : null, needs[1] ? this.unbroadcast(gy, b.shape) : null];
        case 'Sub':
          return [needs[0] ? this.unbroadcast(gy, a.shape) : null, needs[1] ? this.unbroadcast(this.neg(gy), b.shape) : null];
        case 'Mul':
          return [needs[0] ? this.unbroadcast(this.mul(gy, b), a.shape) : null, needs[1] ? this.unbroadcast(this.mul(gy, a), b.shape) : null];
        case 'Div':
          // d(a/b)/db = -a/b² = -out/b
          return [
            needs[0] ? this.unbroadcast(this.div(gy, b), a.shape) : null,
            needs[1] ? this.unbroadcast(this.neg(this.div(this.mul(gy, out), b)), b.shape) : null,
          ];
      }
    });
  }

  add(a: Tensor, b: Tensor | number): Tensor {
    return this.binary('Add', a, typeof b === 'number' ? this.scalar(b) : b);
  }
  sub(a: Tensor | number, b: Tensor | number): Tensor {
    return this.binary('Sub', typeof a === 'number' ? this.scalar(a) : a, typeof b === 'number' ? this.scalar(b) : b);
  }
  mul(a: Tensor, b: Tensor | number): Tensor {
    return this.binary('Mul', a, typeof b === 'number' ? this.scalar(b) : b);
  }
  div(a: Tensor | number, b: Tensor | number): Tensor {
    return this.binary('Div', typeof a === 'number' ? this.scalar(a) : a, typeof b === 'number' ? this.scalar(b) : b);
  }

  /** x ** p for a constant exponent p. */
  pow(x: Tensor, p: number): Tensor {
    this.checkFloat('Pow', x);
    const out = this.node('Pow', [x, this.scalar(p)], {}, x.shape, 'float32');
    return this.record('Pow', out, [x], (gy) => [this.mul(gy, this.mul(this.pow(x, p - 1), p))]);
  }

  // ------------------------------------------------------------------ elementwise unary

  private unary(op: string, x: Tensor, vjp: (gy: Tensor, out: Tensor) => Tensor): Tensor {
    this.checkFloat(op, x);
    const out = this.node(op, [x], {}, x.shape, 'float32');
    return this.record(op, out, [x], (gy) => [vjp(gy, out)]);
  }

  neg(x: Tensor): Tensor {
    return this.unary('Neg', x, (gy) => this.neg(gy));
  }
  exp(x: Tensor): Tensor {
    return this.unary('Exp', x, (gy, y) => this.mul(gy, y));
  }
  log(x: Tensor): Tensor {
    return this.unary('Log', x, (gy) => this.div(gy, x));
  }
  sqrt(x: Tensor): Tensor {
    return this.unary('Sqrt', x, (gy, y) => this.div(this.mul(gy, 0.5), y));
  }
  tanh(x: Tensor): Tensor {
    return this.unary('Tanh', x, (gy, y) => this.mul(gy, this.sub(1, this.mul(y, y))));
  }
  relu(x: Tensor): Tensor {
    // Gradient 0 at x = 0 (the subgradient PyTorch uses).
    return this.unary('Relu', x, (gy) => this.where(this.greater(x, this.scalar(0)), gy, this.scalar(0)));
  }
  erf(x: Tensor): Tensor {
    // d erf(x)/dx = 2/√π · exp(−x²)
    return this.unary('Erf', x, (gy) => this.mul(gy, this.mul(this.exp(this.neg(this.mul(x, x))), 2 / Math.sqrt(Math.PI))));
  }

  /** Identity whose gradient is zero: the value is treated as a constant by grad(). */
  stopGradient(x: Tensor): Tensor {
    return this.node('Identity', [x], {}, x.shape, x.dtype);
  }

  // ------------------------------------------------------------------ comparisons, selection

  private compare(op: 'Equal' | 'Greater' | 'Less', a: Tensor, b: Tensor | number): Tensor {
    const bb = typeof b === 'number' ? this.constant([b], [], a.dtype) : b;
    if (a.dtype !== bb.dtype) throw new TypeError(`${op}: dtypes differ (${a.dtype} vs ${bb.dtype})`);
    return this.node(op, [a, bb], {}, broadcastShapes(a.shape, bb.shape), 'bool');
  }
  equal(a: Tensor, b: Tensor | number): Tensor {
    return this.compare('Equal', a, b);
  }
  greater(a: Tensor, b: Tensor | number): Tensor {
    return this.compare('Greater', a, b);
  }
  less(a: Tensor, b: Tensor | number): Tensor {
    return this.compare('Less', a, b);
  }

  /** cond ? a : b, with broadcasting over all three. */
  where(cond: Tensor, a: Tensor | number, b: Tensor | number): Tensor {
    if (cond.dtype !== 'bool') throw new TypeError(`Where: condition must be bool, got ${cond.dtype}`);
    const aa = typeof a === 'number' ? this.scalar(a) : a;
    const bb = typeof b === 'number' ? this.scalar(b) : b;
    if (aa.dtype !== bb.dtype) throw new TypeError(`Where: branch dtypes differ (${aa.dtype} vs ${bb.dtype})`);
    const shape = broadcastShapes(cond.shape, aa.shape, bb.shape);
    const out = this.node('Where', [cond, aa, bb], {}, shape, aa.dtype);
    return this.record('Where', out, [cond, aa, bb], (gy, needs) => {
      const zero = this.scalar(0);
      return [
        null,
        needs[1] ? this.unbroadcast(this.where(cond, gy, zero), aa.shape) : null,
        needs[2] ? this.unbroadcast(this.where(cond, zero, gy), bb.shape) : null,
      ];
    });
  }

  /** Elementwise max (ties send the gradient to `a`). */
  maximum(a: Tensor, b: Tensor | number): Tensor {
    const bb = typeof b === 'number' ? this.scalar(b) : b;
    return this.where(this.less(a, bb), bb, a);
  }
  /** Elementwise min (ties send the gradient to `a`). */
  minimum(a: Tensor, b: Tensor | number): Tensor {
    const bb = typeof b === 'number' ? this.scalar(b) : b;
    return this.where(this.greater(a, bb), bb, a);
  }

  cast(x: Tensor, to: DType): Tensor {
    if (x.dtype === to) return x;
    const out = this.node('Cast', [x], { to: { kind: 'int', value: { float32: 1, int32: 6, int64: 7, bool: 9 }[to] } }, x.shape, to);
    return this.record('Cast', out, [x], () => [null]);
  }

  // ------------------------------------------------------------------ reductions

  private reduce(op: 'ReduceSum' | 'ReduceMean' | 'ReduceMax', x: Tensor, axes: readonly number[] | undefined, keepdims: boolean): Tensor {
    this.checkFloat(op, x);
    const r = x.shape.length;
    const ax = axes === undefined ? x.shape.map((_, i) => i) : [...new Set(axes.map((a) => normAxis(a, r)))].sort((p, q) => p - q);
    const keepShape = x.shape.map((d, i) => (ax.includes(i) ? 1 : d));
    const shape = keepdims ? keepShape : x.shape.filter((_, i) => !ax.includes(i));
    const out = this.node(op, [x, this.ints(ax)], { keepdims: { kind: 'int', value: keepdims ? 1 : 0 } }, shape, 'float32');
    return this.record(op, out, [x], (gy) => {
      const gk = this.reshape(gy, keepShape);
      if (op === 'ReduceSum') return [this.expand(gk, x.shape)];
      if (op === 'ReduceMean') return [this.expand(this.mul(gk, 1 / numel(ax.map((a) => x.shape[a]))), x.shape)];
      // Max: the gradient is shared equally among tied maxima.
      const mask = this.cast(this.equal(x, this.reshape(out, keepShape)), 'float32');
      const count = this.reduceSum(mask, ax, true);
      return [this.mul(mask, this.div(gk, count))];
    });
  }

  /** Sum over `axes` (all axes when omitted). */
  reduceSum(x: Tensor, axes?: readonly number[], keepdims = false): Tensor {
    return this.reduce('ReduceSum', x, axes, keepdims);
  }
  reduceMean(x: Tensor, axes?: readonly number[], keepdims = false): Tensor {
    return this.reduce('ReduceMean', x, axes, keepdims);
  }
  reduceMax(x: Tensor, axes?: readonly number[], keepdims = false): Tensor {
    return this.reduce('ReduceMax', x, axes, keepdims);
  }

  /** Softmax along one axis (opset-13 semantics: normalised over that axis only). */
  softmax(x: Tensor, axis = -1): Tensor {
    this.checkFloat('Softmax', x);
    const ax = normAxis(axis, x.shape.length);
    const out = this.node('Softmax', [x], { axis: { kind: 'int', value: ax } }, x.shape, 'float32');
    // dx = y ⊙ (gy − Σ_axis gy ⊙ y)
    return this.record('Softmax', out, [x], (gy) => [this.mul(out, this.sub(gy, this.reduceSum(this.mul(gy, out), [ax], true)))]);
  }

  // ------------------------------------------------------------------ linear algebra

  /**
   * Matrix product. Supported: [M,K]@[K,N]; [...,M,K]@[K,N] (weights shared over leading axes);
   * [...,M,K]@[...,K,N] with identical leading axes (attention).
   */
  matmul(a: Tensor, b: Tensor): Tensor {
    this.checkFloat('MatMul', a, b);
    const ra = a.shape.length;
    const rb = b.shape.length;
    if (ra < 2 || rb < 2) throw new RangeError(`MatMul: operands must be at least 2-D, got ${fmt(a.shape)} and ${fmt(b.shape)}`);
    const [M, K] = a.shape.slice(-2);
    const [K2, N] = b.shape.slice(-2);
    if (K !== K2) throw new RangeError(`MatMul: inner dims differ, ${fmt(a.shape)} @ ${fmt(b.shape)}`);
    if (rb > 2 && !sameShape(a.shape.slice(0, -2), b.shape.slice(0, -2))) {
      throw new RangeError(`MatMul: batched operands need identical leading dims, ${fmt(a.shape)} @ ${fmt(b.shape)}`);
    }
    const lead = a.shape.slice(0, -2);
    const shape = [...lead, M, N];
    if (ra === 2 && rb === 2) {
      const out = this.node('Gemm', [a, b], {}, shape, 'float32');
      return this.record('MatMul', out, [a, b], (gy, needs) => [
        needs[0] ? this.gemm(gy, b, false, true) : null,
        needs[1] ? this.gemm(a, gy, true, false) : null,
      ]);
    }
    const out = this.node('MatMul', [a, b], {}, shape, 'float32');
    return this.record('MatMul', out, [a, b], (gy, needs) => {
      if (rb === 2) {
        // Shared weights: flatten the leading axes, dB = A2ᵀ·G2.
        const rows = numel(a.shape.slice(0, -1));
        return [
          needs[0] ? this.matmul(gy, this.transpose(b, [1, 0])) : null,
          needs[1] ? this.gemm(this.reshape(a, [rows, K]), this.reshape(gy, [rows, N]), true, false) : null,
        ];
      }
      return [needs[0] ? this.matmul(gy, this.swapLast(b)) : null, needs[1] ? this.matmul(this.swapLast(a), gy) : null];
    });
  }

  /** 2-D Gemm with optional transposes, no tape (used by VJPs only). */
  private gemm(a: Tensor, b: Tensor, transA: boolean, transB: boolean): Tensor {
    const M = transA ? a.shape[1] : a.shape[0];
    const N = transB ? b.shape[0] : b.shape[1];
    const attrs: Record<string, AttrValue> = {};
    if (transA) attrs.transA = { kind: 'int', value: 1 };
    if (transB) attrs.transB = { kind: 'int', value: 1 };
    return this.node('Gemm', [a, b], attrs, [M, N], 'float32');
  }

  private swapLast(x: Tensor): Tensor {
    const r = x.shape.length;
    const perm = x.shape.map((_, i) => i);
    perm[r - 2] = r - 1;
    perm[r - 1] = r - 2;
    return this.transpose(x, perm);
  }

  // ------------------------------------------------------------------ shape ops

  transpose(x: Tensor, perm: readonly number[]): Tensor {
    if (perm.length !== x.shape.length || [...perm].sort().some((p, i) => p !== i)) throw new RangeError(`Transpose: bad perm [${perm}] for ${fmt(x.shape)}`);
    const shape = perm.map((p) => x.shape[p]);
    const out = this.node('Transpose', [x], { perm: { kind: 'ints', value: perm } }, shape, x.dtype);
    const inv: number[] = [];
    perm.forEach((p, i) => (inv[p] = i));
    return this.record('Transpose', out, [x], (gy) => [this.transpose(gy, inv)]);
  }

  /** Reshape to a static shape; one entry may be -1. */
  reshape(x: Tensor, shape: readonly number[]): Tensor {
    const known = shape.filter((d) => d !== -1);
    const resolved = shape.map((d) => (d === -1 ? numel(x.shape) / numel(known) : d));
    if (numel(resolved) !== numel(x.shape) || !resolved.every(Number.isInteger)) {
      throw new RangeError(`Reshape: cannot reshape ${fmt(x.shape)} to ${fmt(shape)}`);
    }
    if (sameShape(resolved, x.shape)) return x;
    const out = this.node('Reshape', [x, this.ints(resolved)], {}, resolved, x.dtype);
    return this.record('Reshape', out, [x], (gy) => [this.reshape(gy, x.shape)]);
  }

  concat(xs: readonly Tensor[], axis: number): Tensor {
    if (xs.length === 0) throw new RangeError('Concat: no inputs');
    const r = xs[0].shape.length;
    const ax = normAxis(axis, r);
    for (const t of xs) {
      if (t.dtype !== xs[0].dtype || t.shape.length !== r || t.shape.some((d, i) => i !== ax && d !== xs[0].shape[i])) {
        throw new RangeError(`Concat: incompatible ${xs.map((q) => fmt(q.shape) + q.dtype).join(', ')} on axis ${ax}`);
      }
    }
    const shape = [...xs[0].shape];
    shape[ax] = xs.reduce((s, t) => s + t.shape[ax], 0);
    const out = this.node('Concat', xs, { axis: { kind: 'int', value: ax } }, shape, xs[0].dtype);
    return this.record('Concat', out, xs, (gy, needs) => {
      let off = 0;
      return xs.map((t, i) => {
        const start = off;
        off += t.shape[ax];
        return needs[i] ? this.slice(gy, ax, start, off) : null;
      });
    });
  }

  /** x[..., start:end, ...] along one axis (step 1). */
  slice(x: Tensor, axis: number, start: number, end: number): Tensor {
    const ax = normAxis(axis, x.shape.length);
    if (!(0 <= start && start < end && end <= x.shape[ax])) throw new RangeError(`Slice: [${start}, ${end}) out of range for axis ${ax} of ${fmt(x.shape)}`);
    const shape = [...x.shape];
    shape[ax] = end - start;
    if (sameShape(shape, x.shape)) return x;
    const out = this.node('Slice', [x, this.ints([start]), this.ints([end]), this.ints([ax])], {}, shape, x.dtype);
    return this.record('Slice', out, [x], (gy) => {
      // Zero-pad the gradient back to the input's extent along the axis.
      const pads = new Array<number>(2 * x.shape.length).fill(0);
      pads[ax] = start;
      pads[x.shape.length + ax] = x.shape[ax] - end;
      return [this.node('Pad', [gy, this.ints(pads)], {}, x.shape, 'float32')];
    });
  }

  /**
   * Rows of a 2-D table: table[V,D] gathered by int indices [...] → [..., D].
   * The gradient is a one-hot MatMul (no ScatterND: WebGPU-friendly, and exact for repeats).
   */
  gather(table: Tensor, indices: Tensor): Tensor {
    if (table.shape.length !== 2) throw new RangeError(`gather: table must be 2-D, got ${fmt(table.shape)}`);
    if (indices.dtype !== 'int32' && indices.dtype !== 'int64') throw new TypeError(`gather: indices must be int32/int64, got ${indices.dtype}`);
    const [V, D] = table.shape;
    const shape = [...indices.shape, D];
    const out = this.node('Gather', [table, indices], { axis: { kind: 'int', value: 0 } }, shape, table.dtype);
    return this.record('Gather', out, [table, indices], (gy) => {
      const n = numel(indices.shape);
      const oh = this.oneHot(this.reshape(indices, [n]), V);
      return [this.gemm(oh, this.reshape(gy, [n, D]), true, false), null];
    });
  }

  /** One-hot float32 [..., depth] from int indices [...] (Equal against an iota constant). */
  oneHot(indices: Tensor, depth: number): Tensor {
    const iota = this.constant(Array.from({ length: depth }, (_, i) => i), [depth], indices.dtype);
    const col = this.node('Reshape', [indices, this.ints([...indices.shape, 1])], {}, [...indices.shape, 1], indices.dtype);
    return this.cast(this.equal(col, iota), 'float32');
  }

  /** A float32 tensor of zeros of the given shape. */
  zeros(shape: Shape): Tensor {
    return this.node('Expand', [this.scalar(0), this.ints(shape)], {}, shape, 'float32');
  }

  // ------------------------------------------------------------------ autodiff

  /**
   * Reverse-mode gradients of a scalar `loss` with respect to `wrt`, emitted into this graph.
   * Inputs that `loss` does not depend on get a zero tensor.
   */
  grad(loss: Tensor, wrt: readonly Tensor[]): Tensor[] {
    if (loss.shape.length !== 0) throw new RangeError(`grad: loss must be a scalar, got ${fmt(loss.shape)}`);
    const needs = new Set(wrt.map((t) => t.name));
    for (const e of this.tape) if (e.ins.some((t) => needs.has(t.name))) needs.add(e.out.name);
    const adj = new Map<string, Tensor>([[loss.name, this.scalar(1)]]);
    const wasRecording = this.recording;
    this.recording = false;
    try {
      for (let i = this.tape.length - 1; i >= 0; i--) {
        const e = this.tape[i];
        const gy = adj.get(e.out.name);
        if (!gy) continue;
        const mask = e.ins.map((t) => t.dtype === 'float32' && needs.has(t.name));
        if (!mask.some(Boolean)) continue;
        const gs = e.vjp(gy, mask);
        e.ins.forEach((t, j) => {
          const g = gs[j];
          if (!mask[j] || !g) return;
          if (!sameShape(g.shape, t.shape)) throw new Error(`VJP of ${e.op} gave ${fmt(g.shape)} for input ${t.name} ${fmt(t.shape)}`);
          const prev = adj.get(t.name);
          adj.set(t.name, prev ? this.add(prev, g) : g);
        });
      }
    } finally {
      this.recording = wasRecording;
    }
    return wrt.map((w) => adj.get(w.name) ?? this.zeros(w.shape));
  }
}
