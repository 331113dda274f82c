/**
 * Remembered backend choices, per device and model (localStorage): the first run of a model on
 * a device times the backends; later runs of the same model start at once with the same choice.
 * Stored data is checked on read: anything malformed is ignored (and measured again).
 */
import type { EngineDecision } from '../../core/engine/choose.ts';

const STORAGE_KEY = 'arl.engine-choices.v1';
/** Most remembered choices; the oldest go first. */
const MAX_ENTRIES = 32;

export interface RememberedChoice {
  decision: EngineDecision;
  /** The model's label, e.g. 'MLP 984→64→64→7 (68k params)'. */
  shapeLabel: string;
  /** When it was measured, ms since the epoch. */
  at: number;
}

type Table = Record<string, RememberedChoice>;

function storage(): Storage | null {
  try {
    return typeof localStorage === 'undefined' ? null : localStorage;
  } catch {
    return null; // storage disabled (e.g. a sandboxed iframe)
  }
}

function isChoice(v: unknown): v is RememberedChoice {
  const c = v as RememberedChoice;
  return (
    !!c &&
    typeof c.at === 'number' &&
    typeof c.shapeLabel === 'string' &&
    !!c.decision &&
    typeof c.decision.chosen === 'string' &&
    typeof c.decision.reason === 'string' &&
    Array.isArray(c.decision.candidates) &&
    c.decision.candidates.every((x) => x && typeof x.id === 'string' && typeof x.label === 'string')
  );
}

function read(): Table {
  const raw = storage()?.getItem(STORAGE_KEY);
  if (!raw) return {};
  try {
    const parsed = JSON.parse(raw) as unknown;
    if (!parsed || typeof parsed !== 'object') return {};
    return Object.fromEntries(Object.entries(parsed as Record<string, unknown>).filter((e): e is [string, RememberedChoice] => isChoice(e[1])));
  } catch {
    return {};
  }
}

function write(t: Table): void {
  const entries = Object.entries(t).sort((a, b) => b[1].at - a[1].at).slice(0, MAX_ENTRIES);
  try {
    storage()?.setItem(STORAGE_KEY, JSON.stringify(Object.fromEntries(entries)));
  } catch {
    // Quota or disabled storage: the choice is simply measured again next time.
  }
}

export function recallChoice(key: string): RememberedChoice | null {
  return read()[key] ?? null;
}

export function rememberChoice(key: string, choice: RememberedChoice): void {
  write({ ...read(), [key]: choice });
}
