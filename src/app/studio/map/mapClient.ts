/**
 * The page's handle on the map-check worker (runtime/mapCheck/worker.ts), made on first use. A
 * worker that fails (a script error) rejects the calls waiting on it, with the reason, and is
 * replaced on the next call.
 */
import { wrap, type Remote } from 'comlink';
import type { GridMap } from '../../../core/envs/grid/mapSpec.ts';
import type { MapCheck } from '../../../core/envs/grid/mapCheck.ts';
import type { RandomAgentReport } from '../../../core/envs/randomAgent.ts';
import type { MapCheckApi } from '../../../runtime/mapCheck/worker.ts';

let current: { api: Remote<MapCheckApi>; died: Promise<never> } | null = null;

function checker(): { api: Remote<MapCheckApi>; died: Promise<never> } {
  if (current === null) {
    const w = new Worker(new URL('../../../runtime/mapCheck/worker.ts', import.meta.url), { type: 'module', name: 'map-check' });
    const mine = {
      api: wrap<MapCheckApi>(w),
      // Comlink's calls to a dead worker never settle: this settles them.
      died: new Promise<never>((_, reject) =>
        w.addEventListener('error', (e) => {
          w.terminate();
          if (current === mine) current = null;
          reject(new Error(`the map check stopped: ${e.message || 'a script error in its worker (see the console)'}`));
        }),
      ),
    };
    mine.died.catch(() => undefined);
    current = mine;
  }
  return current;
}

/** The solver's verdict and checkEnv's problems for `map`, computed off the page. */
export function checkMapOffPage(map: GridMap): Promise<MapCheck> {
  const c = checker();
  return Promise.race([c.api.check(map), c.died]);
}

/** A random agent's success on `map` over the first `seeds` seeds, played off the page. */
export function randomAgentOffPage(map: GridMap, seeds: number): Promise<RandomAgentReport> {
  const c = checker();
  return Promise.race([c.api.randomAgent(map, seeds), c.died]);
}
