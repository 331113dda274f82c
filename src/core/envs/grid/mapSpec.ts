/**
 * A grid map as data: what the studio paints, what a link and a `.json` file carry, and what the
 * `grid/custom` env is built from. Validated with zod, with bounds, so a map from a link or a
 * file can only ever be a map (it holds no code).
 *
 * Two forms of the same thing:
 * - `GridMap`, the file form: `{ kind: 'grid-map', rows: ['#####', '#>.G#', ...], maxSteps, ... }`.
 * - the env kwargs: the same fields, with the rows joined by `/` into one string (`map`), so every
 *   kwarg is a plain scalar and travels unchanged through the env viewer's and the training
 *   view's link formats (`k.map=…`, `env.kwargs.map=…`).
 *
 * Cells use the text legend (objects.ts): `.` empty, `#` wall, `~` lava, `K` key, `L` locked
 * door, `G` goal, and the agent's start as `>` `v` `<` `^` (its heading). Keys and doors are all
 * yellow, so the one key opens every door.
 */
import { z } from 'zod';
import { AGENT_CHARS, LEGEND } from './objects.ts';
import { MAX_VIEW_SIZE } from './world.ts';

/** Smallest and largest side of a map, cells, outer walls included (four rooms is 19). */
export const MAP_SIDE = { min: 3, max: 25 } as const;
/** Most locked doors on a map: the solver's state carries one open/closed bit per door. */
export const MAX_DOORS = 4;
/** Longest step limit a map may set (rollouts record every step of every episode). */
export const MAX_MAP_STEPS = 1000;
/** Largest reward size on the goal or on lava. */
export const MAX_MAP_REWARD = 10;
/**
 * The preset a map trains with unless the person picks another, in the CLI (`--env-file map.json`
 * without --config) and in the Studio's "Train on this map": GRPO with potential shaping (a
 * sparse reward rarely reaches a far goal, so plain GRPO's groups all score 0).
 */
export const DEFAULT_MAP_PRESET = 'grid-map-grpo-shaped';
/** Most characters in a map's name. */
export const MAX_MAP_NAME = 40;

/** The characters a map may hold, in the order the editor's palette shows them. */
export const MAP_TILES = {
  empty: LEGEND.empty,
  wall: LEGEND.wall,
  lava: LEGEND.lava,
  key: LEGEND.key,
  door: LEGEND.doorLocked,
  goal: LEGEND.goal,
} as const;
export type MapTile = keyof typeof MAP_TILES;
const CELL_CHARS = new Set<string>([...Object.values(MAP_TILES), ...AGENT_CHARS]);

/** Settings of a map besides its cells (defaults and bounds shared by the file form and the kwargs). */
const settings = {
  /** Shown as the env's title. Default 'Custom map'. */
  name: z.string().trim().min(1, 'must not be empty').max(MAX_MAP_NAME, `must be at most ${MAX_MAP_NAME} characters`).regex(/^[ -~]*$/, 'must be plain printable ASCII').default('Custom map'),
  /** Time limit in steps: the episode is truncated when it reaches this many. Default 100. */
  maxSteps: z.int('must be a whole number').min(1, 'must be at least 1').max(MAX_MAP_STEPS, `must be at most ${MAX_MAP_STEPS}`).default(100),
  /** Side of the agent's square egocentric view, cells (odd). Default 7. */
  viewSize: z
    .int('must be a whole number')
    .min(3, 'must be at least 3')
    .max(MAX_VIEW_SIZE, `must be at most ${MAX_VIEW_SIZE}`)
    .refine((v) => v % 2 === 1, 'must be odd (the agent sits in the centre column)')
    .default(7),
  /** Reward for reaching the goal, before the time discount `1 - 0.9 · steps / maxSteps`. Default 1. */
  goalReward: z.number('must be a number').min(0, 'must be at least 0').max(MAX_MAP_REWARD, `must be at most ${MAX_MAP_REWARD}`).default(1),
  /** Reward for stepping into lava (which ends the episode). Default 0; negative punishes. */
  lavaReward: z.number('must be a number').min(-MAX_MAP_REWARD, `must be at least ${-MAX_MAP_REWARD}`).max(MAX_MAP_REWARD, `must be at most ${MAX_MAP_REWARD}`).default(0),
};

