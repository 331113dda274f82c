/**
 * # Door and key
 *
 * ## Description
 * A wall splits the room in two. The agent starts on the left with a yellow key lying
 * somewhere near it; the green goal is in the bottom-right corner, behind a locked yellow door.
 * The agent must pick up the key, face the door, toggle it open, walk through and reach the
 * goal. The wall's column, the door's row, the key and the start change with the seed. A
 * sparse-reward task: random exploration rarely chains the four sub-goals.
 *
 * ## Observation
 * `GridObs`: egocentric `viewSize × viewSize × 3` image (the agent's own cell shows the key
 * while it is carried), absolute heading, and the view as text (`carry: Ky` while holding it).
 *
 * ## Actions
 * Discrete(7): left, right, forward, pickup, drop, toggle, done.
 *
 * ## Reward
 * `1 - 0.9 * steps / maxSteps` on reaching the goal, 0 otherwise.
 *
 * ## Termination
 * Terminated on reaching the goal (success). Truncated at `maxSteps`.
 *
 * ## Kwargs
 * `size` (default 6, at least 5), `maxSteps` (default `10 * size²`), `viewSize` (default 7).
 */
import type { Rng } from '../../util/rng.ts';
import type { EnvKwargs } from '../registry.ts';
import { Grid } from './grid.ts';
import { KwargReader } from './kwargs.ts';
import { COLOR, DOOR, OBJ } from './objects.ts';
import { GridWorld, type GridWorldConfig, type Layout } from './world.ts';

export interface DoorKeyConfig extends GridWorldConfig {
  /** Outer side length in cells, walls included. Default 6. */
  size: number;
}

export function doorKeyConfig(id: string, kwargs: EnvKwargs): DoorKeyConfig {
  const r = new KwargReader(id, kwargs);
  const size = r.int('size', 6, { min: 5, max: 64 });
  return r.done<DoorKeyConfig>({
    size,
    maxSteps: r.maxSteps(10 * size * size),
    viewSize: r.viewSize(),
  });
}

export class DoorKeyEnv extends GridWorld {
  private readonly size: number;

  constructor(id: string, kwargs: EnvKwargs = {}) {
    const config = doorKeyConfig(id, kwargs);
    super(
      {
        id,
        title: `Door and key ${config.size}x${config.size}`,
        description:
          'A locked yellow door in a dividing wall stands between the agent and the green goal. The agent must pick up ' +
          'the yellow key, open the door with toggle, and walk to the goal: four sub-goals in a row with a reward only ' +
          'at the end, which makes it a classic sparse-reward exploration test.',
      },
      config,
    );
    this.size = config.size;
  }

  protected generate(rng: Rng): Layout {
    const n = this.size;
    const grid = new Grid(n, n);
    grid.wallRect(0, 0, n, n);
    grid.set(n - 2, n - 2, OBJ.goal);
    // The dividing wall leaves at least one column on each side: x in [2, n-3].
    const wallX = rng.int(2, n - 2);
    grid.verticalWall(wallX, 0, n);
    grid.door(wallX, rng.int(1, n - 1), COLOR.yellow, DOOR.locked);
    // Agent and key both on the left of the wall.
    const start = grid.randomEmptyCell(rng, 1, 1, wallX - 1, n - 2);
    const dir = rng.int(0, 4);
    const key = grid.randomEmptyCell(rng, 1, 1, wallX - 1, n - 2, start);
    grid.set(key.x, key.y, OBJ.key, COLOR.yellow);
    return { grid, agent: { ...start, dir }, mission: 'use the key to open the door and then get to the goal' };
  }
}
