/**
 * A lesson step's check on the Studio's map (schema.ts, MapCheck): pure, no store, no DOM. It
 * reads what the map tab shows: the BFS expert's shortest solution, and a random agent's success
 * over 100 seeds, which is how often a learner starting from scratch would ever see the reward.
 */
import { mapToKwargs, type GridMap } from '../../core/envs/grid/mapSpec.ts';
import type { MapVerdict } from '../../core/envs/grid/mapSolve.ts';
import { makeEnv } from '../../core/envs/index.ts';
import { firstSeeds, randomAgent } from '../../core/envs/randomAgent.ts';
import type { MapCheck } from './schema.ts';

/** Episodes the random agent plays (one per seed), as the map tab's button does. */
export const MAP_CHECK_SEEDS = 100;

export interface MapCheckStatus {
  /** 'checking': the Studio has not shown its verdict on this map yet ("Checking…"). */
  state: 'checking' | 'watching' | 'done';
  readings: { text: string; holds: boolean }[];
}

/** Whether two maps are the same document (the store may hold an equal copy, e.g. from a link). */
const sameMap = (a: GridMap, b: GridMap) => a === b || JSON.stringify(a) === JSON.stringify(b);

/**
 * The step's check on `map`, read from the verdict the Studio shows for it (`studio`: its map-check
 * worker's result, null while it says "Checking…"): until that verdict is on screen for this map
 * the step is 'checking', never 'done', so the lesson and the Studio cannot disagree.
 */
export function evaluateMapCheck(check: MapCheck, map: GridMap, studio: { map: GridMap; verdict: MapVerdict } | null): MapCheckStatus {
  if (!studio || !sameMap(studio.map, map)) return { state: 'checking', readings: [{ text: 'Waiting for the Studio to check this map', holds: false }] };
  const v = studio.verdict;
  const steps = v.solvable ? v.steps : null;
  const solved = steps !== null && steps >= check.map.minSteps;
  const rate = randomAgent(makeEnv('grid/custom', mapToKwargs(map)), firstSeeds(MAP_CHECK_SEEDS)).successRate;
  const rare = rate <= check.map.randomSuccessAtMost + 1e-9;
  const readings = [
    { text: v.solvable ? `Shortest solution ${v.steps} steps (needs ≥ ${check.map.minSteps})` : `Not solvable: ${v.reason}`, holds: solved },
    { text: `Random agent ${Math.round(rate * 100)}% of ${MAP_CHECK_SEEDS} episodes (needs ≤ ${Math.round(check.map.randomSuccessAtMost * 100)}%)`, holds: rare },
  ];
  return { state: solved && rare ? 'done' : 'watching', readings };
}
