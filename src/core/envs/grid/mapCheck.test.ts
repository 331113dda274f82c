/** The studio's map check (run in its worker): the solver's verdict, checkEnv, the refusal, and the random agent. */
import { describe, expect, it } from 'vitest';
import '../index.ts';
import { EXAMPLE_MAPS } from './exampleMaps.ts';
import { checkMap, randomAgentOnMap } from './mapCheck.ts';
import { parseGridMap } from './mapSpec.ts';

const map = (rows: string[], maxSteps = 100) => {
  const r = parseGridMap({ kind: 'grid-map', rows, maxSteps });
  if (!r.ok) throw new Error(r.messages.join('; '));
  return r.map;
};

describe('checkMap', () => {
  it('four rooms: solvable in 19 steps, keeps the contract, trainable', () => {
    const c = checkMap(EXAMPLE_MAPS.find((m) => m.slug === 'four-rooms')!.map);
    expect(c.verdict).toMatchObject({ solvable: true, steps: 19 });
    expect(c.contract).toEqual([]);
    expect(c.refusal).toBeNull();
  });

  it('a walled-off goal is refused with the reason', () => {
    const c = checkMap(map(['######', '#>.#G#', '######']));
    expect(c.verdict.solvable).toBe(false);
    expect(c.refusal).toBe('This map cannot be solved: the goal is walled off: no path reaches it even through doors and lava.');
  });

  it('a random agent reaches a goal two steps ahead in some of 100 episodes (0.22 with 20 steps: most actions turn, pick up or toggle), and one behind a wall in none', () => {
    const near = randomAgentOnMap(map(['#####', '#>.G#', '#####'], 20), 100);
    expect(near.episodes).toBe(100);
    expect(near.successRate).toBeGreaterThan(0.1);
    expect(randomAgentOnMap(map(['######', '#>.#G#', '######'], 20), 100).successRate).toBe(0);
  });
});