/** Checks the rows: a rectangle within bounds, known characters, one agent, at most one key and MAX_DOORS doors. */
function checkRows(rows: readonly string[], ctx: z.RefinementCtx): void {
  const problem = rowsProblem(rows);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
}

/** Why `rows` is not a map, or null when it is one. */
export function rowsProblem(rows: readonly string[]): string | null {
  const h = rows.length;
  if (h < MAP_SIDE.min || h > MAP_SIDE.max) return `the map has ${h} rows; it needs ${MAP_SIDE.min} to ${MAP_SIDE.max}`;
  const w = rows[0].length;
  if (w < MAP_SIDE.min || w > MAP_SIDE.max) return `the map is ${w} cells wide; it needs ${MAP_SIDE.min} to ${MAP_SIDE.max}`;
  let agents = 0;
  let keys = 0;
  let doors = 0;
  for (let y = 0; y < h; y++) {
    if (rows[y].length !== w) return `row ${y + 1} has ${rows[y].length} cells, row 1 has ${w}`;
    for (let x = 0; x < w; x++) {
      const ch = rows[y][x];
      if (!CELL_CHARS.has(ch)) return `unknown cell ${JSON.stringify(ch)} at column ${x + 1}, row ${y + 1} (known: ${[...CELL_CHARS].join(' ')})`;
      if (AGENT_CHARS.includes(ch)) agents++;
      else if (ch === MAP_TILES.key) keys++;
      else if (ch === MAP_TILES.door) doors++;
    }
  }
  if (agents === 0) return 'the map has no agent start: place the agent';
  if (agents > 1) return `the map has ${agents} agent starts; it needs exactly one`;
  if (keys > 1) return `the map has ${keys} keys; it may have at most one (it opens every door)`;
  if (doors > MAX_DOORS) return `the map has ${doors} doors; it may have at most ${MAX_DOORS}`;
  return null;
}

const rowsSchema = z.array(z.string(), 'must be a list of rows (strings)').min(1, 'must have at least one row').superRefine(checkRows);

/** The file form (`examples/envs/*.json`, the studio's export). */
export const gridMapSchema = z.strictObject({
  /** Says what the file holds (`--env-file` dispatches on it). */
  kind: z.literal('grid-map', { error: 'must be "grid-map"' }),
  /** Format version. */
  version: z.literal(1, { error: 'must be 1 (the only version so far)' }).default(1),
  ...settings,
  /** The cells, one string per row, top row first. */
  rows: rowsSchema,
});
export type GridMap = z.output<typeof gridMapSchema>;

/** The kwargs form (`grid/custom`): the rows joined by '/'. */
export const mapKwargsSchema = z.strictObject({
  ...settings,
  /** The cells, rows top first joined by '/' (e.g. `#####/#>.G#/#####`). */
  map: z
    .string('must be the rows joined by "/"')
    .max((MAP_SIDE.max + 1) * MAP_SIDE.max, 'is longer than the largest map')
    .transform((s) => s.split('/'))
    .pipe(rowsSchema),
});

/** A zod error as "path: message" lines (no path for the object itself). */
export function zodMessages(e: z.ZodError): string[] {
  return e.issues.map((i) => (i.path.length ? `${i.path.join('.')}: ${i.message}` : i.message));
}

export type ParseResult = { ok: true; map: GridMap } | { ok: false; messages: string[] };

/** Reads a map in file form (parsed JSON). Never throws. */
export function parseGridMap(input: unknown): ParseResult {
  const r = gridMapSchema.safeParse(input);
  return r.success ? { ok: true, map: r.data } : { ok: false, messages: zodMessages(r.error) };
}

