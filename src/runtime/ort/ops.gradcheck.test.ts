/**
 * One finite-difference check per op's VJP (onnxruntime-node runs the graphs; a second pass
 * of a few ops on onnxruntime-web WASM checks that the same graphs run there too).
 */
import { afterAll, describe, expect, it } from 'vitest';
import * as ortNode from 'onnxruntime-node';
import * as ortWeb from 'onnxruntime-web';
import onnxProto from 'onnx-proto';
import { Graph, type Tensor } from '../../core/graph/builder.ts';
import { gelu, layerNorm, logSoftmax } from '../../core/graph/nn.ts';
import { gradcheck, type GradcheckInput } from './gradcheck.ts';
import type { OrtModule } from './session.ts';

ortWeb.env.wasm.numThreads = 1;
const node = ortNode as unknown as OrtModule;

const away = (n: number, lo = 0.2) => Float32Array.from({ length: n }, (_, i) => (i % 2 ? 1 : -1) * (lo + ((i * 0.37) % 0.8)));
const pos = (n: number) => Float32Array.from({ length: n }, (_, i) => 0.5 + ((i * 0.61) % 1.5));

interface Case {
  name: string;
  inputs: GradcheckInput[];
  f: (g: Graph, x: Tensor[]) => Tensor;
  h?: number;
}

const cases: Case[] = [
  { name: 'Add (broadcast [3,4]+[4])', inputs: [{ shape: [3, 4] }, { shape: [4] }], f: (g, [a, b]) => g.add(a, b) },
  { name: 'Add (broadcast [3,1]+[1,4])', inputs: [{ shape: [3, 1] }, { shape: [1, 4] }], f: (g, [a, b]) => g.add(a, b) },
  { name: 'Sub (broadcast [2,3,4]-[3,1])', inputs: [{ shape: [2, 3, 4] }, { shape: [3, 1] }], f: (g, [a, b]) => g.sub(a, b) },
  { name: 'Mul (broadcast scalar)', inputs: [{ shape: [3, 4] }, { shape: [] }], f: (g, [a, b]) => g.mul(a, b) },
  { name: 'Div', inputs: [{ shape: [3, 4] }, { shape: [4], values: pos(4) }], f: (g, [a, b]) => g.div(a, b) },
  { name: 'Neg', inputs: [{ shape: [5] }], f: (g, [a]) => g.neg(a) },
  { name: 'Exp', inputs: [{ shape: [5] }], f: (g, [a]) => g.exp(a) },
  { name: 'Log', inputs: [{ shape: [5], values: pos(5) }], f: (g, [a]) => g.log(a) },
  { name: 'Sqrt', inputs: [{ shape: [5], values: pos(5) }], f: (g, [a]) => g.sqrt(a) },
  { name: 'Tanh', inputs: [{ shape: [5] }], f: (g, [a]) => g.tanh(a) },
  { name: 'Relu', inputs: [{ shape: [8], values: away(8) }], f: (g, [a]) => g.relu(a) },
  { name: 'Erf', inputs: [{ shape: [6] }], f: (g, [a]) => g.erf(a) },
  { name: 'Pow (p=3)', inputs: [{ shape: [6] }], f: (g, [a]) => g.pow(a, 3) },
  { name: 'Pow (p=-0.5)', inputs: [{ shape: [6], values: pos(6) }], f: (g, [a]) => g.pow(a, -0.5) },
  { name: 'MatMul 2D (Gemm)', inputs: [{ shape: [3, 4] }, { shape: [4, 5] }], f: (g, [a, b]) => g.matmul(a, b) },
  { name: 'MatMul [2,3,4]@[4,5] shared', inputs: [{ shape: [2, 3, 4] }, { shape: [4, 5] }], f: (g, [a, b]) => g.matmul(a, b) },
  { name: 'MatMul batched [2,2,3,4]@[2,2,4,3]', inputs: [{ shape: [2, 2, 3, 4] }, { shape: [2, 2, 4, 3] }], f: (g, [a, b]) => g.matmul(a, b) },
  { name: 'ReduceSum axis 1 keepdims', inputs: [{ shape: [2, 3, 4] }], f: (g, [a]) => g.reduceSum(a, [1], true) },
  { name: 'ReduceSum all', inputs: [{ shape: [2, 3] }], f: (g, [a]) => g.reduceSum(a) },
  { name: 'ReduceMean axes [0,2]', inputs: [{ shape: [2, 3, 4] }], f: (g, [a]) => g.reduceMean(a, [0, 2]) },
  { name: 'ReduceMax last axis', inputs: [{ shape: [3, 5], values: away(15) }], f: (g, [a]) => g.reduceMax(a, [-1]) },
  { name: 'Softmax', inputs: [{ shape: [3, 5] }], f: (g, [a]) => g.softmax(a, -1) },
  { name: 'Softmax axis 0', inputs: [{ shape: [3, 5] }], f: (g, [a]) => g.softmax(a, 0) },
  { name: 'Transpose', inputs: [{ shape: [2, 3, 4] }], f: (g, [a]) => g.transpose(a, [2, 0, 1]) },
  { name: 'Reshape', inputs: [{ shape: [2, 6] }], f: (g, [a]) => g.reshape(a, [3, -1]) },
  { name: 'Concat axis 1', inputs: [{ shape: [2, 3] }, { shape: [2, 2] }], f: (g, [a, b]) => g.concat([a, b], 1) },
  { name: 'Slice axis 1', inputs: [{ shape: [2, 5] }], f: (g, [a]) => g.slice(a, 1, 1, 4) },
  {
    name: 'Gather rows (repeated indices)',
    inputs: [{ shape: [5, 3] }, { shape: [2, 3], dtype: 'int32', values: Int32Array.from([0, 4, 4, 1, 0, 2]) }],
    f: (g, [t, i]) => g.gather(t, i),
  },
  {
    name: 'Where',
    inputs: [{ shape: [2, 3] }, { shape: [3] }, { shape: [2, 3], values: away(6) }],
    f: (g, [a, b, c]) => g.where(g.greater(c, 0), a, b),
  },
  { name: 'maximum/minimum via Where', inputs: [{ shape: [6], values: away(6) }, { shape: [6], values: away(6, 0.1).reverse() }], f: (g, [a, b]) => g.add(g.maximum(a, b), g.mul(g.minimum(a, b), 2)) },
  { name: 'Expand', inputs: [{ shape: [3, 1] }], f: (g, [a]) => g.expand(a, [2, 3, 4]) },
  { name: 'logSoftmax (decomposed)', inputs: [{ shape: [3, 6] }], f: (g, [a]) => logSoftmax(g, a) },
  { name: 'layerNorm (decomposed)', inputs: [{ shape: [3, 6] }, { shape: [6] }, { shape: [6] }], f: (g, [x, w, b]) => layerNorm(g, x, w, b) },
  { name: 'gelu', inputs: [{ shape: [8] }], f: (g, [a]) => gelu(g, a) },
  { name: 'fan-out accumulation (x·x + tanh x)', inputs: [{ shape: [4] }], f: (g, [a]) => g.add(g.mul(a, a), g.tanh(a)) },
];

