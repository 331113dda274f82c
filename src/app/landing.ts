/**
 * Where the page opens. A link with a hash opens what it names; a first visit (nothing of this
 * app in the browser's storage) with no hash opens the start page (Lessons with no lesson open),
 * which says what the playground is and offers the first lesson and the first preset; a
 * returning visitor with no hash gets the Environments view, as before.
 */
import { PROGRESS_KEY } from './lessons/progress.ts';

/** Written on the first visit, so later visits without a hash open Environments. */
export const VISITED_KEY = 'arl-playground.visited.v1';

/** True when the hash names nothing ('' or a bare '#'). */
export function isBlankHash(hash: string): boolean {
  return hash === '' || hash === '#';
}

/**
 * The view a load opens on: 'start' for a first visit without a hash, otherwise 'hash' (the hash
 * decides; an empty one opens Environments). Lesson progress from before this key existed counts
 * as an earlier visit. A storage that throws (blocked cookies) counts as a first visit.
 */
export function landing(hash: string, storage: Pick<Storage, 'getItem'> | null): 'start' | 'hash' {
  if (!isBlankHash(hash)) return 'hash';
  try {
    if (storage?.getItem(VISITED_KEY) != null || storage?.getItem(PROGRESS_KEY) != null) return 'hash';
  } catch {
    return 'start';
  }
  return 'start';
}

/** Notes the visit (best effort: a storage that refuses just means the start page again next time). */
export function markVisited(storage: Pick<Storage, 'setItem'> | null): void {
  try {
    storage?.setItem(VISITED_KEY, '1');
  } catch {
    // Private mode or a full quota: nothing to keep.
  }
}
