/**
 * # Four rooms
 *
 * ## Description
 * A 19x19 square split into four rooms by a cross of walls, with one doorway gap in each of
 * the four wall segments (gap positions drawn per seed). The agent and the green goal are
 * placed in random cells, usually in different rooms, so the agent must find the gaps. The
 * classic options/exploration benchmark (Sutton, Precup and Singh 1999), in MiniGrid's form.
 *
 * ## Observation
 * `GridObs`: egocentric `viewSize × viewSize × 3` image, absolute heading, and the view as text.
 *
 * ## Actions
 * Discrete(7): left, right, forward, pickup, drop, toggle, done. Only the first three matter here.
 *
 * ## Reward
 * `1 - 0.9 * steps / maxSteps` on reaching the goal, 0 otherwise.
 *
 * ## Termination
 * Terminated on reaching the goal (success). Truncated at `maxSteps` (default 100; shortest
 * solutions average 16 steps and stay under 40, so a learner has room to explore but not to wander).
 *
 * ## Kwargs
 * `size` (default 19, at least 7), `maxSteps` (default 100), `viewSize` (default 7).
 */
import type { Rng } from '../../util/rng.ts';
import type { EnvKwargs } from '../registry.ts';
import { Grid } from './grid.ts';
import { KwargReader } from './kwargs.ts';
import { OBJ } from './objects.ts';
import { GridWorld, type GridWorldConfig, type Layout } from './world.ts';

export interface FourRoomsConfig extends GridWorldConfig {
  /** Outer side length in cells, walls included; the dividing walls run through the middle. Default 19. */
  size: number;
}

export function fourRoomsConfig(id: string, kwargs: EnvKwargs): FourRoomsConfig {
  const r = new KwargReader(id, kwargs);
  return r.done<FourRoomsConfig>({
    size: r.int('size', 19, { min: 7, max: 64 }),
    maxSteps: r.maxSteps(100),
    viewSize: r.viewSize(),
  });
}

export class FourRoomsEnv extends GridWorld {
  private readonly size: number;

  constructor(id: string, kwargs: EnvKwargs = {}) {
    const config = fourRoomsConfig(id, kwargs);
    super(
      {
        id,
        title: 'Four rooms',
        description:
          `Four rooms in a ${config.size}x${config.size} square, joined by one gap in each dividing wall; the gaps, ` +
          'the start and the green goal change with the seed. The agent sees only a small window, so it must explore ' +
          `to find the doorways and reach the goal within ${config.maxSteps} steps.`,
      },
      config,
    );
    this.size = config.size;
  }

  protected generate(rng: Rng): Layout {
    const n = this.size;
    const mid = n >> 1;
    const grid = new Grid(n, n);
    grid.wallRect(0, 0, n, n);
    grid.verticalWall(mid, 0, n);
    grid.horizontalWall(0, mid, n);
    // One gap per wall segment: the vertical wall's upper and lower halves, the horizontal
    // wall's left and right halves. Each gap is drawn uniformly along its segment.
    grid.clear(mid, rng.int(1, mid));
    grid.clear(mid, rng.int(mid + 1, n - 1));
    grid.clear(rng.int(1, mid), mid);
    grid.clear(rng.int(mid + 1, n - 1), mid);

    const start = grid.randomEmptyCell(rng, 1, 1, n - 2, n - 2);
    const dir = rng.int(0, 4);
    const goal = grid.randomEmptyCell(rng, 1, 1, n - 2, n - 2, start);
    grid.set(goal.x, goal.y, OBJ.goal);
    return { grid, agent: { ...start, dir }, mission: 'reach the goal' };
  }
}
