/**
 * # Custom map
 *
 * ## Description
 * A map a person drew in the studio (or wrote as a `.json` file): walls, lava, one key, up to
 * four locked doors, goals, and the agent's start and heading. Every reset gives the same map
 * (the seed changes nothing; a learner still samples different actions per seed).
 *
 * ## Observation
 * `GridObs`: egocentric `viewSize × viewSize × 3` image, absolute heading, and the view as text.
 *
 * ## Actions
 * Discrete(7): left, right, forward, pickup, drop, toggle, done.
 *
 * ## Reward
 * `goalReward · (1 - 0.9 · steps / maxSteps)` on reaching a goal, `lavaReward` on stepping
 * into lava, 0 on every other step.
 *
 * ## Termination
 * Terminated on reaching a goal (success) or lava (failure). Truncated at `maxSteps`.
 *
 * ## Kwargs
 * `map` (the rows joined by `/`, in the map legend of mapSpec.ts), `name`, `maxSteps` (default
 * 100), `viewSize` (default 7), `goalReward` (default 1), `lavaReward` (default 0).
 */
import type { Rng } from '../../util/rng.ts';
import type { EnvKwargs } from '../registry.ts';
import { documentKwarg } from '../kwargDocs.ts';
import { parseMap } from './ascii.ts';
import { DEFAULT_MAP, MAP_SIDE, MAX_MAP_REWARD, MAX_MAP_STEPS, mapFromKwargs, mapToKwargs, type GridMap } from './mapSpec.ts';
import { solveWorld } from './mapSolve.ts';
import { GridWorld, MAX_VIEW_SIZE, type Layout } from './world.ts';

/** Kwarg docs (kwargDocs.ts): name and accepted values, read off the same bounds the schema checks. */
const RANGES: Record<string, string> = {
  map: `rows joined by /, ${MAP_SIDE.min}..${MAP_SIDE.max} cells a side`,
  name: 'text',
  maxSteps: `1..${MAX_MAP_STEPS}`,
  viewSize: `odd, 3..${MAX_VIEW_SIZE}`,
  goalReward: `0..${MAX_MAP_REWARD}`,
  lavaReward: `${-MAX_MAP_REWARD}..${MAX_MAP_REWARD}`,
};

/** The map `kwargs` describe; throws one error naming the env and every problem. */
export function customMapConfig(id: string, kwargs: EnvKwargs): GridMap {
  const defaults = mapToKwargs(DEFAULT_MAP);
  for (const [name, range] of Object.entries(RANGES)) documentKwarg({ name, default: kwargs[name] ?? defaults[name], range });
  const r = mapFromKwargs({ ...defaults, ...kwargs });
  if (!r.ok) throw new Error(`${id}: ${r.messages.join('; ')}`);
  return r.map;
}

export class CustomMapEnv extends GridWorld {
  readonly map: GridMap;

  constructor(id: string, kwargs: EnvKwargs = {}) {
    const map = customMapConfig(id, kwargs);
    const w = map.rows[0].length;
    super(
      {
        id,
        title: map.name,
        description:
          `A ${w}x${map.rows.length} map drawn in the studio: reach a goal within ${map.maxSteps} steps ` +
          `(reward ${map.goalReward} on the goal, less for every step taken${map.lavaReward !== 0 ? `; ${map.lavaReward} for stepping into lava` : ''}). ` +
          'Every episode starts from the same map.',
        rewardRange: [Math.min(0, map.lavaReward), Math.max(0, map.goalReward, map.lavaReward)],
      },
      { maxSteps: map.maxSteps, viewSize: map.viewSize },
    );
    this.map = map;
    parseMap(map.rows); // fail at construction, not at the first reset
  }

  protected generate(_rng: Rng): Layout {
    return { ...parseMap(this.map.rows), mission: 'get to the goal' };
  }

  /**
   * The expert's plan from here by mapSolve's search over (pose, key held, doors open): exact
   * on a map's world (one key, doors, nothing else to carry), and a few ms on a 25×25 map
   * with 4 doors where the full-state search took seconds per call. Anything else falls back.
   */
  protected override solveFromHere(): number[] | null {
    const plan = solveWorld(this.expertState());
    return plan === undefined ? super.solveFromHere() : plan;
  }

  protected override rewardFor(outcome: 'success' | 'failure', steps: number): number {
    return outcome === 'success' ? this.map.goalReward * (1 - (0.9 * steps) / this.maxSteps) : this.map.lavaReward;
  }
}
