/**
 * The Runs slice's actions on the saved runs themselves: reading them again, renaming and
 * tagging, delete with undo, import and export. The slice (slice.ts) holds what the views draw
 * and calls these with its context.
 */
import type { StoreApi } from 'zustand';
import type { Store } from '../storeTypes.ts';
import type { ExportKind } from './runsState.ts';
import type { ImportFile, MetricRow } from '../../core/runs/format.ts';
import type { RunMeta, RunStore } from '../../runtime/storage/runStore.ts';
import { rewardCodeHash, versionAt } from '../../core/reward/versions.ts';
import { configToJson, metricsToCsv, metricsToJsonl, parseImport, runRewardVersions, runToFile, safeFileName, trajectoriesToJsonl } from '../../core/runs/format.ts';
import { recoverInterrupted, storageUse } from '../../runtime/storage/browser.ts';
import { flushRunRecord, forgetRunRecord, recordingRunId } from '../train/slice.ts';
import { download } from './download.ts';
import { renameRow } from '../../core/metrics/lookup.ts';
import { downloadExperiment } from './experimentExport.ts';

/** How long a deleted run can be brought back, ms. */
export const UNDO_DELETE_MS = 10_000;

/** What the actions share: the store's get/set, the run database (null without IndexedDB) and the pending undo's timer. */
export interface RunsContext {
  set: StoreApi<Store>['setState'];
  get: StoreApi<Store>['getState'];
  store: RunStore | null;
  undo: { timer: ReturnType<typeof setTimeout> | undefined };
}

/** Reads the rows of runs `ids` for Compare (keeping those already read). */
export async function loadRows(c: RunsContext, ids: readonly string[]): Promise<void> {
  const { set, get, store } = c;
  if (!store) return;
  const have = get().compareRows;
  const next: Record<string, MetricRow[]> = {};
  for (const id of ids) next[id] = have[id] ?? (await store.getMetrics(id));
  set({ compareRows: next });
}

/** Reads the saved runs again (recovering interrupted ones, purging deletions past their undo window) and the selected runs' rows. */
export async function refreshRuns(c: RunsContext): Promise<void> {
  const { set, get, store } = c;
  if (!store) return;
  try {
    await recoverInterrupted(store, recordingRunId());
    // Deleted runs whose undo window has passed (or that an earlier page left) go for good.
    await store.purgeDeleted(Date.now() - UNDO_DELETE_MS);
    const runs = await store.listRuns();
    const ids = new Set(runs.map((r) => r.id));
    const selected = get().selected.filter((id) => ids.has(id));
    // A live run's rows grow: read the selected ones again.
    const live = recordingRunId();
    const rows = { ...get().compareRows };
    if (live && rows[live]) delete rows[live];
    set({ runs, selected, compareRows: rows, storage: await storageUse() });
    await loadRows(c, selected);
  } catch (e) {
    get().notify('error', `Could not read the saved runs: ${(e as Error).message}`);
  }
}

/** Renames, re-tags or annotates a saved run (trimmed and capped; an empty name keeps the old one). */
export async function updateRunInfo(c: RunsContext, id: string, patch: Partial<Pick<RunMeta, 'name' | 'tags' | 'note'>>): Promise<void> {
  const { set, get, store } = c;
  if (!store) return;
  const clean: typeof patch = { ...patch };
  if (clean.name !== undefined) {
    clean.name = clean.name.trim().slice(0, 200);
    if (!clean.name) {
      get().notify('warning', 'A run needs a name; the old one is kept.');
      delete clean.name;
    }
  }
  if (clean.tags) clean.tags = [...new Set(clean.tags.map((t) => t.trim().slice(0, 60)).filter(Boolean))].slice(0, 50);
  if (clean.note !== undefined) clean.note = clean.note.slice(0, 20_000);
  try {
    await store.updateRun(id, { ...clean, updatedAt: Date.now() });
  } catch (e) {
    get().notify('error', `Could not save the change: ${(e as Error).message}`);
    return;
  }
  const open = get().openRun;
  if (open?.meta.id === id) set({ openRun: { ...open, meta: { ...open.meta, ...clean }, info: { ...open.info, ...clean } } });
  await get().refreshRuns();
}

/** Deletes a saved run, undoable for UNDO_DELETE_MS (a run this tab trains is refused). */
export async function deleteRun(c: RunsContext, id: string): Promise<void> {
  const { set, get, store } = c;
  if (!store) return;
  if (id === recordingRunId()) {
    get().notify('warning', 'This run is still training in this tab: reset it on the Train view first.');
    return;
  }
  const run = get().runs?.find((r) => r.id === id);
  // The previous deletion's undo window closes now.
  clearTimeout(c.undo.timer);
  await store.purgeDeleted();
  await store.deleteRun(id);
  forgetRunRecord(id);
  set({ undoable: { id, name: run?.name ?? id }, selected: get().selected.filter((x) => x !== id), ...(get().openRun?.meta.id === id ? { openRun: null } : {}) });
  c.undo.timer = setTimeout(() => {
    if (get().undoable?.id === id) set({ undoable: null });
    void store.purgeDeleted();
  }, UNDO_DELETE_MS);
  await get().refreshRuns();
}

/** Brings back the run deleted last, within its undo window. */
export async function undoDelete(c: RunsContext): Promise<void> {
  const { set, get, store } = c;
  const u = get().undoable;
  if (!store || !u) return;
  clearTimeout(c.undo.timer);
  await store.restoreRun(u.id);
  set({ undoable: null });
  await get().refreshRuns();
}

