/**
 * The example maps shipped in examples/envs/ (the studio opens them; `--env-file` trains on the
 * files themselves). Parsed through the same schema as any imported map.
 */
import fourRooms from '../../../../examples/envs/four-rooms.json';
import lavaCrossing from '../../../../examples/envs/lava-crossing.json';
import { parseGridMap, type GridMap } from './mapSpec.ts';

function load(file: string, raw: unknown): GridMap {
  const r = parseGridMap(raw);
  if (!r.ok) throw new Error(`examples/envs/${file}: ${r.messages.join('; ')}`);
  return r.map;
}

/** Example maps by file slug, in the order the studio lists them. */
export const EXAMPLE_MAPS: readonly { slug: string; map: GridMap }[] = [
  { slug: 'four-rooms', map: load('four-rooms.json', fourRooms) },
  { slug: 'lava-crossing', map: load('lava-crossing.json', lavaCrossing) },
];
