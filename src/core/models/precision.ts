/**
 * Rounding float32 weights to a lower precision, as a rollout engine running in fp16, bf16 or fp8
 * would hold them. The mismatch mode (algo.rolloutCorrection.mismatch) gives the rollout policy
 * rounded weights while the learner keeps float32, so the behaviour policy μ differs from the
 * learner's π_old on every token, by numerics alone.
 */
import type { MismatchMode } from '../algos/correction/config.ts';
import type { Weights } from './types.ts';

interface Format {
  /** Explicit mantissa bits. */
  mantissa: number;
  /** Exponent of the smallest normal number. */
  minExp: number;
  /** Largest finite magnitude. */
  max: number;
  /** Beyond `max`: IEEE formats overflow to ±Infinity; FP8 E4M3 has no infinity and saturates (as FP8 casts in rollout engines do). */
  overflow: 'inf' | 'saturate';
}

/** IEEE 754 binary16: 10 mantissa bits, normals from 2^-14, largest finite 65504. */
const FP16: Format = { mantissa: 10, minExp: -14, max: 65504, overflow: 'inf' };
/** bfloat16: float32's exponent range with 7 mantissa bits. */
const BF16: Format = { mantissa: 7, minExp: -126, max: (2 - 2 ** -7) * 2 ** 127, overflow: 'inf' };
/** FP8 E4M3 (OCP): 3 mantissa bits, normals from 2^-6, largest finite 448. */
const FP8: Format = { mantissa: 3, minExp: -6, max: 448, overflow: 'saturate' };

/** x rounded to the nearest value of `f` (ties to even), ±Infinity beyond its range. */
function roundTo(x: number, f: Format): number {
  if (!Number.isFinite(x) || x === 0) return x;
  const a = Math.abs(x);
  let e = Math.floor(Math.log2(a));
  if (2 ** e > a) e--;
  else if (2 ** (e + 1) <= a) e++;
  const quantum = 2 ** (Math.max(e, f.minExp) - f.mantissa);
  const q = a / quantum;
  const fl = Math.floor(q);
  const d = q - fl;
  const r = d > 0.5 || (d === 0.5 && fl % 2 === 1) ? fl + 1 : fl;
  const out = r * quantum;
  return Math.sign(x) * (out > f.max ? (f.overflow === 'inf' ? Infinity : f.max) : out);
}

/** x as IEEE half precision would hold it (what Math.f16round does where it exists). */
export function roundFp16(x: number): number {
  return roundTo(x, FP16);
}

/** x as bfloat16 would hold it (round to nearest even). */
export function roundBf16(x: number): number {
  return roundTo(x, BF16);
}

/** x as FP8 E4M3 would hold it (round to nearest even, saturating at ±448). */
export function roundFp8(x: number): number {
  return roundTo(x, FP8);
}

const ROUND = { fp16: roundFp16, bf16: roundBf16, fp8: roundFp8 } as const;

/** A copy of `w` with every value rounded as `mode` says; `w` itself for 'off'. */
export function roundWeights(w: Weights, mode: MismatchMode): Weights {
  if (mode === 'off') return w;
  const round = ROUND[mode];
  const out: Weights = {};
  for (const [k, v] of Object.entries(w)) out[k] = Float32Array.from(v, round);
  return out;
}