/** Adds a run from exported files (a run file, or config + metrics [+ checkpoint]); false, with the problems shown, when nothing was added. */
export async function importRunFiles(c: RunsContext, files: ImportFile[]): Promise<boolean> {
  const { set, get, store } = c;
  if (!store) return false;
  const r = parseImport(files);
  if (!r.ok) {
    set({ importProblems: r.messages });
    return false;
  }
  if (r.run.checkpoint) {
    // Loaded on demand (it builds the config's model): a checkpoint of another model is refused here, not at Resume.
    const { checkpointFitProblems } = await import('../../core/runs/policyExport.ts');
    // Fitting builds the config's env: a code env's sandbox loads in this thread first.
    try {
      await (await import('../../runtime/codeEnv/index.ts')).ensureCodeEnvsFor(r.run.config);
    } catch (e) {
      set({ importProblems: [`The run's code env sandbox could not be loaded, nothing was added: ${(e as Error).message}`] });
      return false;
    }
    const misfit = checkpointFitProblems(r.run.config, r.run.checkpoint, `${files.length === 1 ? files[0].name : 'checkpoint.json'}: checkpoint`);
    if (misfit.length > 0) {
      set({ importProblems: misfit.slice(0, 10) });
      return false;
    }
  }
  try {
    const meta = await store.importRun(r.run);
    set({ importProblems: [] });
    get().notify('info', `Imported "${meta.name}" (${meta.iterations} iterations).`);
  } catch (e) {
    set({ importProblems: [`Saving the imported run failed, nothing was added: ${(e as Error).message}`] });
    return false;
  }
  await get().refreshRuns();
  return true;
}

/** Downloads a saved run in the form `kind` names (metrics, trajectories, config, policy, run file). */
export async function exportRun(c: RunsContext, id: string, kind: ExportKind): Promise<void> {
  const { get, store } = c;
  if (!store) return;
  // A live run: write what waits first, so the export has every iteration so far.
  if (id === recordingRunId()) await flushRunRecord();
  const run = await store.loadRun(id);
  if (!run) {
    get().notify('warning', 'That run is no longer saved.');
    return;
  }
  const base = safeFileName(run.info.name);
  if (kind === 'csv') download(`${base}.metrics.csv`, metricsToCsv(run.metrics), 'text/csv');
  else if (kind === 'metrics-jsonl') download(`${base}.metrics.jsonl`, metricsToJsonl(run.metrics), 'application/x-ndjson');
  else if (kind === 'metrics-jsonl-trl' || kind === 'metrics-jsonl-verl') {
    const naming = kind === 'metrics-jsonl-trl' ? 'trl' : 'verl';
    download(`${base}.metrics.${naming}.jsonl`, metricsToJsonl(run.metrics.map((r) => renameRow(r, naming) as Record<string, number>)), 'application/x-ndjson');
  }
  else if (kind === 'trajectories-jsonl') download(`${base}.trajectories.jsonl`, trajectoriesToJsonl(run.trajectories), 'application/x-ndjson');
  else if (kind === 'config') {
    // A config has one reward code: a run whose code changed mid-run exports the code it
    // ended with (what "run this again" means), and says so; its run file keeps every version.
    const versions = runRewardVersions(run) ?? [];
    const last = versions.at(-1);
    const changed = versions.length > 1 || (last !== undefined && last.iteration > 0);
    download(`${base}.config.json`, configToJson(changed && last ? { ...run.config, reward: { ...run.config.reward, code: last.code } } : run.config), 'application/json');
    if (changed && last) {
      get().notify('info', `"${run.info.name}" changed its reward code while training (${versions.map((v) => `v${v.version} from iteration ${v.iteration + 1}`).join(', ')}). The config holds v${last.version}, the code it ended with; the run file keeps every version, and npm run train -- --resume FILE continues with the one in force at its checkpoint.`);
    }
  }
  else if (kind === 'experiment-trl' || kind === 'experiment-verl') await downloadExperiment(run, kind === 'experiment-trl' ? 'trl' : 'verl', get().notify);
  else if (kind === 'onnx' || kind === 'policy-json') {
    if (!run.checkpoint) {
      get().notify('warning', 'This run has no saved checkpoint, so no policy to export: runs save one after their first iteration, every 10 iterations, on pause and at the end (tool-env runs recorded before they kept checkpoints have none).');
      return;
    }
    try {
      // Loaded on demand: the graph builder is not otherwise needed on the page. Both exports
      // build the config's env, so a code env's sandbox loads in this thread first.
      await (await import('../../runtime/codeEnv/index.ts')).ensureCodeEnvsFor(run.config);
      if (kind === 'policy-json') {
        // What the ONNX file needs beside it: inputs and how to build them, the actions, the env and the reward code in force.
        const { policyCard } = await import('../../core/runs/policyCard.ts');
        const k = run.checkpoint.iteration;
        const code = versionAt(runRewardVersions(run) ?? [], k - 1)?.code ?? '';
        const card = policyCard(run.config, { iteration: k, rewardCodeHash: await rewardCodeHash(code), stage: run.checkpoint.pipeline?.stage });
        download(`${base}.policy.json`, JSON.stringify(card, null, 2) + '\n', 'application/json');
        return;
      }
      const { policyOnnxFromCheckpoint } = await import('../../core/runs/policyExport.ts');
      download(`${base}.policy.onnx`, policyOnnxFromCheckpoint(run.config, run.checkpoint) as Uint8Array<ArrayBuffer>, 'application/octet-stream');
    } catch (e) {
      get().notify('error', `The policy could not be exported: ${(e as Error).message}`);
    }
  }
  else download(`${base}.run.json`, runToFile(run), 'application/json');
}