/** Reads a map from `grid/custom` kwargs. Never throws. */
export function mapFromKwargs(kwargs: Record<string, unknown>): ParseResult {
  const r = mapKwargsSchema.safeParse(kwargs);
  if (!r.success) return { ok: false, messages: zodMessages(r.error) };
  const { map: rows, ...rest } = r.data;
  return { ok: true, map: { kind: 'grid-map', version: 1, ...rest, rows } };
}

/** The `grid/custom` kwargs of a map (every field, so a link is whole even if defaults change). */
export function mapToKwargs(m: GridMap): Record<string, string | number> {
  return { map: m.rows.join('/'), name: m.name, maxSteps: m.maxSteps, viewSize: m.viewSize, goalReward: m.goalReward, lavaReward: m.lavaReward };
}

/** A map as pretty JSON, one row per line so a diff of two maps reads as a picture. */
export function mapToJson(m: GridMap): string {
  const { rows, ...rest } = m;
  const head = JSON.stringify(rest, null, 2).replace(/\n}$/, '');
  return `${head},\n  "rows": [\n${rows.map((r) => `    ${JSON.stringify(r)}`).join(',\n')}\n  ]\n}\n`;
}

/**
 * Reads a map from JSON text, with a message that says what is wrong (bad JSON or a bad map). A
 * leading UTF-8 byte-order mark (Windows editors write one; Node's readFileSync keeps it) is
 * skipped, as JSON readers that take files do.
 */
export function mapFromJson(text: string): ParseResult {
  let raw: unknown;
  try {
    raw = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (e) {
    return { ok: false, messages: [`not valid JSON: ${(e as Error).message}`] };
  }
  return parseGridMap(raw);
}

/** A walled room of `width × height` with the agent in the top-left corner facing east and the goal in the bottom-right. */
export function emptyRoomRows(width: number, height: number): string[] {
  return Array.from({ length: height }, (_, y) =>
    Array.from({ length: width }, (_, x) => {
      if (x === 0 || y === 0 || x === width - 1 || y === height - 1) return MAP_TILES.wall;
      if (x === 1 && y === 1) return '>';
      if (x === width - 2 && y === height - 2) return MAP_TILES.goal;
      return MAP_TILES.empty;
    }).join(''),
  );
}

/** The map `grid/custom` builds with no kwargs: an empty 6×6 room. */
export const DEFAULT_MAP: GridMap = { kind: 'grid-map', version: 1, name: 'Custom map', maxSteps: 100, viewSize: 7, goalReward: 1, lavaReward: 0, rows: emptyRoomRows(6, 6) };

/**
 * The same map resized to `width × height`: cells that still fit are kept, new cells are empty;
 * a start that falls outside is put back in the first empty cell.
 */
export function resizeRows(rows: readonly string[], width: number, height: number): string[] {
  const out = Array.from({ length: height }, (_, y) => Array.from({ length: width }, (_, x) => rows[y]?.[x] ?? MAP_TILES.empty));
  if (!out.some((r) => r.some((c) => AGENT_CHARS.includes(c)))) {
    outer: for (const r of out) {
      for (let x = 0; x < r.length; x++) {
        if (r[x] === MAP_TILES.empty) {
          r[x] = '>';
          break outer;
        }
      }
    }
  }
  return out.map((r) => r.join(''));
}

/** `rows` with cell (x, y) set to `ch`; placing an agent moves the start (the old one is cleared). */
export function paintCell(rows: readonly string[], x: number, y: number, ch: string): string[] {
  const grid = rows.map((r) => [...r]);
  if (!grid[y] || grid[y][x] === undefined) return [...rows];
  if (AGENT_CHARS.includes(ch)) for (const r of grid) for (let i = 0; i < r.length; i++) if (AGENT_CHARS.includes(r[i])) r[i] = MAP_TILES.empty;
  grid[y][x] = ch;
  return grid.map((r) => r.join(''));
}
