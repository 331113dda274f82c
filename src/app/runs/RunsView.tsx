/**
 * The "Runs" view: every saved run (trained in this browser or imported), with rename, tags,
 * note, delete with undo, export and import; a run opened read-only; and Compare for the ticked
 * runs (any metric, EMA smoothing, x by iteration / env steps / wall time, seeds of one config
 * as mean ± band, and the config fields that differ).
 */
import { useEffect, useMemo, useRef, useState, type ChangeEvent } from 'react';
import { useStore } from '../store.ts';
import { configDiff, statusText } from '../../core/runs/format.ts';
import type { RunMeta } from '../../runtime/storage/runStore.ts';
import { formatRanges, rangesCount } from '../../runtime/storage/recorder.ts';
import { rewardVersions, versionMarkers, type CodeEdit } from '../../core/reward/versions.ts';
import { useCodeHashes } from './codeHash.ts';
import { X_AXES } from './compare.ts';
import { RunChart, type ChartRun } from './RunCharts.tsx';
import { CompareStatsPanel } from './CompareStats.tsx';
import type { ExportKind } from './runsState.ts';
import './runs.css';

const pct = (v: number) => `${Math.round(v * 100)}%`;

/** A live edit's value on one line: long values (a reward module applied mid-run) are cut at 60 characters. */
function shortValue(v: unknown): string {
  const text = JSON.stringify(v) ?? String(v);
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

function fmtBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MB`;
  return `${(n / 1024 ** 3).toFixed(1)} GB`;
}

/** A run's reward-code versions (config + reward.code live edits; old records may lack `reward`). */
function runVersions(config: { reward?: { code?: string } }, liveEdits: readonly CodeEdit[]) {
  return rewardVersions(config.reward?.code ?? '', liveEdits);
}

/** Chart markers for a run's versions, when it has more than the one it started with. */
function runMarkers(config: { reward?: { code?: string } }, liveEdits: readonly CodeEdit[]) {
  const v = runVersions(config, liveEdits);
  return v.length > 1 || (v.length === 1 && v[0].iteration > 0) ? versionMarkers(v) : undefined;
}

/** The reward code's short hash (SHA-256, first 12 hex; the CLI prints the same), or a dash without code. */
function CodeHash({ code }: { code: string }) {
  const [h] = useCodeHashes([code]);
  if (h === null) return <span className="muted">–</span>;
  return (
    <span className="mono small" data-testid="run-code-hash" title="SHA-256 of the reward code the run started with (first 12 hex digits); the CLI prints the same hash for the same code">
      {h ?? '…'}
    </span>
  );
}

/** "+2 applied": reward-code versions applied mid-run (the hash beside it is the code the run started with). */
function AppliedCount({ edits }: { edits: readonly CodeEdit[] }) {
  const n = edits.filter((e) => e.path === 'reward.code').length;
  if (n === 0) return null;
  return (
    <span className="muted small" title="Reward code applied while the run trained: open the run to see each version's hash and where it took over">
      {' '}
      +{n} applied
    </span>
  );
}

/** "Reward code: v1 3f2a… (from iteration 1), v2 …": each version with its hash. */
function RewardCodeLine({ config, liveEdits }: { config: { reward?: { code?: string } }; liveEdits: readonly CodeEdit[] }) {
  const versions = useMemo(() => runVersions(config, liveEdits), [config, liveEdits]);
  const hashes = useCodeHashes(versions.map((v) => v.code));
  return (
    <p className="muted small" data-testid="run-reward-code">
      Reward code:{' '}
      {versions.length === 0
        ? 'none (the env reward and shaping only)'
        : versions.map((v, i) => (
            <span key={v.version}>
              {i > 0 && ', '}v{v.version} <span className="mono">{hashes[i] === null ? 'cleared' : (hashes[i] ?? '…')}</span> from iteration {v.iteration + 1}
            </span>
          ))}
      .
    </p>
  );
}

const fmtDate = (ms: number) => new Date(ms).toLocaleString(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });

/** The metrics a saved run's read-only view draws, where the run has them. */
const DETAIL_METRICS: { key: string; title: string }[] = [
  { key: 'episode/success_rate', title: 'Success rate' },
  { key: 'reward/mean', title: 'Reward (mean)' },
  { key: 'episode/length_mean', title: 'Episode length' },
  { key: 'actor/entropy', title: 'Policy entropy' },
  { key: 'groups/frac_zero_std', title: 'Groups with no signal' },
  { key: 'actor/approx_kl', title: 'Approx. KL (update)' },
  { key: 'actor/grad_norm', title: 'Gradient norm' },
  { key: 'critic/explained_variance', title: 'Critic explained variance' },
  { key: 'perf/env_steps_per_s', title: 'Env steps / s' },
];

/** Train statuses in which this tab still holds the run (its record says 'running'). */
const HOLDS_RUN = new Set(['starting', 'running', 'pausing', 'stepping', 'paused']);

/** The id of the saved run this tab is training (or has paused), else null. */
function useLiveRunId(): string | null {
  return useStore((s) => (HOLDS_RUN.has(s.status) ? s.recordId : null));
}

function StatusChip({ run, live }: { run: RunMeta; live: boolean }) {
  const paused = useStore((s) => s.status === 'paused');
  const text = live ? (paused ? 'paused in this tab' : 'training in this tab') : statusText(run.status, run.iterations);
  const cls = live ? 'chip-live' : run.status === 'finished' ? 'chip-good' : run.status === 'error' ? 'chip-bad' : run.status === 'running' ? 'chip-live' : 'chip-warn';
  return (
    <span className={`chip ${cls}`} data-testid="run-status" title={run.error ?? undefined}>
      {text}
    </span>
  );
}

/** "· 35 missing" after a saved run's iteration count, naming the iterations on hover. */
function MissingMark({ run }: { run: RunMeta }) {
  const missing = run.missingIterations ?? [];
  if (missing.length === 0) return null;
  const list = formatRanges(missing);
  return (
    <span className="missing-mark" data-testid="run-missing" title={`Not saved (storage was full, or the database was cleared while it trained): iterations ${list}`}>
      {' '}
      · {rangesCount(missing)} missing ({list})
    </span>
  );
}

function StorageLine() {
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

function ImportButton() {
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

function UndoBar() {
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

function RunList() {
  const runs = useStore((s) => s.runs);
  const selected = useStore((s) => s.selected);
  const liveId = useLiveRunId();
  const { toggleSelected, openSavedRun, deleteRun } = useStore.getState();
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
            <tr key={r.id} data-testid="run-row" data-run-id={r.id} data-name={r.name} data-status={r.id === liveId ? 'live' : r.status} data-iterations={r.iterations} data-missing={formatRanges(r.missingIterations ?? [])} data-checkpoint={r.checkpointAt ?? ''} data-seed={r.config.seed} className={selected.includes(r.id) ? 'selected' : undefined}>
              <td>
                <input type="checkbox" aria-label={`Compare ${r.name}`} data-testid="run-select" checked={selected.includes(r.id)} onChange={() => void toggleSelected(r.id)} />
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
                <StatusChip run={r} live={r.id === liveId} />
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
                <ResumeButton run={r} live={r.id === liveId} />
                <button type="button" className="btn btn-small" data-testid="run-delete" onClick={() => void deleteRun(r.id)} disabled={r.id === liveId} title={r.id === liveId ? 'Training in this tab: reset it first' : 'Delete (you can undo for 10 s)'}>
                  Delete
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Statuses a run can be resumed from: it stopped before its iterations, or with an error (from the last checkpoint before it). */
const RESUMABLE = new Set(['interrupted', 'stopped', 'error']);

/** "Resume" on a run that stopped early and saved a checkpoint: it continues in the Train view, into the same record. */
function ResumeButton({ run, live }: { run: RunMeta; live: boolean }) {
  const at = run.checkpointAt;
  if (live || at === null || at === undefined || !RESUMABLE.has(run.status) || at >= run.config.iterations) return null;
  return (
    <button
      type="button"
      className="btn btn-small"
      data-testid="run-resume"
      title={`Continue training from the checkpoint at iteration ${at} (iterations after it are trained again)`}
      onClick={() => void useStore.getState().resumeSavedRun(run.id)}
    >
      Resume from {at}
    </button>
  );
}

const EXPORTS: { kind: ExportKind; label: string; title: string }[] = [
  { kind: 'run', label: 'Run file', title: 'The whole run as one JSON file (config, metrics, trajectories, name, tags, note, last checkpoint): imports into any playground, and `npm run train -- --resume FILE` continues it' },
  { kind: 'csv', label: 'Metrics CSV', title: 'One row per iteration, one column per metric' },
  { kind: 'metrics-jsonl', label: 'Metrics JSONL', title: "One JSON object per iteration, as the CLI's metrics.jsonl" },
  { kind: 'metrics-jsonl-trl', label: 'JSONL, TRL names', title: "The metrics JSONL under TRL GRPOTrainer's names (reward, rewards/<term>/mean, frac_reward_zero_std, kl, …), as the CLI's --metric-names trl; keys TRL has no name for keep ours" },
  { kind: 'metrics-jsonl-verl', label: 'JSONL, veRL names', title: "The metrics JSONL under veRL's names (critic/score/mean, actor/ppo_kl, critic/vf_loss, …), as the CLI's --metric-names verl; keys veRL has no name for keep ours" },
  { kind: 'trajectories-jsonl', label: 'Trajectories JSONL', title: "The saved sampled episodes, as the CLI's trajectories.jsonl" },
  { kind: 'config', label: 'Config JSON', title: 'The fully resolved config: npm run train -- --config FILE runs it headless' },
  { kind: 'onnx', label: 'Policy ONNX', title: "The policy at the run's last checkpoint, weights baked in (an MLP: one state per call; a transformer: one token per call on a KV cache), as the CLI's policy.onnx: loadable by any ONNX runtime" },
  { kind: 'policy-json', label: 'policy.json', title: "What the Policy ONNX needs beside it, as the CLI's policy.json: its inputs and outputs, how to build the input from an observation, the action names (or vocabulary), the env and the reward code's hash" },
];

/** A text field that saves on blur or Enter (not on every key). */
function SavedField({ value, onSave, label, testId, multiline = false, placeholder }: { value: string; onSave: (v: string) => void; label: string; testId: string; multiline?: boolean; placeholder?: string }) {
  const [text, setText] = useState(value);
  const [prev, setPrev] = useState(value);
  if (value !== prev) {
    setPrev(value);
    setText(value);
  }
  const save = () => {
    if (text !== value) onSave(text);
  };
  return (
    <label className="saved-field">
      <span className="saved-label">{label}</span>
      {multiline ? (
        <textarea data-testid={testId} value={text} placeholder={placeholder} rows={3} onChange={(e) => setText(e.target.value)} onBlur={save} />
      ) : (
        <input data-testid={testId} value={text} placeholder={placeholder} onChange={(e) => setText(e.target.value)} onBlur={save} onKeyDown={(e) => e.key === 'Enter' && (e.target as HTMLInputElement).blur()} />
      )}
    </label>
  );
}

function RunDetail() {
  const run = useStore((s) => s.openRun)!;
  const liveId = useLiveRunId();
  const { openSavedRun, updateRunInfo, exportRun, deleteRun } = useStore.getState();
  const meta = run.meta;
  const chartRuns = useMemo<ChartRun[]>(() => [{ id: meta.id, name: meta.name, config: run.config, rows: run.metrics, markers: runMarkers(run.config, meta.liveEdits) }], [meta.id, meta.name, run.config, run.metrics, meta.liveEdits]);
  const otherEdits = meta.liveEdits.filter((e) => e.path !== 'reward.code');
  const present = DETAIL_METRICS.filter((m) => run.metrics.some((r) => Number.isFinite(r[m.key])));
  return (
    <div className="run-detail" data-testid="run-detail" data-run-id={meta.id}>
      <div className="run-detail-head">
        <button type="button" className="btn" data-testid="run-back" onClick={() => void openSavedRun(null)}>
          ← All runs
        </button>
        <h2>{meta.name}</h2>
        <StatusChip run={meta} live={meta.id === liveId} />
        <span className="muted small">
          {meta.config.id} · {meta.config.env.id} · {meta.config.algo.algo.toUpperCase()} · seed {meta.config.seed} · {run.metrics.length} iterations · best success {pct(meta.bestSuccess)} · {fmtDate(meta.createdAt)}
        </span>
      </div>
      {meta.id === liveId && <p className="muted small">A snapshot of a run still training: reopen it to see later iterations. The Train view shows it live.</p>}
      {meta.error && <p className="restart-bar restart-error">Stopped by an error: {meta.error}</p>}
      {(meta.missingIterations?.length ?? 0) > 0 && (
        <p className="restart-bar restart-error" data-testid="run-missing-detail">
          Missing from this saved run: iteration{rangesCount(meta.missingIterations!) === 1 ? '' : 's'} {formatRanges(meta.missingIterations!)} ({rangesCount(meta.missingIterations!)} trained but not saved: storage was full past what the page could hold, or the database was cleared while the run trained). The charts skip them.
        </p>
      )}
      {meta.storageProblem && <p className="restart-bar">{meta.storageProblem}</p>}
      <div className="run-detail-grid">
        <div className="panel run-meta-panel">
          <SavedField label="Name" testId="run-name" value={meta.name} onSave={(name) => void updateRunInfo(meta.id, { name })} />
          <SavedField label="Tags (comma-separated)" testId="run-tags" value={meta.tags.join(', ')} placeholder="e.g. baseline, lr sweep" onSave={(t) => void updateRunInfo(meta.id, { tags: t.split(',') })} />
          <SavedField label="Note" testId="run-note" multiline value={meta.note} placeholder="What this run tried, what you saw" onSave={(note) => void updateRunInfo(meta.id, { note })} />
          <div className="export-row">
            <span className="saved-label">Export</span>
            {EXPORTS.map((x) => (
              <button key={x.kind} type="button" className="btn btn-small" data-testid={`export-${x.kind}`} title={x.title} onClick={() => void exportRun(meta.id, x.kind)}>
                {x.label}
              </button>
            ))}
          </div>
          <p className="muted small">
            {meta.trajectoryCount} sampled trajectories saved{meta.trajectoryStride > 1 ? ` (every ${meta.trajectoryStride}th iteration: the per-run cap keeps them spread over the run)` : ''}.
            {/* Numbered as the charts' axis and the reward-code line below: "from iteration N" = the Nth iteration trained with it. Reward code is listed below, as versions. */}
            {otherEdits.length > 0 && ` Changed while training: ${otherEdits.map((e) => `${e.path} → ${shortValue(e.value)} from iteration ${e.iteration + 1}`).join('; ')}.`}
          </p>
          <RewardCodeLine config={run.config} liveEdits={meta.liveEdits} />
          <ResumeButton run={meta} live={meta.id === liveId} />
          <button type="button" className="btn btn-small" onClick={() => void deleteRun(meta.id)} disabled={meta.id === liveId}>
            Delete this run
          </button>
          <details className="config-json">
            <summary>Config (fully resolved)</summary>
            <pre>{JSON.stringify(run.config, null, 2)}</pre>
          </details>
        </div>
        <div className="run-detail-charts">
          {present.length === 0 && <p className="muted">This run saved no iterations.</p>}
          {present.map((m) => (
            <RunChart key={m.key} runs={chartRuns} metric={m.key} axis="iteration" title={`${m.title}`} height={170} testId={`detail-chart-${m.key}`} />
          ))}
        </div>
      </div>
    </div>
  );
}

function ComparePanel() {
  const runs = useStore((s) => s.runs);
  const selected = useStore((s) => s.selected);
  const rows = useStore((s) => s.compareRows);
  const settings = useStore((s) => s.compare);
  const setCompare = useStore((s) => s.setCompare);
  const chosen = useMemo(() => selected.map((id) => runs?.find((r) => r.id === id)).filter((r): r is RunMeta => !!r), [runs, selected]);
  const chartRuns = useMemo<ChartRun[]>(() => chosen.filter((r) => rows[r.id]).map((r) => ({ id: r.id, name: r.name, config: r.config, rows: rows[r.id], markers: runMarkers(r.config, r.liveEdits) })), [chosen, rows]);
  const keys = useMemo(() => {
    const k = new Set<string>();
    for (const r of chartRuns) for (const row of r.rows) for (const [name, v] of Object.entries(row)) if (Number.isFinite(v)) k.add(name);
    k.delete('iteration');
    k.delete('wall_s');
    return [...k].sort();
  }, [chartRuns]);
  const diff = useMemo(() => configDiff(chosen.map((r) => r.config)), [chosen]);
  if (chosen.length === 0) {
    return (
      <p className="muted compare-hint" data-testid="compare-hint">
        Tick runs to compare them: any metric, smoothed, over iterations, env steps or wall time; runs of one config on different seeds are drawn as mean ± band.
      </p>
    );
  }
  return (
    <section className="compare panel" data-testid="compare-panel">
      <div className="compare-controls">
        <h3>Compare {chosen.length} run{chosen.length > 1 ? 's' : ''}</h3>
        <label>
          Metric{' '}
          <select data-testid="compare-metric" value={settings.metric} onChange={(e) => setCompare({ metric: e.target.value })}>
            {!keys.includes(settings.metric) && <option value={settings.metric}>{settings.metric}</option>}
            {keys.map((k) => (
              <option key={k} value={k}>
                {k}
              </option>
            ))}
          </select>
        </label>
        <label title="Exponential moving average (debiased, as TensorBoard): 0 = raw values">
          Smoothing{' '}
          <input type="range" min={0} max={0.99} step={0.01} value={settings.smoothing} data-testid="compare-smoothing" onChange={(e) => setCompare({ smoothing: Number(e.target.value) })} />
          <span className="mono small">{settings.smoothing.toFixed(2)}</span>
        </label>
        <span className="segmented" role="radiogroup" aria-label="x axis">
          {X_AXES.map((a) => (
            <label key={a.id}>
              <input type="radio" name="compare-x" data-testid={`compare-x-${a.id}`} checked={settings.xAxis === a.id} onChange={() => setCompare({ xAxis: a.id })} />
              {a.label}
            </label>
          ))}
        </span>
        <label title="Runs whose configs differ only in the seed (and iteration count) are one line: the mean, with a band of ± one standard deviation across seeds">
          <input type="checkbox" data-testid="compare-group-seeds" checked={settings.groupSeeds} onChange={(e) => setCompare({ groupSeeds: e.target.checked })} /> seeds as mean ± band
        </label>
      </div>
      <RunChart runs={chartRuns} metric={settings.metric} axis={settings.xAxis} smoothing={settings.smoothing} groupSeeds={settings.groupSeeds} height={340} legend testId="compare-chart" />
      {chartRuns.length > 0 && <CompareStatsPanel runs={chartRuns} metric={settings.metric} />}
      <div className="config-diff" data-testid="config-diff">
        <h4>Config fields that differ</h4>
        {chosen.length < 2 ? (
          <p className="muted small">Tick a second run to see how the configs differ.</p>
        ) : diff.length === 0 ? (
          <p className="muted small">The configs are identical.</p>
        ) : (
          <table className="diff-table">
            <thead>
              <tr>
                <th>field</th>
                {chosen.map((r) => (
                  <th key={r.id}>{r.name}</th>
                ))}
              </tr>
            </thead>
            <tbody>
              {diff.map((d) => (
                <tr key={d.path} data-testid="diff-row" data-path={d.path}>
                  <td className="mono">{d.path}</td>
                  {d.values.map((v, i) => (
                    <td key={chosen[i].id} className="mono">
                      {v === undefined ? <span className="muted">—</span> : JSON.stringify(v)}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </div>
    </section>
  );
}

export function RunsView() {
  const openRun = useStore((s) => s.openRun);
  const unavailable = useStore((s) => s.runsUnavailable);
  const refreshRuns = useStore((s) => s.refreshRuns);
  const live = useStore((s) => s.status === 'running' || s.status === 'stepping' || s.status === 'pausing');
  useEffect(() => {
    void refreshRuns();
    if (!live) return;
    // A run training in this tab: its row's iterations and best success follow.
    const t = setInterval(() => void refreshRuns(), 3000);
    return () => clearInterval(t);
  }, [refreshRuns, live]);
  if (unavailable) {
    return (
      <main className="main runs-main">
        <div className="placeholder">
          <h2>Runs are not saved here</h2>
          <p className="muted">{unavailable}</p>
        </div>
      </main>
    );
  }
  return (
    <main className="main runs-main" data-testid="runs-view">
      <div className="runs-toolbar">
        <h2>Runs</h2>
        <StorageLine />
        <span className="status-spacer" />
        <ImportButton />
      </div>
      <UndoBar />
      {openRun ? (
        <RunDetail />
      ) : (
        <>
          <RunList />
          <ComparePanel />
        </>
      )}
    </main>
  );
}
