/**
 * The saved runs, newest first: each with its status, to open, select for comparison, resume
 * or delete (with undo); the storage line and the import button above them.
 */
import { useRef, type ChangeEvent } from 'react';
import { useStore } from '../store.ts';
import { formatRanges } from '../../runtime/storage/recorderOptions.ts';
import type { RunMeta } from '../../runtime/storage/runStore.ts';
import { pct, fmtBytes, CodeHash, AppliedCount, fmtDate, useLiveRunId, StatusChip, MissingMark, ResumeButton } from './runParts.tsx';

export function StorageLine() {
  const storage = useStore((s) => s.storage);
  const runs = useStore((s) => s.runs);
  if (!storage) return null;
  return (
    <span className="muted small" data-testid="storage-used" data-usage={storage.usage} title="navigator.storage.estimate(): everything this site stores in this browser">
      {runs?.length ?? 0} saved run{runs?.length === 1 ? '' : 's'} · storage used {fmtBytes(storage.usage)}
      {storage.quota > 0 && ` of ${fmtBytes(storage.quota)} available`}
    </span>
  );
}

export function ImportButton() {
  const importRunFiles = useStore((s) => s.importRunFiles);
  const problems = useStore((s) => s.importProblems);
  const input = useRef<HTMLInputElement>(null);
  const onPick = async (e: ChangeEvent<HTMLInputElement>) => {
    const picked = [...(e.target.files ?? [])];
    e.target.value = '';
    if (picked.length === 0) return;
    const files = await Promise.all(picked.map(async (f) => ({ name: f.webkitRelativePath || f.name, text: await f.text() })));
    await importRunFiles(files);
  };
  return (
    <>
      <button type="button" className="btn" onClick={() => input.current?.click()} title="A run file (.run.json), or a CLI output folder's config.json + metrics.jsonl (+ trajectories.jsonl), picked together">
        Import…
      </button>
      <input ref={input} type="file" multiple accept=".json,.jsonl,application/json" hidden data-testid="import-input" onChange={(e) => void onPick(e)} />
      {problems.length > 0 && (
        <div className="import-problems" role="alert" data-testid="import-problems">
          <b>Nothing was imported.</b> {problems.length === 1 ? 'A problem' : 'Problems'} in the file:
          <ul>
            {problems.map((p) => (
              <li key={p}>{p}</li>
            ))}
          </ul>
          <button type="button" className="btn btn-small" onClick={() => useStore.setState({ importProblems: [] })}>
            Dismiss
          </button>
        </div>
      )}
    </>
  );
}

export function UndoBar() {
  const undoable = useStore((s) => s.undoable);
  const undo = useStore((s) => s.undoDelete);
  if (!undoable) return null;
  return (
    <div className="undo-bar" role="status" data-testid="undo-bar">
      Deleted <b>{undoable.name}</b>.
      <button type="button" className="btn btn-small" data-testid="undo-delete" onClick={() => void undo()}>
        Undo
      </button>
    </div>
  );
}

export function RunList() {
  const runs = useStore((s) => s.runs);
  const selected = useStore((s) => s.selected);
  const liveId = useLiveRunId();
  if (!runs) return <p className="muted">Loading the saved runs…</p>;
  if (runs.length === 0) {
    return (
      <div className="placeholder" data-testid="runs-empty">
        <h2>No saved runs yet</h2>
        <p className="muted">Every run you train on the Train view is saved here as it trains. You can also import a run file or a CLI output folder.</p>
      </div>
    );
  }
  return (
    // Scrolls sideways on its own on a narrow screen (the page does not); focusable so the keyboard can scroll it.
    <div className="runs-table-wrap" tabIndex={0} role="region" aria-label="Saved runs">
      <table className="runs-table" data-testid="runs-table">
        <thead>
          <tr>
            <th title="Tick runs to compare them">Compare</th>
            <th>Name</th>
            <th>Preset</th>
            <th>Env</th>
            <th>Algo</th>
            <th title="SHA-256 of the reward code the run started with (first 12 hex digits)">Reward code</th>
            <th className="num">Seed</th>
            <th>Status</th>
            <th className="num">Iterations</th>
            <th className="num">Best success</th>
            <th>Date</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {runs.map((r) => (
            <RunRow key={r.id} r={r} live={r.id === liveId} selected={selected.includes(r.id)} />
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** One saved run: tick to compare, open, status, resume and delete (live: it is training in this tab). */
function RunRow({ r, live, selected }: { r: RunMeta; live: boolean; selected: boolean }) {
  const { toggleSelected, openSavedRun, deleteRun } = useStore.getState();
  return (
    <tr data-testid="run-row" data-run-id={r.id} data-name={r.name} data-status={live ? 'live' : r.status} data-iterations={r.iterations} data-missing={formatRanges(r.missingIterations ?? [])} data-checkpoint={r.checkpointAt ?? ''} data-seed={r.config.seed} className={selected ? 'selected' : undefined}>
      <td>
        <input type="checkbox" aria-label={`Compare ${r.name}`} data-testid="run-select" checked={selected} onChange={() => void toggleSelected(r.id)} />
      </td>
      <td className="run-name-cell">
        <button type="button" className="link" data-testid="run-open" onClick={() => void openSavedRun(r.id)}>
          {r.name}
        </button>
        {r.tags.map((t) => (
          <span key={t} className="tag">
            {t}
          </span>
        ))}
        {r.note && (
          <span className="muted small note-mark" title={r.note}>
            ✎
          </span>
        )}
      </td>
      <td className="mono small">{r.config.id}</td>
      <td className="mono small">{r.config.env.id}</td>
      <td>{r.config.algo.algo.toUpperCase()}</td>
      <td>
        <CodeHash code={r.config.reward?.code ?? ''} />
        <AppliedCount edits={r.liveEdits} />
      </td>
      <td className="num">{r.config.seed}</td>
      <td>
        <StatusChip run={r} live={live} />
        {r.source === 'import' && <span className="muted small"> imported</span>}
      </td>
      <td className="num">
        {r.iterations}
        <span className="muted"> / {r.config.iterations}</span>
        <MissingMark run={r} />
      </td>
      <td className="num">{pct(r.bestSuccess)}</td>
      <td className="small">{fmtDate(r.createdAt)}</td>
      <td className="row-actions">
        <ResumeButton run={r} live={live} />
        <button type="button" className="btn btn-small" data-testid="run-delete" onClick={() => void deleteRun(r.id)} disabled={live} title={live ? 'Training in this tab: reset it first' : 'Delete (you can undo for 10 s)'}>
          Delete
        </button>
      </td>
    </tr>
  );
}
