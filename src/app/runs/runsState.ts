/** The Runs slice's state and actions, apart from their implementation (slice.ts), so the store's type imports no slice. */
import type { MetricRow, RunData } from '../../core/runs/format.ts';
import { type ImportFile } from '../../core/runs/format.ts';
import { type StorageUse } from '../../runtime/storage/browser.ts';
import type { RunMeta } from '../../runtime/storage/runStore.ts';
import type { XAxis } from './compare.ts';

/** What can be exported from a run. */
export type ExportKind = 'csv' | 'metrics-jsonl' | 'metrics-jsonl-trl' | 'metrics-jsonl-verl' | 'trajectories-jsonl' | 'config' | 'run' | 'onnx' | 'policy-json' | 'experiment-trl' | 'experiment-verl';

/** A run opened read-only. */
export type OpenRun = RunData & { meta: RunMeta };

export interface CompareSettings {
  /** The metric drawn. */
  metric: string;
  /** EMA smoothing weight, 0 (none) to 0.99. */
  smoothing: number;
  xAxis: XAxis;
  /** Runs of the same config on different seeds are drawn as mean ± one standard deviation. */
  groupSeeds: boolean;
}

export interface RunsSlice {
  /** Saved runs, newest first; null until loaded (or without storage). */
  runs: RunMeta[] | null;
  /** Why the list cannot be shown (no IndexedDB), or null. */
  runsUnavailable: string | null;
  storage: StorageUse | null;
  /** Runs ticked for Compare, in the order they were ticked. */
  selected: string[];
  /** Metric rows of the selected runs. */
  compareRows: Record<string, MetricRow[]>;
  compare: CompareSettings;
  openRun: OpenRun | null;
  /** The run deleted last, while it can be brought back. */
  undoable: { id: string; name: string } | null;
  /** Problems of the last import (each names its file and field); empty after a good one. */
  importProblems: string[];
  /** Reloads the list (and marks runs of closed tabs as interrupted). */
  refreshRuns(): Promise<void>;
  updateRunInfo(id: string, patch: Partial<Pick<RunMeta, 'name' | 'tags' | 'note'>>): Promise<void>;
  deleteRun(id: string): Promise<void>;
  undoDelete(): Promise<void>;
  toggleSelected(id: string): Promise<void>;
  /** Ticks exactly `ids` for Compare and opens Runs (a sweep's "Compare these runs"). */
  selectForCompare(ids: readonly string[]): Promise<void>;
  setCompare(patch: Partial<CompareSettings>): void;
  openSavedRun(id: string | null): Promise<void>;
  importRunFiles(files: ImportFile[]): Promise<boolean>;
  exportRun(id: string, kind: ExportKind): Promise<void>;
}