const errors: [string, number][] = [];
describe('op VJPs match central finite differences (onnxruntime-node)', () => {
  afterAll(() => {
    if (process.env.GRADCHECK_REPORT) console.log(errors.map(([n, e]) => `${e.toExponential(2)}  ${n}`).join('\n'));
  });
  for (const c of cases) {
    it(c.name, async () => {
      const r = await gradcheck(node, c.inputs, c.f, { h: c.h ?? 1e-2 });
      errors.push([c.name, r.maxRelErr]);
      expect(r.maxAbsGrad).toBeGreaterThan(1e-3);
      expect(r.maxRelErr).toBeLessThan(1e-2);
    });
  }
});

describe('the same graphs run on onnxruntime-web WASM', () => {
  for (const c of cases.filter((q) => /MatMul batched|Gather|logSoftmax|layerNorm|Slice|ReduceMax/.test(q.name))) {
    it(c.name, async () => {
      const r = await gradcheck(ortWeb as unknown as OrtModule, c.inputs, c.f, { maxEntries: 6 });
      expect(r.maxRelErr).toBeLessThan(1e-2);
    });
  }
});

describe('hand-worked gradients', () => {
  it('stopGradient blocks the gradient: d/dx [x · sg(x)] = sg(x) = x, not 2x', async () => {
    const g = new Graph('sg');
    const x = g.input('x', [3]);
    const loss = g.reduceSum(g.mul(x, g.stopGradient(x)));
    g.output(g.grad(loss, [x])[0], 'dx');
    const s = await ortNode.InferenceSession.create(g.toOnnx());
    const r = await s.run({ x: new ortNode.Tensor('float32', Float32Array.of(1, -2, 3), [3]) });
    expect(Array.from(r.dx.data as Float32Array)).toEqual([1, -2, 3]);
  });
  it('an input the loss does not depend on gets an exact zero gradient of its shape', async () => {
    const g = new Graph('unused');
    const x = g.input('x', [2]);
    const y = g.input('y', [2, 2]);
    const [, dy] = g.grad(g.reduceSum(g.exp(x)), [x, y]);
    g.output(dy, 'dy');
    const s = await ortNode.InferenceSession.create(g.toOnnx());
    const r = await s.run({ x: new ortNode.Tensor('float32', Float32Array.of(0, 1), [2]), y: new ortNode.Tensor('float32', new Float32Array(4), [2, 2]) });
    expect(Array.from(r.dy.data as Float32Array)).toEqual([0, 0, 0, 0]);
    expect(r.dy.dims).toEqual([2, 2]);
  });
  it('shape errors name both shapes', () => {
    const g = new Graph('bad');
    expect(() => g.add(g.input('a', [2, 3]), g.input('b', [4]))).toThrow(/\[2,3\] and \[4\]/);
    expect(() => g.matmul(g.input('c', [2, 3]), g.input('d', [4, 5]))).toThrow(/inner dims differ/);
  });
});

describe('protobuf writer', () => {
  it('negative int64 values and int64 initializers decode correctly (onnx-proto)', () => {
    const g = new Graph('ints');
    const x = g.input('x', [2, 3]);
    g.output(g.node('Transpose', [x], { perm: { kind: 'ints', value: [1, 0] }, bogus: { kind: 'int', value: -7 } }, [3, 2], 'float32'), 'y');
    g.output(g.constant([-1, 5, -123456789], [3], 'int64'), 'k');
    interface Dec {
      graph: { node: { attribute: { name: string; i: { toString(): string }; ints: { toString(): string }[] }[] }[]; initializer: { dims: number[]; dataType: number; rawData: Uint8Array }[] };
    }
    const m = onnxProto.onnx.ModelProto.decode(g.toOnnx()) as unknown as Dec;
    const attrs = m.graph.node[0].attribute;
    expect(attrs.find((a) => a.name === 'bogus')!.i.toString()).toBe('-7');
    expect(attrs.find((a) => a.name === 'perm')!.ints.map(String)).toEqual(['1', '0']);
    const init = m.graph.initializer[0];
    expect(init.dataType).toBe(7);
    const raw = init.rawData;
    expect(Array.from(new BigInt64Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength)), Number)).toEqual([-1, 5, -123456789]);
  });
});
