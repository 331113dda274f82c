/**
 * Worlds drawn as text, in the same legend the text rendering uses (objects.ts): handy for
 * tests, for hand-made levels and for teaching ("what does the agent see from here?").
 *
 *     const env = new AsciiGridEnv(['#####',
 *                                   '#>.G#',
 *                                   '#####'], { maxSteps: 10 });
 */
import type { Rng } from '../../util/rng.ts';
import { Grid } from './grid.ts';
import { AGENT_CHARS, COLOR, type Color, DEFAULT_COLOR, DOOR, LEGEND, OBJ } from './objects.ts';
import { DEFAULT_VIEW_SIZE, GridWorld, type Layout } from './world.ts';

const CHAR_TO_CELL: Readonly<Record<string, readonly [type: number, state: number]>> = {
  [LEGEND.empty]: [OBJ.empty, 0],
  [LEGEND.wall]: [OBJ.wall, 0],
  [LEGEND.goal]: [OBJ.goal, 0],
  [LEGEND.lava]: [OBJ.lava, 0],
  [LEGEND.key]: [OBJ.key, 0],
  [LEGEND.ball]: [OBJ.ball, 0],
  [LEGEND.box]: [OBJ.box, 0],
  [LEGEND.doorOpen]: [OBJ.door, DOOR.open],
  [LEGEND.doorClosed]: [OBJ.door, DOOR.closed],
  [LEGEND.doorLocked]: [OBJ.door, DOOR.locked],
};

/**
 * Parses a map: one string per row, all the same length, exactly one agent (`> v < ^`, the
 * heading; it stands on an empty cell). Objects get their default colours unless `colors`
 * names one for their cell, keyed `"x,y"`.
 */
export function parseMap(rows: readonly string[], colors: Readonly<Record<string, keyof typeof COLOR>> = {}): Omit<Layout, 'mission'> {
  const height = rows.length;
  const width = rows[0]?.length ?? 0;
  if (height === 0 || width === 0) throw new Error('parseMap: the map is empty');
  const grid = new Grid(width, height);
  let agent: Layout['agent'] | null = null;
  rows.forEach((row, y) => {
    if (row.length !== width) throw new Error(`parseMap: row ${y} has ${row.length} characters, row 0 has ${width}`);
    for (let x = 0; x < width; x++) {
      const ch = row[x];
      const dir = AGENT_CHARS.indexOf(ch);
      if (dir >= 0) {
        if (agent) throw new Error(`parseMap: a second agent at (${x}, ${y})`);
        agent = { x, y, dir };
        continue;
      }
      const cell = CHAR_TO_CELL[ch];
      if (!cell) throw new Error(`parseMap: unknown character ${JSON.stringify(ch)} at (${x}, ${y})`);
      const name = colors[`${x},${y}`];
      const color: Color = name !== undefined ? COLOR[name] : (DEFAULT_COLOR[cell[0]] ?? 0);
      grid.set(x, y, cell[0], cell[0] === OBJ.empty ? 0 : color, cell[1]);
    }
  });
  if (!agent) throw new Error('parseMap: no agent (one of > v < ^)');
  return { grid, agent };
}

export interface AsciiGridOptions {
  /** Time limit in steps. Default 100. */
  maxSteps?: number;
  /** Side of the egocentric view (odd). Default 7. */
  viewSize?: number;
  /** Colour overrides keyed `"x,y"`. Default none. */
  colors?: Readonly<Record<string, keyof typeof COLOR>>;
  /** Mission text. Default "get to the goal". */
  mission?: string;
}

/** A fixed hand-drawn world (every reset gives the same map; the seed is unused). */
export class AsciiGridEnv extends GridWorld {
  constructor(
    private readonly rows: readonly string[],
    private readonly options: AsciiGridOptions = {},
  ) {
    super(
      { id: 'grid/ascii', title: 'Hand-drawn grid', description: 'A fixed world drawn as text, for tests and hand-made levels; every reset gives the same map.' },
      { maxSteps: options.maxSteps ?? 100, viewSize: options.viewSize ?? DEFAULT_VIEW_SIZE },
    );
    parseMap(rows, options.colors); // fail at construction, not at the first reset
  }

  protected generate(_rng: Rng): Layout {
    return { ...parseMap(this.rows, this.options.colors), mission: this.options.mission ?? 'get to the goal' };
  }
}
