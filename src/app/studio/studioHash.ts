/**
 * The studio's part of the URL: `#view=studio&tab=map&map=#####/#>.G#/#####&maxSteps=100&…`
 * (the Code tab's links, `#view=studio&tab=code&code=…`, are read by code/link.ts).
 * A map is data (mapSpec.ts), so a link opens it straight away; it is checked by the same schema
 * as a file, and a bad link is named and replaced by the default map (the page had nothing yet).
 */
import { hashPairs } from '../state/hash.ts';
import { DEFAULT_MAP, mapFromKwargs, mapToKwargs, type GridMap } from '../../core/envs/grid/mapSpec.ts';

/** The studio's tabs; each tab's panel is listed in StudioView.tsx. */
export const STUDIO_TABS = ['map', 'code'] as const;
export type StudioTab = (typeof STUDIO_TABS)[number];

/** True when the hash names the studio. */
export function isStudioHash(hash: string): boolean {
  return /(^#?|&)view=studio(&|$)/.test(hash);
}

/** Keeps `/` and `#`-free text readable; escapes what would break the `&`/`=` structure. */
function encode(v: string | number): string {
  return encodeURIComponent(String(v)).replace(/%2F/gi, '/');
}

export function formatStudioHash(tab: StudioTab, map: GridMap): string {
  const parts = ['view=studio', `tab=${tab}`];
  for (const [k, v] of Object.entries(mapToKwargs(map))) parts.push(`${k}=${encode(v)}`);
  return '#' + parts.join('&');
}

export interface ParsedStudioHash {
  tab: StudioTab;
  /** The link's map, or null when it carries none (or a broken one: see problems). */
  map: GridMap | null;
  problems: string[];
}

const NUMERIC = new Set(['maxSteps', 'viewSize', 'goalReward', 'lavaReward']);

export function parseStudioHash(hash: string): ParsedStudioHash {
  const out: ParsedStudioHash = { tab: 'map', map: null, problems: [] };
  const kwargs: Record<string, unknown> = {};
  const { pairs, problems } = hashPairs(hash);
  out.problems.push(...problems);
  for (const [key, value] of pairs) {
    if (key === 'view') continue;
    if (key === 'tab') {
      if ((STUDIO_TABS as readonly string[]).includes(value)) out.tab = value as StudioTab;
      else out.problems.push(`tab=${value.slice(0, 20)} is not one of ${STUDIO_TABS.join(', ')}`);
    } else if (key === 'map' || key === 'name') kwargs[key] = value;
    // A code link's code is read by the Code tab (code/link.ts), once, and never run unasked.
    else if (key === 'code') continue;
    else if (NUMERIC.has(key)) kwargs[key] = value.trim() === '' ? value : Number(value);
    else out.problems.push(`unknown setting ${JSON.stringify(key.slice(0, 40))}`);
  }
  if (kwargs.map !== undefined) {
    const r = mapFromKwargs({ ...mapToKwargs(DEFAULT_MAP), ...kwargs });
    if (r.ok) out.map = r.map;
    else out.problems.push(`the map in the link is not a valid map (${r.messages.join('; ')}); opened the default map instead`);
  }
  return out;
}
