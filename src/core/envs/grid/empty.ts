/**
 * # Empty room
 *
 * ## Description
 * A walled square room with nothing in it but the green goal in the bottom-right corner.
 * The agent starts in the top-left corner facing east (or anywhere, with `randomStart`).
 * The simplest grid task: it checks that a learner can turn, walk and stop, and it is the
 * first place where the reward's time pressure shows (shorter paths earn more).
 *
 * ## Observation
 * `GridObs`: the `viewSize × viewSize × 3` egocentric image (agent at the bottom centre facing
 * up), the absolute heading (0 east, 1 south, 2 west, 3 north), and the same view as text.
 *
 * ## Actions
 * Discrete(7): left, right, forward, pickup, drop, toggle, done. Only the first three matter here.
 *
 * ## Reward
 * `1 - 0.9 * steps / maxSteps` on reaching the goal, 0 otherwise.
 *
 * ## Termination
 * Terminated on reaching the goal (success). Truncated at `maxSteps`.
 *
 * ## Kwargs
 * `size` (default 8; outer size including walls, at least 4), `randomStart` (default false),
 * `maxSteps` (default `4 * size²`), `viewSize` (default 7).
 */
import type { Rng } from '../../util/rng.ts';
import type { EnvKwargs } from '../registry.ts';
import { Grid } from './grid.ts';
import { KwargReader } from './kwargs.ts';
import { OBJ } from './objects.ts';
import { GridWorld, type GridWorldConfig, type Layout } from './world.ts';

export interface EmptyConfig extends GridWorldConfig {
  /** Outer side length of the room in cells, walls included (interior is size-2). Default 8. */
  size: number;
  /** Start at a random cell and heading instead of the top-left corner facing east. Default false. */
  randomStart: boolean;
}

export function emptyConfig(id: string, kwargs: EnvKwargs): EmptyConfig {
  const r = new KwargReader(id, kwargs);
  const size = r.int('size', 8, { min: 4, max: 64 });
  return r.done<EmptyConfig>({
    size,
    randomStart: r.bool('randomStart', false),
    maxSteps: r.maxSteps(4 * size * size),
    viewSize: r.viewSize(),
  });
}

export class EmptyEnv extends GridWorld {
  private readonly size: number;
  private readonly randomStart: boolean;

  constructor(id: string, kwargs: EnvKwargs = {}) {
    const config = emptyConfig(id, kwargs);
    super(
      {
        id,
        title: `Empty room ${config.size}x${config.size}`,
        description:
          `An empty ${config.size}x${config.size} walled room: walk from the ${config.randomStart ? 'random start' : 'top-left corner'} ` +
          'to the green goal in the bottom-right corner. Nothing blocks the way, so this is the sanity check for a learner; ' +
          'the reward falls with every step taken, so the fastest path earns the most.',
      },
      config,
    );
    this.size = config.size;
    this.randomStart = config.randomStart;
  }

  protected generate(rng: Rng): Layout {
    const n = this.size;
    const grid = new Grid(n, n);
    grid.wallRect(0, 0, n, n);
    grid.set(n - 2, n - 2, OBJ.goal);
    const agent = this.randomStart ? { ...grid.randomEmptyCell(rng, 1, 1, n - 2, n - 2), dir: rng.int(0, 4) } : { x: 1, y: 1, dir: 0 };
    return { grid, agent, mission: 'get to the green goal square' };
  }
}
