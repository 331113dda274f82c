/**
 * What the env studio checks on every edit of a map, as one pure function (solveMap and
 * checkEnv), and the random agent it offers; the page runs both in a worker
 * (runtime/mapCheck/worker.ts): a 25x25 map's check takes tens of ms, its random agent up to
 * 100k steps.
 */
import { checkEnv } from '../checkEnv.ts';
import { makeEnv } from '../index.ts';
import { firstSeeds, randomAgent, type RandomAgentReport } from '../randomAgent.ts';
import { mapToKwargs, type GridMap } from './mapSpec.ts';
import { solveMap, type MapVerdict } from './mapSolve.ts';

export interface MapCheck {
  verdict: MapVerdict;
  /** checkEnv's problems (empty = the env keeps the contract). */
  contract: string[];
  /** Why training is refused, or null when the map can be trained on. */
  refusal: string | null;
}

export function checkMap(map: GridMap): MapCheck {
  const verdict = solveMap(map.rows, map.maxSteps);
  const kwargs = mapToKwargs(map);
  let contract: string[];
  try {
    contract = checkEnv(() => makeEnv('grid/custom', kwargs), { seeds: [0, 1] });
  } catch (e) {
    contract = [(e as Error).message];
  }
  const refusal = !verdict.solvable ? `This map cannot be solved: ${verdict.reason}.` : contract.length > 0 ? `The env breaks the contract: ${contract[0]}` : null;
  return { verdict, contract, refusal };
}

/** A uniformly random agent's success on `map`, one episode for each of the first `seeds` seeds. */
export function randomAgentOnMap(map: GridMap, seeds: number): RandomAgentReport {
  return randomAgent(makeEnv('grid/custom', mapToKwargs(map)), firstSeeds(seeds));
}
