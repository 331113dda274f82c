import { describe, expect, it } from 'vitest';
import { EXAMPLE_MAPS } from '../../core/envs/grid/exampleMaps.ts';
import { formatStudioHash, isStudioHash, parseStudioHash } from './studioHash.ts';

describe('studio links', () => {
  it('round-trip every example map', () => {
    for (const { map } of EXAMPLE_MAPS) {
      const h = formatStudioHash('map', map);
      expect(isStudioHash(h)).toBe(true);
      expect(parseStudioHash(h)).toEqual({ tab: 'map', map, problems: [] });
    }
  });

  it('name a broken map and keep going without it', () => {
    const p = parseStudioHash('#view=studio&tab=map&map=%23%23/%23>&maxSteps=5&bogus=1');
    expect(p.map).toBeNull();
    expect(p.problems).toEqual(['unknown setting "bogus"', expect.stringMatching(/^the map in the link is not a valid map \(.*the map has 2 rows; it needs 3 to 25\)/)]);
    expect(parseStudioHash('#view=studio&map=%23%23%23/%23>G/%23%23%23&maxSteps=-1').problems).toEqual([expect.stringMatching(/maxSteps: must be at least 1/)]);
  });
});
