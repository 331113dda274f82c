import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EXAMPLE_MAPS } from '../../core/envs/grid/exampleMaps.ts';
import { DEFAULT_MAP, mapToKwargs } from '../../core/envs/grid/mapSpec.ts';
import { loadPresets } from '../train/config.ts';
import { LESSONS } from './index.ts';
import { evaluateMapCheck } from './mapCheck.ts';
import { checkMap } from '../../core/envs/grid/mapCheck.ts';
import type { GridMap } from '../../core/envs/grid/mapSpec.ts';

/** What the Studio's map tab shows for `map` once its worker has checked it (the same checkMap). */
const studioShows = (map: GridMap) => ({ map, verdict: checkMap(map).verdict });
import { isMapCheck } from './schema.ts';
import { draftForSetup } from './setup.ts';

const presets = loadPresets(readdirSync('presets').map((f) => JSON.parse(readFileSync(`presets/${f}`, 'utf8')) as unknown)).presets;
const lesson = LESSONS.lessons.find((l) => l.id === 'design-the-room')!;

describe('lesson 9, design the room', () => {
  it('step 1 ticks on the four-rooms example and not on the default open room, saying why', () => {
    const check = lesson.steps[0].check;
    if (!isMapCheck(check)) throw new Error('step 1 checks the map');
    const four = evaluateMapCheck(check, EXAMPLE_MAPS[0].map, studioShows(EXAMPLE_MAPS[0].map));
    expect(four.state).toBe('done');
    expect(four.readings.map((r) => r.text)).toEqual(['Shortest solution 19 steps (needs ≥ 12)', 'Random agent 0% of 100 episodes (needs ≤ 1%)']);
    const open = evaluateMapCheck(check, DEFAULT_MAP, studioShows(DEFAULT_MAP));
    expect(open.state).toBe('watching');
    expect(open.readings[0]).toEqual({ text: 'Shortest solution 7 steps (needs ≥ 12)', holds: false });
  });

  it('step 1 is not done while the Studio still says "Checking…" (no verdict yet, or one for an earlier map)', () => {
    const check = lesson.steps[0].check;
    if (!isMapCheck(check)) throw new Error('step 1 checks the map');
    const four = EXAMPLE_MAPS[0].map;
    expect(evaluateMapCheck(check, four, null).state).toBe('checking');
    expect(evaluateMapCheck(check, four, studioShows(DEFAULT_MAP)).state).toBe('checking');
    // An equal copy of the map (from a link, say) is the same map.
    expect(evaluateMapCheck(check, four, studioShows(JSON.parse(JSON.stringify(four)) as GridMap)).state).toBe('done');
  });

  it('steps 2 and 3 train on the Studio map: sparse (potential 0), then shaped (potential 1)', () => {
    const map = EXAMPLE_MAPS[1].map;
    const [sparse, shaped] = [1, 2].map((i) => draftForSetup(lesson.steps[i].setup, presets, 'wasm', map));
    for (const r of [sparse, shaped]) {
      expect(r.problems).toEqual([]);
      expect(r.draft.env).toEqual({ id: 'grid/custom', kwargs: mapToKwargs(map) });
    }
    expect(sparse.draft.shaping.potential.weight).toBe(0);
    expect(shaped.draft.shaping.potential.weight).toBe(1);
  });
});
