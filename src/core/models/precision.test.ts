/**
 * Rounding to fp16, bf16 and fp8 E4M3 against hand-worked values and, for bf16, an independent
 * bit-level reference (round-to-nearest-even on the top 16 bits of the float32 pattern).
 */
import { describe, expect, it } from 'vitest';
import { roundBf16, roundFp16, roundFp8, roundWeights } from './precision.ts';
import { Rng } from '../util/rng.ts';

describe('roundFp16', () => {
  it('hand-worked values: 1/3 → 0.333251953125 (10 mantissa bits), the largest finite 65504, overflow at 65520', () => {
    expect(roundFp16(1 / 3)).toBe(0.333251953125);
    expect(roundFp16(65504)).toBe(65504);
    expect(roundFp16(65519)).toBe(65504);
    expect(roundFp16(65520)).toBe(Infinity);
    expect(roundFp16(-65520)).toBe(-Infinity);
  });
  it('ties go to even: 1 + 2⁻¹¹ → 1, 1 + 3·2⁻¹¹ → 1 + 2⁻⁹ (rounding half up would give 1 + 2⁻¹⁰ for the first)', () => {
    expect(roundFp16(1 + 2 ** -11)).toBe(1);
    expect(roundFp16(1 + 3 * 2 ** -11)).toBe(1 + 2 ** -9);
  });
  it('subnormals: 2⁻²⁴ is the smallest, 2⁻²⁵ ties to 0, 3·2⁻²⁵ to 2·2⁻²⁴', () => {
    expect(roundFp16(2 ** -24)).toBe(2 ** -24);
    expect(roundFp16(2 ** -25)).toBe(0);
    expect(roundFp16(3 * 2 ** -25)).toBe(2 ** -23);
    expect(roundFp16(-0.1)).toBe(-roundFp16(0.1));
  });
});

/** bf16 by bits: add 0x7fff plus the lowest kept bit, keep the top 16 bits. */
function bf16Bits(x: number): number {
  const f = new Float32Array([x]);
  const u = new Uint32Array(f.buffer);
  u[0] = ((u[0] + 0x7fff + ((u[0] >>> 16) & 1)) & 0xffff0000) >>> 0;
  return f[0];
}

describe('roundBf16', () => {
  it('equals the bit-level reference on 2000 random float32 values of mixed scale', () => {
    const rng = new Rng(3);
    for (let i = 0; i < 2000; i++) {
      const x = Math.fround((rng.random() * 2 - 1) * 10 ** (rng.int(0, 12) - 6));
      expect(roundBf16(x), `x = ${x}`).toBe(bf16Bits(x));
    }
  });
});

describe('roundFp8 (E4M3)', () => {
  it('0.1 → 0.1015625 (3 mantissa bits: 13·2⁻⁷), 448 the largest, saturating beyond, 2⁻⁹ the smallest subnormal', () => {
    expect(roundFp8(0.1)).toBe(0.1015625);
    expect(roundFp8(448)).toBe(448);
    expect(roundFp8(500)).toBe(448);
    expect(roundFp8(-1e6)).toBe(-448);
    expect(roundFp8(2 ** -9)).toBe(2 ** -9);
    expect(roundFp8(2 ** -10)).toBe(0);
  });
});

describe('roundWeights', () => {
  it("'off' returns the same object; a mode rounds every tensor into a copy", () => {
    const w = { a: Float32Array.from([1 / 3, 0.1]) };
    expect(roundWeights(w, 'off')).toBe(w);
    const r = roundWeights(w, 'fp16');
    expect(Array.from(r.a)).toEqual([0.333251953125, roundFp16(0.1)]);
    expect(w.a[0]).toBe(Math.fround(1 / 3));
  });
});
