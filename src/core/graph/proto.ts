/**
 * A minimal protobuf writer for the subset of `onnx.proto` (ONNX IR 8) the graph builder emits:
 * ModelProto, GraphProto, NodeProto, AttributeProto, TensorProto, ValueInfoProto.
 *
 * Why our own writer instead of a protobuf library: it is ~150 lines, pure, has no runtime
 * dependency in src/core, and the tests decode its output with an independent decoder
 * (`onnx-proto`) and run it in two ONNX runtimes. Field numbers below are from onnx.proto.
 * ONNX is proto2: repeated scalars are written unpacked (parsers accept either form).
 * Tensor data goes in `raw_data` as little-endian bytes (every browser engine is little-endian).
 */

/** ONNX TensorProto.DataType values for the dtypes the builder uses. */
export const ONNX_DTYPE = { float32: 1, int32: 6, int64: 7, bool: 9 } as const;
export type DType = keyof typeof ONNX_DTYPE;

export interface TensorInit {
  name: string;
  dtype: DType;
  dims: readonly number[];
  /** Element data; int64 given as plain numbers (|v| < 2^53) or a BigInt64Array. */
  data: Float32Array | Int32Array | BigInt64Array | Uint8Array | readonly number[];
}

export type AttrValue =
  | { kind: 'int'; value: number }
  | { kind: 'float'; value: number }
  | { kind: 'ints'; value: readonly number[] }
  | { kind: 'string'; value: string };

export interface NodeDef {
  opType: string;
  name: string;
  inputs: readonly string[];
  outputs: readonly string[];
  attrs: Readonly<Record<string, AttrValue>>;
}

export interface ValueInfo {
  name: string;
  dtype: DType;
  dims: readonly number[];
}

export interface ModelDef {
  graphName: string;
  nodes: readonly NodeDef[];
  initializers: readonly TensorInit[];
  inputs: readonly ValueInfo[];
  outputs: readonly ValueInfo[];
  opset: number;
  irVersion: number;
  producer: string;
}

/** Growable byte buffer with protobuf wire-format primitives. */
class Writer {
  private buf = new Uint8Array(256);
  private len = 0;

  private ensure(n: number): void {
    if (this.len + n <= this.buf.length) return;
    let cap = this.buf.length * 2;
    while (cap < this.len + n) cap *= 2;
    const next = new Uint8Array(cap);
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
  }

  byte(b: number): void {
    this.ensure(1);
    this.buf[this.len++] = b;
  }

  bytes(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.len);
    this.len += b.length;
  }

  /** Varint of a signed 64-bit integer (negatives take 10 bytes, two's complement). */
  varint(v: number | bigint): void {
    let x = BigInt.asUintN(64, BigInt(v));
    if (typeof v === 'number' && v >= 0 && v < 2 ** 31) {
      let n = v;
      while (n >= 0x80) {
        this.byte((n & 0x7f) | 0x80);
        n >>>= 7;
      }
      this.byte(n);
      return;
    }
    while (x >= 0x80n) {
      this.byte(Number(x & 0x7fn) | 0x80);
      x >>= 7n;
    }
    this.byte(Number(x));
  }

  tag(field: number, wire: 0 | 1 | 2 | 5): void {
    this.varint((field << 3) | wire);
  }

  intField(field: number, v: number | bigint): void {
    this.tag(field, 0);
    this.varint(v);
  }

  floatField(field: number, v: number): void {
    this.tag(field, 5);
    const b = new Uint8Array(4);
    new DataView(b.buffer).setFloat32(0, v, true);
    this.bytes(b);
  }

  bytesField(field: number, b: Uint8Array): void {
    this.tag(field, 2);
    this.varint(b.length);
    this.bytes(b);
  }

  stringField(field: number, s: string): void {
    this.bytesField(field, new TextEncoder().encode(s));
  }

  message(field: number, write: (w: Writer) => void): void {
    const inner = new Writer();
    write(inner);
    this.bytesField(field, inner.finish());
  }

  finish(): Uint8Array {
    return this.buf.slice(0, this.len);
  }
}

function tensorBytes(t: TensorInit): Uint8Array {
  const d = t.data;
  if (t.dtype === 'int64') {
    const arr = d instanceof BigInt64Array ? d : BigInt64Array.from(d as readonly number[], (x) => BigInt(x));
    return new Uint8Array(arr.buffer, arr.byteOffset, arr.byteLength);
  }
  const typed =
    t.dtype === 'float32'
      ? d instanceof Float32Array ? d : Float32Array.from(d as readonly number[])
      : t.dtype === 'int32'
        ? d instanceof Int32Array ? d : Int32Array.from(d as readonly number[])
        : d instanceof Uint8Array ? d : Uint8Array.from(d as readonly number[]);
  return new Uint8Array(typed.buffer, typed.byteOffset, typed.byteLength);
}

function writeTensor(w: Writer, t: TensorInit): void {
  for (const d of t.dims) w.intField(1, d);
  w.intField(2, ONNX_DTYPE[t.dtype]);
  w.stringField(8, t.name);
  w.bytesField(9, tensorBytes(t));
}

function writeValueInfo(w: Writer, v: ValueInfo): void {
  w.stringField(1, v.name);
  // TypeProto { tensor_type(1): { elem_type(1), shape(2): { dim(1): { dim_value(1) } } } }
  w.message(2, (tp) =>
    tp.message(1, (tt) => {
      tt.intField(1, ONNX_DTYPE[v.dtype]);
      tt.message(2, (sh) => {
        for (const d of v.dims) sh.message(1, (dim) => dim.intField(1, d));
      });
    }),
  );
}

function writeAttr(w: Writer, name: string, a: AttrValue): void {
  w.stringField(1, name);
  // AttributeType: FLOAT=1, INT=2, STRING=3, INTS=7.
  switch (a.kind) {
    case 'float':
      w.floatField(2, a.value);
      w.intField(20, 1);
      break;
    case 'int':
      w.intField(3, a.value);
      w.intField(20, 2);
      break;
    case 'string':
      w.stringField(4, a.value);
      w.intField(20, 3);
      break;
    case 'ints':
      for (const v of a.value) w.intField(8, v);
      w.intField(20, 7);
      break;
  }
}

function writeNode(w: Writer, n: NodeDef): void {
  for (const i of n.inputs) w.stringField(1, i);
  for (const o of n.outputs) w.stringField(2, o);
  w.stringField(3, n.name);
  w.stringField(4, n.opType);
  for (const [k, a] of Object.entries(n.attrs)) w.message(5, (aw) => writeAttr(aw, k, a));
}

/** Serialise a model to ONNX protobuf bytes. */
export function encodeModel(m: ModelDef): Uint8Array {
  const w = new Writer();
  w.intField(1, m.irVersion);
  w.stringField(2, m.producer);
  w.message(7, (g) => {
    for (const n of m.nodes) g.message(1, (nw) => writeNode(nw, n));
    g.stringField(2, m.graphName);
    for (const t of m.initializers) g.message(5, (tw) => writeTensor(tw, t));
    for (const v of m.inputs) g.message(11, (vw) => writeValueInfo(vw, v));
    for (const v of m.outputs) g.message(12, (vw) => writeValueInfo(vw, v));
  });
  w.message(8, (o) => {
    o.stringField(1, '');
    o.intField(2, m.opset);
  });
  return w.finish();
}
