/** The editor's palette: the tiles a map is painted with, their keys and their names. */
import { AGENT_CHARS } from '../../../core/envs/grid/objects.ts';
import { DIR_NAMES } from '../../../core/envs/grid/view.ts';
import { MAP_TILES, type MapTile } from '../../../core/envs/grid/mapSpec.ts';

export type Tool = MapTile | 'agent';

export const TOOLS: readonly { id: Tool; title: string; key: string }[] = [
  { id: 'empty', title: 'floor', key: '1' },
  { id: 'wall', title: 'wall', key: '2' },
  { id: 'lava', title: 'lava', key: '3' },
  { id: 'key', title: 'key', key: '4' },
  { id: 'door', title: 'locked door', key: '5' },
  { id: 'goal', title: 'goal', key: '6' },
  { id: 'agent', title: 'agent start', key: '7' },
];

/** The map character `tool` paints (the agent with `heading`). */
export function toolChar(tool: Tool, heading: number): string {
  return tool === 'agent' ? AGENT_CHARS[heading] : MAP_TILES[tool];
}

/** A map character in words. */
export function describeCell(ch: string): string {
  const dir = AGENT_CHARS.indexOf(ch);
  if (dir >= 0) return `agent start facing ${DIR_NAMES[dir]}`;
  const t = (Object.keys(MAP_TILES) as MapTile[]).find((k) => MAP_TILES[k] === ch);
  return TOOLS.find((x) => x.id === t)?.title ?? 'unknown';
}
