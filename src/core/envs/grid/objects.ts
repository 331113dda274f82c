/**
 * What a grid cell can hold, as the three numbers every cell is encoded with:
 * `(object type, colour, state)`. The same ids appear in observations (`GridObs.image`),
 * in `GridFrame.cells` for the UI, and in the text legend below. The numbering follows
 * MiniGrid's, so people who know MiniGrid can read our images directly.
 */

/** Object type ids (channel 0 of an encoded cell). */
export const OBJ = {
  /** Outside the agent's sight (only in observations, never in the world). */
  unseen: 0,
  empty: 1,
  wall: 2,
  /** A walkable tile; behaves like empty except that nothing can be dropped on it (grid/switch-door's switch plate). */
  floor: 3,
  door: 4,
  key: 5,
  ball: 6,
  box: 7,
  goal: 8,
  lava: 9,
  /**
   * An agent: in one-agent envs only in full-state encodings (observations show what it carries
   * instead); in multi-agent envs (grid/switch-door) the other agent in view, and the acting
   * agent's own cell, coloured by agent.
   */
  agent: 10,
} as const;
export type ObjType = (typeof OBJ)[keyof typeof OBJ];

/** The largest value any channel of an encoded cell can take (the `high` of the image box). */
export const MAX_CELL_VALUE = OBJ.agent;

/** Colour ids (channel 1). Colourless objects (wall, empty, lava, ...) carry their default colour. */
export const COLOR = { red: 0, green: 1, blue: 2, purple: 3, yellow: 4, grey: 5 } as const;
export type Color = (typeof COLOR)[keyof typeof COLOR];
export const COLOR_NAMES = ['red', 'green', 'blue', 'purple', 'yellow', 'grey'] as const;
/** One letter per colour for the text rendering (grey is 'e', as 'g' is green). */
export const COLOR_LETTERS = 'rgbpye';

/** Door states (channel 2 for doors; 0 for every other object). */
export const DOOR = { open: 0, closed: 1, locked: 2 } as const;
export type DoorState = (typeof DOOR)[keyof typeof DOOR];

export const OBJ_NAMES = ['unseen', 'empty', 'wall', 'floor', 'door', 'key', 'ball', 'box', 'goal', 'lava', 'agent'] as const;

/** The colour an object gets when the caller names none (walls grey, goals green, lava red). */
export const DEFAULT_COLOR: Readonly<Record<number, Color>> = {
  [OBJ.unseen]: 0,
  [OBJ.empty]: 0,
  [OBJ.wall]: COLOR.grey,
  [OBJ.floor]: COLOR.blue,
  [OBJ.door]: COLOR.yellow,
  [OBJ.key]: COLOR.yellow,
  [OBJ.ball]: COLOR.blue,
  [OBJ.box]: COLOR.purple,
  [OBJ.goal]: COLOR.green,
  [OBJ.lava]: COLOR.red,
  [OBJ.agent]: COLOR.red,
};

/** Can the agent stand on this cell? (Closed and locked doors, walls and objects block.) */
export function canOverlap(type: number, state: number): boolean {
  return (
    type === OBJ.empty || type === OBJ.floor || type === OBJ.goal || type === OBJ.lava || (type === OBJ.door && state === DOOR.open)
  );
}

/** Can the agent see past this cell? Walls and doors that are not open block sight. */
export function seeBehind(type: number, state: number): boolean {
  return type !== OBJ.wall && !(type === OBJ.door && state !== DOOR.open);
}

/** Can the agent pick this object up? */
export function canPickUp(type: number): boolean {
  return type === OBJ.key || type === OBJ.ball || type === OBJ.box;
}

/** Does this object's colour matter to the task (and so get spelled out in text)? */
export function isColored(type: number): boolean {
  return type === OBJ.door || type === OBJ.key || type === OBJ.ball || type === OBJ.box || type === OBJ.agent;
}

/**
 * The text legend: one character per cell, so a view of v×v cells is v lines of v characters.
 * Every character is printable ASCII and inside the shared vocabulary (text/codec.ts).
 *
 *   ' ' unseen    '.' empty            '_' floor (a switch plate)   '#' wall   'G' goal   '~' lava
 *   'K' key       'B' ball             'X' box
 *   'D' closed door   'L' locked door   'd' open door
 *   '^' '>' 'v' '<'   the agent, by heading (always '^' in the egocentric view)
 *   'A' another agent (multi-agent envs; its colour says which)
 *
 * Colours of coloured objects are listed after the map, in reading order (see render.ts).
 */
export const LEGEND = {
  unseen: ' ',
  empty: '.',
  floor: '_',
  wall: '#',
  goal: 'G',
  lava: '~',
  key: 'K',
  ball: 'B',
  box: 'X',
  doorOpen: 'd',
  doorClosed: 'D',
  doorLocked: 'L',
  agent: 'A',
} as const;

/** Agent characters indexed by absolute direction (0 east, 1 south, 2 west, 3 north). */
export const AGENT_CHARS = '>v<^';

/** The legend character of one encoded cell. */
export function cellChar(type: number, state: number): string {
  if (type === OBJ.door) return state === DOOR.open ? LEGEND.doorOpen : state === DOOR.locked ? LEGEND.doorLocked : LEGEND.doorClosed;
  const name = OBJ_NAMES[type] as Exclude<(typeof OBJ_NAMES)[number], 'door'> | undefined;
  if (name === undefined) throw new RangeError(`no legend character for object type ${type}`);
  return LEGEND[name];
}
