import { describe, expect, it } from 'vitest';
import { layoutMarkers } from './MetricChart.tsx';

describe('chart marker labels', () => {
  it('put near markers on separate rows and end labels at the right edge', () => {
    // Pixel x of v1..v3, a chart whose plot ends at 300 px.
    const l = layoutMarkers([50, 60, 200, 295], ['v1', 'v2', 'v3', 'v4'], 300);
    expect(l.map((m) => m.row)).toEqual([0, 1, 0, 0]);
    expect(l[3].anchor).toBe('end');
    expect(l[3].tx).toBe(292);
    expect(l[0]).toEqual({ row: 0, anchor: 'start', tx: 53 });
  });
});
