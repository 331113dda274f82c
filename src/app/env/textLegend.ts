/**
 * A legend for the grid text rendering, limited to the characters a given observation uses,
 * so a student can read `#.G^` without looking anything up. Characters come from objects.ts.
 */
import { COLOR_LETTERS, COLOR_NAMES, LEGEND } from '../../core/envs/grid/objects.ts';

const MEANING: Readonly<Record<string, string>> = {
  [LEGEND.unseen]: 'unseen',
  [LEGEND.empty]: 'floor',
  [LEGEND.floor]: 'switch plate',
  [LEGEND.agent]: 'other agent',
  [LEGEND.wall]: 'wall',
  [LEGEND.goal]: 'goal',
  [LEGEND.lava]: 'lava',
  [LEGEND.key]: 'key',
  [LEGEND.ball]: 'ball',
  [LEGEND.box]: 'box',
  [LEGEND.doorOpen]: 'open door',
  [LEGEND.doorClosed]: 'closed door',
  [LEGEND.doorLocked]: 'locked door',
  '^': 'agent',
  '>': 'agent',
  v: 'agent',
  '<': 'agent',
};

export interface LegendEntry {
  /** The character as shown (a space is shown as "␣"). */
  symbol: string;
  meaning: string;
}

/** Entries for the map characters and colour letters that appear in `text`, in legend order. */
export function legendFor(text: string): LegendEntry[] {
  const lines = text.split('\n');
  const mapChars = new Set<string>();
  const colorLetters = new Set<string>();
  for (const line of lines) {
    const m = /^(colors|carry): (.*)$/.exec(line);
    if (m) {
      // Items are `<object char><colour letter>`; a carried object appears only here.
      for (const item of m[2].split(' ')) {
        if (item.length !== 2) continue;
        mapChars.add(item[0]);
        colorLetters.add(item[1]);
      }
    } else for (const ch of line) mapChars.add(ch);
  }
  const out: LegendEntry[] = [];
  const seen = new Set<string>();
  for (const [ch, meaning] of Object.entries(MEANING)) {
    if (!mapChars.has(ch) || seen.has(meaning + ch)) continue;
    seen.add(meaning + ch);
    out.push({ symbol: ch === ' ' ? '␣' : ch, meaning });
  }
  for (let i = 0; i < COLOR_LETTERS.length; i++) {
    if (colorLetters.has(COLOR_LETTERS[i])) out.push({ symbol: COLOR_LETTERS[i], meaning: COLOR_NAMES[i] });
  }
  return out;
}
