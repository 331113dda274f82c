/**
 * The Runs slice of the app store: the saved runs (IndexedDB), the storage they use, the run
 * opened read-only, the runs selected for Compare and its settings, delete with undo, import
 * and export. The data lives in the RunStore; this slice holds what the views draw.
 */
import type { StateCreator } from 'zustand';
import type { Store } from '../storeTypes.ts';
import type { CompareSettings, RunsSlice } from './runsState.ts';
import { browserRunStore } from '../../runtime/storage/browser.ts';
import { deleteRun, exportRun, importRunFiles, loadRows, refreshRuns, undoDelete, updateRunInfo, type RunsContext } from './runsActions.ts';

export const DEFAULT_COMPARE: CompareSettings = { metric: 'episode/success_rate', smoothing: 0, xAxis: 'iteration', groupSeeds: true };

const SELECTED_KEY = 'rl-playground.runs.selected';

/** The runs selected for Compare when the page last had any (a reload keeps the comparison). */
function loadSelected(): string[] {
  try {
    const v: unknown = JSON.parse(globalThis.localStorage?.getItem(SELECTED_KEY) ?? '[]');
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string').slice(0, 200) : [];
  } catch {
    return [];
  }
}

/** Keeps the Compare selection across reloads (best effort: blocked storage only loses that). */
export function saveSelected(ids: readonly string[]): void {
  try {
    globalThis.localStorage?.setItem(SELECTED_KEY, JSON.stringify(ids));
  } catch {
    // Storage blocked or full: the selection lives for this page only.
  }
}

export const runsSlice: StateCreator<Store, [], [], RunsSlice> = (set, get) => {
  const store = browserRunStore();

  const ctx: RunsContext = { set, get, store, undo: { timer: undefined } };

  return {
    runs: null,
    runsUnavailable: store ? null : 'This browser offers no IndexedDB here (a private window may block it): runs are not saved.',
    storage: null,
    selected: loadSelected(),
    compareRows: {},
    compare: DEFAULT_COMPARE,
    openRun: null,
    undoable: null,
    importProblems: [],

    refreshRuns: () => refreshRuns(ctx),

    updateRunInfo: (id, patch) => updateRunInfo(ctx, id, patch),

    deleteRun: (id) => deleteRun(ctx, id),

    undoDelete: () => undoDelete(ctx),

    toggleSelected: async (id) => {
      const sel = get().selected;
      const selected = sel.includes(id) ? sel.filter((x) => x !== id) : [...sel, id];
      set({ selected });
      await loadRows(ctx, selected);
    },

    selectForCompare: async (ids) => {
      // Only these runs, in this order; Runs shows them (its list is read again: a sweep's runs are new).
      // Rows read while they trained are stale: read them again.
      const rows = { ...get().compareRows };
      for (const id of ids) delete rows[id];
      set({ selected: [...new Set(ids)], compareRows: rows, view: 'runs' });
      await get().refreshRuns();
    },

    setCompare: (patch) => {
      const c = { ...get().compare, ...patch };
      c.smoothing = Math.min(0.99, Math.max(0, Number.isFinite(c.smoothing) ? c.smoothing : 0));
      set({ compare: c });
    },

    openSavedRun: async (id) => {
      if (!store || id === null) {
        set({ openRun: null });
        return;
      }
      const run = await store.loadRun(id);
      if (!run) get().notify('warning', 'That run is no longer saved.');
      set({ openRun: run });
    },

    importRunFiles: (files) => importRunFiles(ctx, files),

    exportRun: (id, kind) => exportRun(ctx, id, kind),
  };
};
