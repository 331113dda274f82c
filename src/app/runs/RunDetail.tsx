/**
 * One saved run, read-only: its charts, its reward code and versions, its name, notes and
 * tags, and what can be done with it (resume, export).
 */
import { useMemo, useState } from 'react';
import { useStore } from '../store.ts';
import { formatRanges, rangesCount } from '../../runtime/storage/recorderOptions.ts';
import { RunChart, type ChartRun } from './RunCharts.tsx';
import type { ExportKind } from './runsState.ts';
import { pct, shortValue, runMarkers, RewardCodeLine, fmtDate, useLiveRunId, StatusChip, ResumeButton } from './runParts.tsx';

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

const EXPORTS: { kind: ExportKind; label: string; title: string }[] = [
  { kind: 'run', label: 'Run file', title: 'The whole run as one JSON file (config, metrics, trajectories, name, tags, note, last checkpoint): imports into any playground, and `npm run train -- --resume FILE` continues it' },
  { kind: 'csv', label: 'Metrics CSV', title: 'One row per iteration, one column per metric' },
  { kind: 'metrics-jsonl', label: 'Metrics JSONL', title: "One JSON object per iteration, as the CLI's metrics.jsonl" },
  { kind: 'metrics-jsonl-trl', label: 'JSONL, TRL names', title: "The metrics JSONL under TRL GRPOTrainer's names (reward, rewards/<term>/mean, frac_reward_zero_std, kl, …), as the CLI's --metric-names trl; keys TRL has no name for keep ours" },
  { kind: 'metrics-jsonl-verl', label: 'JSONL, veRL names', title: "The metrics JSONL under veRL's names (critic/score/mean, actor/ppo_kl, critic/vf_loss, …), as the CLI's --metric-names verl; keys veRL has no name for keep ours" },
  { kind: 'trajectories-jsonl', label: 'Trajectories JSONL', title: "The saved sampled episodes, as the CLI's trajectories.jsonl" },
  { kind: 'config', label: 'Config JSON', title: 'The fully resolved config: npm run train -- --config FILE runs it headless' },
  { kind: 'onnx', label: 'Policy ONNX', title: "The policy at the run's last checkpoint, weights baked in (an MLP: one state per call; a transformer: one token per call on a KV cache), as the CLI's policy.onnx: loadable by any ONNX runtime" },
  { kind: 'experiment-trl', label: 'TRL experiment', title: "The run as a TRL experiment (a .tar folder, as npm run export -- --to trl): GRPOConfig fields, a GRPOTrainer script on the env served by npm run serve, the reward terms in Python, and a README.txt saying what did not translate" },
  { kind: 'experiment-verl', label: 'veRL experiment', title: "The run as a veRL experiment through verl-tool (a .tar folder, as npm run export -- --to verl; tool envs): hydra overrides, a launch script, the reward terms in Python, and a README.txt saying what did not translate" },
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

export function RunDetail() {
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
