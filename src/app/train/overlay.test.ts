import { describe, expect, it } from 'vitest';
import type { GridOverlay } from '../../runtime/trainWorker/types.ts';
import { argmaxAction, cellIndex, rowOf, valueColor, valueRange } from './overlay.ts';

/** Two cells, 3 actions; values by (cell, heading) = cell + heading / 10. */
function overlay(values: boolean): GridOverlay {
  const probs = new Float32Array(2 * 4 * 3);
  for (let c = 0; c < 2; c++) for (let d = 0; d < 4; d++) probs.set(d === 1 ? [0.1, 0.7, 0.2] : [0.5, 0.2, 0.3], rowOf(c, d) * 3);
  return {
    width: 3,
    height: 1,
    cells: Int16Array.from([0, 0, 2, 0]),
    numActions: 3,
    probs,
    values: values ? Float32Array.from({ length: 8 }, (_, r) => Math.floor(r / 4) + (r % 4) / 10) : null,
    version: 1,
    step: 0,
  };
}

describe('grid overlay reading', () => {
  it('value range per heading, NaN without a value head', () => {
    expect(valueRange(overlay(true), 2)).toEqual({ lo: expect.closeTo(0.2, 6), hi: expect.closeTo(1.2, 6) });
    expect(valueRange(overlay(false), 0).lo).toBeNaN();
  });
  it('argmax action and cell lookup', () => {
    expect(argmaxAction(overlay(true), 1, 1)).toEqual({ action: 1, prob: expect.closeTo(0.7, 6) });
    expect(argmaxAction(overlay(true), 0, 0)).toEqual({ action: 0, prob: expect.closeTo(0.5, 6) });
    expect(cellIndex(overlay(true), 2, 0)).toBe(1);
    expect(cellIndex(overlay(true), 1, 0)).toBe(-1);
  });
  it('value colours: one green ramp from the lowest to the highest value, whatever the signs', () => {
    const r = { lo: 0, hi: 1 };
    expect(valueColor(0, r, 1)).toBe('hsla(140 35% 90% / 1)');
    expect(valueColor(1, r, 1)).toBe('hsla(140 85% 40% / 1)');
    const m = { lo: -2, hi: 2 };
    expect(valueColor(-2, m, 1)).toBe('hsla(140 35% 90% / 1)');
    expect(valueColor(0, m, 1)).toBe('hsla(140 60% 65% / 1)');
    expect(valueColor(5, m, 1)).toBe(valueColor(2, m, 1)); // clamped
    expect(valueColor(0.5, { lo: 0.5, hi: 0.5 }, 1)).toBe('hsla(140 60% 65% / 1)'); // flat map: mid tone
    expect(valueColor(NaN, r)).toBe('rgba(0,0,0,0)');
  });
});
