/**
 * The map studio's checks off the page: the solver and checkEnv on every edit, and the random
 * agent, so painting stays smooth on a large map (core/envs/grid/mapCheck.ts does the work).
 *
 * Main thread: `wrap<MapCheckApi>(new Worker(new URL('.../mapCheck/worker.ts', import.meta.url), { type: 'module' }))`.
 */
import { expose } from 'comlink';
import { checkMap, randomAgentOnMap } from '../../core/envs/grid/mapCheck.ts';
import type { GridMap } from '../../core/envs/grid/mapSpec.ts';

const api = {
  check: (map: GridMap) => checkMap(map),
  randomAgent: (map: GridMap, seeds: number) => randomAgentOnMap(map, seeds),
};

export type MapCheckApi = typeof api;

expose(api);
