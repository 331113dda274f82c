/**
 * Observation and action spaces, Gymnasium style. A space both documents what an env
 * produces or accepts and checks it (`contains`), which `checkEnv` relies on.
 */
import type { Rng } from '../util/rng.ts';

export type TypedArray = Int32Array | Float32Array | Uint8Array;

/** Integers 0..n-1. */
export interface DiscreteSpace {
  kind: 'discrete';
  n: number;
  /** Optional human names for each value, e.g. grid actions. */
  labels?: readonly string[];
}

/** A fixed-shape typed array with element bounds (inclusive). */
export interface BoxSpace {
  kind: 'box';
  shape: readonly number[];
  /** Bound of every element (the loosest, when `perElement` gives tighter ones); ±Infinity for an open side. */
  low: number;
  high: number;
  dtype: 'uint8' | 'int32' | 'float32';
  /** Optional bounds per element (flat, row-major), as Gymnasium's Box(low=array, high=array). */
  perElement?: { low: readonly number[]; high: readonly number[] };
}

/** A string of at most maxLength characters, each from charset (when given). */
export interface TextSpace {
  kind: 'text';
  maxLength: number;
  charset?: string;
}

/** Named sub-spaces; the value is a plain object with exactly these keys. */
export interface DictSpace {
  kind: 'dict';
  spaces: Readonly<Record<string, Space>>;
}

export type Space = DiscreteSpace | BoxSpace | TextSpace | DictSpace;

export const discrete = (n: number, labels?: readonly string[]): DiscreteSpace => ({ kind: 'discrete', n, labels });
export const box = (shape: readonly number[], low: number, high: number, dtype: BoxSpace['dtype']): BoxSpace => ({
  kind: 'box',
  shape,
  low,
  high,
  dtype,
});
export const text = (maxLength: number, charset?: string): TextSpace => ({ kind: 'text', maxLength, charset });
export const dict = (spaces: Record<string, Space>): DictSpace => ({ kind: 'dict', spaces });

const DTYPE_CTOR = { uint8: Uint8Array, int32: Int32Array, float32: Float32Array } as const;

/** A Box of float32 with a bound per element (the space's scalar bounds are the loosest of them). */
export function boxPerElement(shape: readonly number[], low: readonly number[], high: readonly number[]): BoxSpace {
  return { ...box(shape, Math.min(...low), Math.max(...high), 'float32'), perElement: { low, high } };
}

/** Why `value` is not in `space`, or null when it is. `path` names the place for messages. */
export function whyNotContained(space: Space, value: unknown, path = 'value'): string | null {
  switch (space.kind) {
    case 'discrete':
      if (typeof value !== 'number' || !Number.isInteger(value)) return `${path} is ${String(value)}, not an integer`;
      if (value < 0 || value >= space.n) return `${path} = ${value} is outside 0..${space.n - 1}`;
      return null;
    case 'box': {
      if (!(value instanceof DTYPE_CTOR[space.dtype])) return `${path} is not a ${space.dtype} typed array`;
      const arr = value as TypedArray;
      const size = space.shape.reduce((a, b) => a * b, 1);
      if (arr.length !== size) return `${path} has ${arr.length} elements, expected ${size} (shape [${space.shape}])`;
      for (let i = 0; i < arr.length; i++) {
        const x = arr[i];
        const lo = space.perElement?.low[i] ?? space.low, hi = space.perElement?.high[i] ?? space.high;
        // NaN fails both comparisons; ±Infinity passes an open side, so float boxes also need finite values.
        if (!(x >= lo && x <= hi) || (space.dtype === 'float32' && !Number.isFinite(x))) return `${path}[${i}] = ${x} is outside [${lo}, ${hi}]${Number.isFinite(x) ? '' : ' or not finite'}`;
      }
      return null;
    }
    case 'text': {
      if (typeof value !== 'string') return `${path} is not a string`;
      if (value.length > space.maxLength) return `${path} has ${value.length} characters, more than ${space.maxLength}`;
      if (space.charset !== undefined) {
        for (let i = 0; i < value.length; i++) {
          if (!space.charset.includes(value[i])) return `${path} has ${JSON.stringify(value[i])} at ${i}, outside the charset`;
        }
      }
      return null;
    }
    case 'dict': {
      if (typeof value !== 'object' || value === null) return `${path} is not an object`;
      const rec = value as Record<string, unknown>;
      for (const key of Object.keys(space.spaces)) {
        if (!(key in rec)) return `${path}.${key} is missing`;
        const why = whyNotContained(space.spaces[key], rec[key], `${path}.${key}`);
        if (why) return why;
      }
      for (const key of Object.keys(rec)) if (!(key in space.spaces)) return `${path}.${key} is not in the space`;
      return null;
    }
  }
}

export const contains = (space: Space, value: unknown): boolean => whyNotContained(space, value) === null;

/** A uniformly random member of a discrete or text space (used by checkEnv's random play). */
export function sample(space: Space, rng: Rng): unknown {
  switch (space.kind) {
    case 'discrete':
      return rng.int(0, space.n);
    case 'text': {
      const cs = space.charset ?? 'abcdefghijklmnopqrstuvwxyz0123456789()+-*/ ';
      const len = rng.int(0, Math.min(space.maxLength, 24) + 1);
      let s = '';
      for (let i = 0; i < len; i++) s += cs[rng.int(0, cs.length)];
      return s;
    }
    case 'box': {
      const size = space.shape.reduce((a, b) => a * b, 1);
      const out = new DTYPE_CTOR[space.dtype](size);
      for (let i = 0; i < size; i++) {
        // An open side draws within 1 of the other side (or in [-1, 1] when both are open).
        let lo = space.perElement?.low[i] ?? space.low, hi = space.perElement?.high[i] ?? space.high;
        if (!Number.isFinite(lo) && !Number.isFinite(hi)) [lo, hi] = [-1, 1];
        else if (!Number.isFinite(lo)) lo = hi - 1;
        else if (!Number.isFinite(hi)) hi = lo + 1;
        const x = lo + rng.random() * (hi - lo);
        out[i] = space.dtype === 'float32' ? x : Math.round(x);
      }
      return out;
    }
    case 'dict': {
      const out: Record<string, unknown> = {};
      for (const [k, s] of Object.entries(space.spaces)) out[k] = sample(s, rng);
      return out;
    }
  }
}
