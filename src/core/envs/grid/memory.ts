/**
 * # Memory
 *
 * ## Description
 * The agent starts in a small room facing a cue object (a key or a ball). A long hallway
 * leads east to a T-junction whose two arms end at a key (one arm) and a ball (the other);
 * which arm holds which is drawn per seed. Walking into the arm that ends at the object
 * matching the cue is success; the other arm is failure. The hallway is longer than the
 * view, so at the junction the cue is out of sight: a policy without memory can only guess
 * (50%). Objects here are fixed in place (pickup does nothing), so the agent cannot carry
 * the cue along instead of remembering it.
 *
 * Layout for size 13 (`<` the start, facing west at the cue `K`; the arms end at `B` and `K`):
 *
 *     #############
 *     ###########B#
 *     #...#######.#
 *     #K.<........#    (the hallway row)
 *     #...#######.#
 *     ###########K#
 *     #############
 *
 * ## Observation
 * `GridObs`: egocentric `viewSize × viewSize × 3` image, absolute heading, and the view as text.
 *
 * ## Actions
 * Discrete(7): left, right, forward, pickup, drop, toggle, done. Only the first three matter here.
 *
 * ## Reward
 * `1 - 0.9 * steps / maxSteps` on entering the matching arm's end, 0 otherwise.
 *
 * ## Termination
 * Terminated on entering either arm's end cell (success if it matches the cue, else failure).
 * Truncated at `maxSteps`.
 *
 * ## Kwargs
 * `size` (default 13: a 7-cell hallway; at least `viewSize + 3`, so that the cue is out of
 * view from the junction), `maxSteps` (default `5 * size²`), `viewSize` (default 7).
 */
import type { Rng } from '../../util/rng.ts';
import type { EnvKwargs } from '../registry.ts';
import { Grid } from './grid.ts';
import { KwargReader } from './kwargs.ts';
import { COLOR, OBJ } from './objects.ts';
import { GridWorld, type GridWorldConfig, type Layout, type Outcome } from './world.ts';

export interface MemoryConfig extends GridWorldConfig {
  /** Width in cells, walls included (the height is always 7); the hallway is size-6 cells long. Default 13. */
  size: number;
}

/** Height of the memory map: start room and junction arms span rows 2..4, hallway on row 3. */
export const MEMORY_HEIGHT = 7;
const HALL_Y = 3;

export function memoryConfig(id: string, kwargs: EnvKwargs): MemoryConfig {
  const r = new KwargReader(id, kwargs);
  const viewSize = r.viewSize();
  // From the junction (x = size-2) the cue (x = 1) is size-3 cells ahead; the view reaches
  // viewSize-1 cells ahead, so size >= viewSize + 3 keeps the cue out of sight there.
  const size = r.int('size', 13, { min: Math.max(8, viewSize + 3), max: 64 });
  return r.done<MemoryConfig>({ size, maxSteps: r.maxSteps(5 * size * size), viewSize });
}

export class MemoryEnv extends GridWorld {
  private readonly size: number;
  /** The arm cells that end the episode: entering `win` succeeds, entering `lose` fails. */
  private win = { x: -1, y: -1 };
  private lose = { x: -1, y: -1 };

  constructor(id: string, kwargs: EnvKwargs = {}) {
    const config = memoryConfig(id, kwargs);
    super(
      {
        id,
        title: 'Memory',
        description:
          'The agent sees a cue object (a key or a ball) at the start, then walks down a hallway longer than its view ' +
          'to a junction where one arm ends at a key and the other at a ball. Entering the arm that matches the cue ' +
          'succeeds, the other fails. At the junction the cue is out of sight, so only a policy with memory beats 50%.',
      },
      config,
    );
    this.size = config.size;
  }

  protected generate(rng: Rng): Layout {
    const n = this.size;
    const grid = new Grid(n, MEMORY_HEIGHT);
    for (let y = 0; y < MEMORY_HEIGHT; y++) grid.horizontalWall(0, y, n);
    for (let y = HALL_Y - 1; y <= HALL_Y + 1; y++) for (let x = 1; x <= 3; x++) grid.clear(x, y); // start room
    for (let x = 4; x <= n - 3; x++) grid.clear(x, HALL_Y); // hallway
    const armX = n - 2;
    for (let y = HALL_Y - 1; y <= HALL_Y + 1; y++) grid.clear(armX, y); // junction

    const objects = [OBJ.key, OBJ.ball] as const;
    const colorOf = (type: number): number => (type === OBJ.key ? COLOR.yellow : COLOR.blue);
    const cue = rng.choice(objects);
    const northObject = rng.choice(objects);
    grid.set(1, HALL_Y, cue, colorOf(cue));
    grid.set(armX, HALL_Y - 2, northObject, colorOf(northObject));
    const southObject = northObject === OBJ.key ? OBJ.ball : OBJ.key;
    grid.set(armX, HALL_Y + 2, southObject, colorOf(southObject));
    const north = { x: armX, y: HALL_Y - 1 };
    const south = { x: armX, y: HALL_Y + 1 };
    [this.win, this.lose] = northObject === cue ? [north, south] : [south, north];

    // Start in the room's east column facing west, so the cue is in view on the first step.
    const agent = { x: 3, y: rng.int(HALL_Y - 1, HALL_Y + 2), dir: 2 };
    return { grid, agent, mission: 'go to the end of the arm with the object you saw at the start' };
  }

  protected override outcomeAt(type: number, x: number, y: number): Outcome {
    if (x === this.win.x && y === this.win.y) return 'success';
    if (x === this.lose.x && y === this.lose.y) return 'failure';
    return super.outcomeAt(type, x, y);
  }

  protected override pickupAllowed(): boolean {
    return false;
  }
}
