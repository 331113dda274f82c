/** What the studio checks on every edit of a map, as one pure function (solveMap and checkEnv). */
import { checkEnv } from '../../../core/envs/checkEnv.ts';
import { mapToKwargs, type GridMap } from '../../../core/envs/grid/mapSpec.ts';
import { solveMap, type MapVerdict } from '../../../core/envs/grid/mapSolve.ts';
import { makeEnv } from '../../../core/envs/index.ts';

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
