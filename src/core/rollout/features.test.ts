import { describe, expect, it } from 'vitest';
import { encodeGridObs, gridFeatureSize } from './features.ts';

describe('grid features', () => {
  it('one-hot encodes type, colour, state and heading', () => {
    const image = new Uint8Array(3 * 3 * 3); // 3×3 view, all (0,0,0) = unseen
    image.set([4, 2, 1], 3 * 4); // centre cell: closed blue door
    const out = new Float32Array(gridFeatureSize(3) + 2);
    out.fill(7);
    encodeGridObs({ image, direction: 2, text: '' }, out, 1);
    expect(out[0]).toBe(7); // untouched outside the slot
    expect(out[out.length - 1]).toBe(7);
    const cell = (c: number) => Array.from(out.slice(1 + c * 20, 1 + (c + 1) * 20));
    // unseen cell: type 0, colour 0, state 0
    expect(cell(0)).toEqual([1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* colour */ 1, 0, 0, 0, 0, 0, /* state */ 1, 0, 0]);
    expect(cell(4)).toEqual([0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0]);
    expect(Array.from(out.slice(1 + 9 * 20, 1 + 9 * 20 + 4))).toEqual([0, 0, 1, 0]);
    expect(gridFeatureSize(7)).toBe(984);
  });
});
