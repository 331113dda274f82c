/**
 * # Lava crossing
 *
 * ## Description
 * The agent starts in the top-left corner facing east and must reach the green goal in the
 * bottom-right corner. Rivers of lava (vertical or horizontal, one by default) cut across the
 * room, each with a single safe gap; stepping into lava ends the episode with nothing. Gaps
 * are placed along one monotone path from start to goal, so a solution always exists
 * (MiniGrid's LavaCrossingS9N1 for the defaults). Tests safe exploration: a random walk dies often.
 *
 * ## Observation
 * `GridObs`: egocentric `viewSize × viewSize × 3` image, absolute heading, and the view as text
 * (`~` is lava).
 *
 * ## Actions
 * Discrete(7): left, right, forward, pickup, drop, toggle, done. Only the first three matter here.
 *
 * ## Reward
 * `1 - 0.9 * steps / maxSteps` on reaching the goal, 0 otherwise (also 0 for dying in lava).
 *
 * ## Termination
 * Terminated on reaching the goal (success) or entering lava (failure). Truncated at `maxSteps`.
 *
 * ## Kwargs
 * `size` (default 9, odd, at least 5), `rivers` (default 1, at most `maxRivers(size)`: 6 for
 * size 9), `maxSteps` (default `4 * size²`), `viewSize` (default 7).
 */
import type { Rng } from '../../util/rng.ts';
import type { EnvKwargs } from '../registry.ts';
import { Grid } from './grid.ts';
import { KwargReader } from './kwargs.ts';
import { OBJ } from './objects.ts';
import { GridWorld, type GridWorldConfig, type Layout } from './world.ts';

export interface LavaCrossingConfig extends GridWorldConfig {
  /** Outer side length in cells, walls included (odd, so rivers sit on even lines). Default 9. */
  size: number;
  /** Number of lava rivers, each with one gap. Default 1. */
  rivers: number;
}

/** Rivers sit on even lines 2, 4, ..., size-3, in either orientation. */
export const maxRivers = (size: number): number => 2 * Math.floor((size - 3) / 2);

export function lavaCrossingConfig(id: string, kwargs: EnvKwargs): LavaCrossingConfig {
  const r = new KwargReader(id, kwargs);
  const size = r.int('size', 9, { min: 5, max: 63, odd: true });
  return r.done<LavaCrossingConfig>({
    size,
    rivers: r.int('rivers', 1, { min: 1, max: maxRivers(size) }),
    maxSteps: r.maxSteps(4 * size * size),
    viewSize: r.viewSize(),
  });
}

export class LavaCrossingEnv extends GridWorld {
  private readonly size: number;
  private readonly rivers: number;

  constructor(id: string, kwargs: EnvKwargs = {}) {
    const config = lavaCrossingConfig(id, kwargs);
    super(
      {
        id,
        title: `Lava crossing ${config.size}x${config.size}`,
        description:
          `Cross ${config.rivers === 1 ? 'a river' : `${config.rivers} rivers`} of lava through the only safe ` +
          `${config.rivers === 1 ? 'gap' : 'gaps'} to reach the green goal in the far corner. Touching lava ends the ` +
          'episode with zero reward, so careless exploration is punished and a learner must find the gap first.',
      },
      config,
    );
    this.size = config.size;
    this.rivers = config.rivers;
  }

  protected generate(rng: Rng): Layout {
    const n = this.size;
    const grid = new Grid(n, n);
    grid.wallRect(0, 0, n, n);
    grid.set(n - 2, n - 2, OBJ.goal);

    const lines: { vertical: boolean; at: number }[] = [];
    for (let at = 2; at < n - 2; at += 2) lines.push({ vertical: true, at }, { vertical: false, at });
    const chosen = rng.shuffle(lines).slice(0, this.rivers);
    const xs = chosen.filter((l) => l.vertical).map((l) => l.at).sort((a, b) => a - b);
    const ys = chosen.filter((l) => !l.vertical).map((l) => l.at).sort((a, b) => a - b);
    for (const x of xs) grid.verticalWall(x, 1, n - 2, OBJ.lava);
    for (const y of ys) grid.horizontalWall(1, y, n - 2, OBJ.lava);

    // Walk from the top-left compartment to the bottom-right one, one river at a time in a
    // random order, opening a gap in each river where the walk crosses it. The rivers cut the
    // room into compartments bounded by `edgesX` × `edgesY`; a gap is drawn along the side
    // of the compartment the walk is in, so it never lands on a river crossing.
    const edgesX = [0, ...xs, n - 1];
    const edgesY = [0, ...ys, n - 1];
    const moves = rng.shuffle([...xs.map(() => 'east' as const), ...ys.map(() => 'south' as const)]);
    let cx = 0;
    let cy = 0;
    for (const move of moves) {
      if (move === 'east') {
        grid.clear(edgesX[cx + 1], rng.int(edgesY[cy] + 1, edgesY[cy + 1]));
        cx++;
      } else {
        grid.clear(rng.int(edgesX[cx] + 1, edgesX[cx + 1]), edgesY[cy + 1]);
        cy++;
      }
    }
    return { grid, agent: { x: 1, y: 1, dir: 0 }, mission: 'avoid the lava and get to the green goal square' };
  }
}
