/**
 * Registers the grid worlds. Each id fixes the kwargs that make it what its name says
 * (e.g. `size: 5`); any kwarg can still be overridden through `makeEnv(id, kwargs)`.
 */
import { registerEnv } from '../registry.ts';
import { CustomMapEnv } from './custom.ts';
import { DoorKeyEnv } from './door-key.ts';
import { EmptyEnv } from './empty.ts';
import { FourRoomsEnv } from './four-rooms.ts';
import { LavaCrossingEnv } from './lava-crossing.ts';
import { MemoryEnv } from './memory.ts';
import { SwitchDoorEnv } from './switch-door.ts';

registerEnv('grid/empty-5x5', (kw) => new EmptyEnv('grid/empty-5x5', kw), { size: 5 });
registerEnv('grid/empty-8x8', (kw) => new EmptyEnv('grid/empty-8x8', kw), { size: 8 });
registerEnv('grid/four-rooms', (kw) => new FourRoomsEnv('grid/four-rooms', kw), { size: 19, maxSteps: 100 });
registerEnv('grid/door-key-6x6', (kw) => new DoorKeyEnv('grid/door-key-6x6', kw), { size: 6 });
registerEnv('grid/lava-crossing-9x9', (kw) => new LavaCrossingEnv('grid/lava-crossing-9x9', kw), { size: 9, rivers: 1 });
registerEnv('grid/memory', (kw) => new MemoryEnv('grid/memory', kw), { size: 13 });
registerEnv('grid/switch-door', (kw) => new SwitchDoorEnv('grid/switch-door', kw));
// A map drawn in the studio: its kwargs carry the whole map (mapSpec.ts), so links, configs and
// every trainer and server take it like any other env.
registerEnv('grid/custom', (kw) => new CustomMapEnv('grid/custom', kw));

export { ACTION, ACTION_LABELS, GridWorld } from './world.ts';
export type { GridWorldConfig, Layout, Outcome } from './world.ts';
export { COLOR, COLOR_NAMES, DOOR, LEGEND, OBJ, OBJ_NAMES } from './objects.ts';
export { CustomMapEnv, DoorKeyEnv, EmptyEnv, FourRoomsEnv, LavaCrossingEnv, MemoryEnv, SwitchDoorEnv };
export { SWITCH_DOOR_AGENTS, SWITCH_DOOR_COLORS } from './switch-door.ts';
export { AsciiGridEnv, parseMap } from './ascii.ts';
export type { AsciiGridOptions } from './ascii.ts';
export { Grid } from './grid.ts';
