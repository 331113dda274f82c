/**
 * The page's run store (IndexedDB) and what only a browser can tell: which runs another tab
 * still records (Web Locks), and how much storage the origin uses.
 */
import { RunStore, type RunMeta } from './runStore.ts';
import { runLockName } from './recorderOptions.ts';

let store: RunStore | null | undefined;

/** The app's run store; null where IndexedDB is missing (Node tests, some private modes). */
export function browserRunStore(): RunStore | null {
  if (store === undefined) store = typeof indexedDB === 'undefined' ? null : new RunStore();
  return store;
}

/** Names of the Web Locks held by any tab of this origin (empty without the API). */
async function heldLocks(): Promise<Set<string>> {
  const locks = (globalThis.navigator as Navigator | undefined)?.locks;
  if (!locks?.query) return new Set();
  const q = await locks.query();
  return new Set((q.held ?? []).map((l) => l.name ?? ''));
}

/** True when another tab of this origin records run `id` now (it holds the run's Web Lock). */
export async function recordedElsewhere(id: string): Promise<boolean> {
  return (await heldLocks()).has(runLockName(id));
}

/**
 * Marks runs whose recording tab is gone as interrupted. `ownRunId`: the run this tab records
 * (alive even before its lock request is granted).
 */
export async function recoverInterrupted(s: RunStore, ownRunId: string | null): Promise<RunMeta[]> {
  const held = await heldLocks();
  return s.markInterrupted((id) => id === ownRunId || held.has(runLockName(id)));
}

export interface StorageUse {
  usage: number;
  quota: number;
}

/** navigator.storage.estimate(), or null where unavailable. */
export async function storageUse(): Promise<StorageUse | null> {
  const est = (globalThis.navigator as Navigator | undefined)?.storage?.estimate;
  if (!est) return null;
  try {
    const e = await navigator.storage.estimate();
    return { usage: e.usage ?? 0, quota: e.quota ?? 0 };
  } catch {
    return null;
  }
}
