import { describe, expect, it } from 'vitest';
import { fmt } from './MetricChart.tsx';

describe('fmt', () => {
  it('float noise around 0 shows as 0; small real values keep their exponent', () => {
    expect([1.1e-10, -3e-10, 0, 2e-4, 0.5, -12.345, 250, 1e6, NaN, undefined].map(fmt)).toEqual(['0', '0', '0', '2.0e-4', '0.500', '-12.3', '250', '1.0e+6', '–', '–']);
  });
});
