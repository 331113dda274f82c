/**
 * Small pieces the Runs view's list, detail and comparison share: formats, a run's reward-code
 * versions and hash, its status chip, whether this tab trains it, its Resume button.
 */
import { useMemo } from 'react';
import { useStore } from '../store.ts';
import { statusText } from '../../core/runs/format.ts';
import type { RunMeta } from '../../runtime/storage/runStore.ts';
import { formatRanges, rangesCount } from '../../runtime/storage/recorderOptions.ts';
import { rewardVersions, versionMarkers, type CodeEdit } from '../../core/reward/versions.ts';
import { useCodeHashes } from './codeHash.ts';

export const pct = (v: number) => `${Math.round(v * 100)}%`;

/** A live edit's value on one line: long values (a reward module applied mid-run) are cut at 60 characters. */
export function shortValue(v: unknown): string {
  const text = JSON.stringify(v) ?? String(v);
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

export function fmtBytes(n: number): string {
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
export function runMarkers(config: { reward?: { code?: string } }, liveEdits: readonly CodeEdit[]) {
  const v = runVersions(config, liveEdits);
  return v.length > 1 || (v.length === 1 && v[0].iteration > 0) ? versionMarkers(v) : undefined;
}

/** The reward code's short hash (SHA-256, first 12 hex; the CLI prints the same), or a dash without code. */
export function CodeHash({ code }: { code: string }) {
  const [h] = useCodeHashes([code]);
  if (h === null) return <span className="muted">–</span>;
  return (
    <span className="mono small" data-testid="run-code-hash" title="SHA-256 of the reward code the run started with (first 12 hex digits); the CLI prints the same hash for the same code">
      {h ?? '…'}
    </span>
  );
}

/** "+2 applied": reward-code versions applied mid-run (the hash beside it is the code the run started with). */
export function AppliedCount({ edits }: { edits: readonly CodeEdit[] }) {
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
export function RewardCodeLine({ config, liveEdits }: { config: { reward?: { code?: string } }; liveEdits: readonly CodeEdit[] }) {
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

export const fmtDate = (ms: number) => new Date(ms).toLocaleString(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });

/** Train statuses in which this tab still holds the run (its record says 'running'). */
const HOLDS_RUN = new Set(['starting', 'running', 'pausing', 'stepping', 'paused']);

/** The id of the saved run this tab is training (or has paused), else null. */
export function useLiveRunId(): string | null {
  return useStore((s) => (HOLDS_RUN.has(s.status) ? s.recordId : null));
}

export function StatusChip({ run, live }: { run: RunMeta; live: boolean }) {
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
export function MissingMark({ run }: { run: RunMeta }) {
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

/** Statuses a run can be resumed from: it stopped before its iterations, or with an error (from the last checkpoint before it). */
const RESUMABLE = new Set(['interrupted', 'stopped', 'error']);

/** "Resume" on a run that stopped early and saved a checkpoint: it continues in the Train view, into the same record. */
export function ResumeButton({ run, live }: { run: RunMeta; live: boolean }) {
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
