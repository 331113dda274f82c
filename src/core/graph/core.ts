/**
 * The graph's bookkeeping under the ops (builder.ts): value names, inputs, params and outputs,
 * deduplicated constants, raw nodes, the tape each differentiable op records its VJP on, and the
 * ONNX serialiser. `Graph` (builder.ts) adds the op set and `grad` on top.
 */
import { encodeModel, type AttrValue, type DType, type NodeDef, type TensorInit, type ValueInfo } from './proto.ts';
import { fmt, numel, type Shape } from './shape.ts';

/** A symbolic tensor: a value name in the graph with its static shape and dtype. */
export interface Tensor {
  readonly name: string;
  readonly shape: Shape;
  readonly dtype: DType;
}

/** Given the output gradient, return one gradient per input (null where not needed). */
export type Vjp = (gy: Tensor, needs: readonly boolean[]) => (Tensor | null)[];

export interface TapeEntry {
  op: string;
  out: Tensor;
  ins: readonly Tensor[];
  vjp: Vjp;
}

export const OPSET = 18;
const IR_VERSION = 8;

export class GraphCore {
  private readonly nodes: NodeDef[] = [];
  private readonly inits: TensorInit[] = [];
  private readonly inputList: Tensor[] = [];
  private readonly outputList: Tensor[] = [];
  protected readonly tape: TapeEntry[] = [];
  private readonly used = new Set<string>();
  private readonly constCache = new Map<string, Tensor>();
  private counter = 0;
  /** Off while grad() emits backward nodes: the backward pass is not itself differentiated. */
  protected recording = true;
  /** Names of inputs declared with `param` (trainable float tensors). */
  readonly params: Tensor[] = [];

  constructor(readonly name = 'graph') {}

  // ------------------------------------------------------------------ naming, values

  private fresh(prefix: string): string {
    let n: string;
    do n = `${prefix}_${this.counter++}`;
    while (this.used.has(n));
    this.used.add(n);
    return n;
  }

  private claim(name: string): string {
    if (this.used.has(name)) throw new Error(`graph '${this.name}': name '${name}' is already used`);
    this.used.add(name);
    return name;
  }

  /** A graph input (fed at run time). */
  input(name: string, shape: Shape, dtype: DType = 'float32'): Tensor {
    const t: Tensor = { name: this.claim(name), shape: [...shape], dtype };
    this.inputList.push(t);
    return t;
  }

  /** A trainable parameter: a float32 graph input that `toOnnx({ bake })` can turn into an initializer. */
  param(name: string, shape: Shape): Tensor {
    const t = this.input(name, shape, 'float32');
    this.params.push(t);
    return t;
  }

  /** Mark a tensor as a graph output under `name` (adds an Identity when the names differ). */
  output(t: Tensor, name: string = t.name): Tensor {
    const out = name === t.name ? t : this.node('Identity', [t], {}, t.shape, t.dtype, this.claim(name));
    if (this.outputList.some((o) => o.name === out.name)) throw new Error(`output '${name}' declared twice`);
    this.outputList.push(out);
    return out;
  }

  get inputs(): readonly Tensor[] {
    return this.inputList;
  }

  get outputs(): readonly Tensor[] {
    return this.outputList;
  }

  /** A constant tensor (an initializer), deduplicated by content. */
  constant(data: readonly number[] | Float32Array | Int32Array, shape: Shape, dtype: DType = 'float32'): Tensor {
    if (data.length !== numel(shape)) throw new RangeError(`constant: ${data.length} values for shape ${fmt(shape)}`);
    const key = `${dtype}|${shape.join(',')}|${Array.from(data).join(',')}`;
    const hit = key.length < 512 ? this.constCache.get(key) : undefined;
    if (hit) return hit;
    const name = this.fresh(dtype === 'int64' ? 'shape' : 'const');
    const arr =
      dtype === 'float32' ? Float32Array.from(data) : dtype === 'int32' ? Int32Array.from(data) : dtype === 'bool' ? Uint8Array.from(data) : Array.from(data);
    this.inits.push({ name, dtype, dims: [...shape], data: arr });
    const t: Tensor = { name, shape: [...shape], dtype };
    if (key.length < 512) this.constCache.set(key, t);
    return t;
  }

  /** A float32 scalar constant. */
  scalar(v: number): Tensor {
    return this.constant([v], [], 'float32');
  }

  protected ints(v: readonly number[]): Tensor {
    return this.constant(v, [v.length], 'int64');
  }

  /** Emit one raw ONNX node (no tape). Escape hatch for ops with no gradient. */
  node(opType: string, ins: readonly (Tensor | null)[], attrs: Record<string, AttrValue>, shape: Shape, dtype: DType, outName?: string): Tensor {
    const name = outName ?? this.fresh(opType);
    this.nodes.push({ opType, name: `n_${name}`, inputs: ins.map((t) => (t ? t.name : '')), outputs: [name], attrs });
    return { name, shape: [...shape], dtype };
  }

  protected record(op: string, out: Tensor, ins: readonly Tensor[], vjp: Vjp): Tensor {
    if (this.recording && out.dtype === 'float32' && ins.some((t) => t.dtype === 'float32')) this.tape.push({ op, out, ins, vjp });
    return out;
  }

  protected checkFloat(op: string, ...ts: Tensor[]): void {
    for (const t of ts) if (t.dtype !== 'float32') throw new TypeError(`${op}: expected float32, got ${t.dtype} (${t.name})`);
  }

  // ------------------------------------------------------------------ serialisation

  /**
   * ONNX model bytes. `bake` turns the named params into initializers with the given values
   * (for a standalone exported policy); all other params stay graph inputs.
   */
  toOnnx(opts: { bake?: Readonly<Record<string, Float32Array>>; producer?: string } = {}): Uint8Array {
    const bake = opts.bake ?? {};
    const baked: TensorInit[] = [];
    const inputs: ValueInfo[] = [];
    for (const t of this.inputList) {
      const v = bake[t.name];
      if (v && this.params.includes(t)) {
        if (v.length !== numel(t.shape)) throw new RangeError(`bake: ${t.name} has ${v.length} values, expected ${numel(t.shape)}`);
        baked.push({ name: t.name, dtype: 'float32', dims: t.shape, data: v });
      } else inputs.push({ name: t.name, dtype: t.dtype, dims: t.shape });
    }
    const outputs = this.outputList.map((t) => ({ name: t.name, dtype: t.dtype, dims: t.shape }));
    if (outputs.length === 0) throw new Error(`graph '${this.name}' has no outputs`);
    return encodeModel({
      graphName: this.name,
      nodes: this.nodes,
      initializers: [...this.inits, ...baked],
      inputs,
      outputs,
      opset: OPSET,
      irVersion: IR_VERSION,
      producer: opts.producer ?? 'agentic-rl-playground',
    });
  }

  /** Node count by op type (for tests that check which kernels a graph needs). */
  opCounts(): Record<string, number> {
    const c: Record<string, number> = {};
    for (const n of this.nodes) c[n.opType] = (c[n.opType] ?? 0) + 1;
    return c;
  }
}

