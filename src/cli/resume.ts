/**
 * Where --resume finds a run to continue: a run directory the CLI wrote (its config, metric rows
 * and last checkpoint) or a run file exported from the Runs view.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { checkpointFromJson, type Checkpoint } from '../core/runs/checkpoint.ts';
import { parseCliFolder, parseRunFile, REWARD_VERSIONS_FILE, runRewardVersions, type MetricRow, type TrajectoryLine } from '../core/runs/format.ts';
import { parseRunConfig, type RunConfig } from '../core/presets/schema.ts';
import { checkpointFitProblems } from '../core/runs/policyExport.ts';
import { UsageError } from './args.ts';
import { missingVersionProblem, rewardVersions, versionsForResume, withCheckpointVersions, type CodeVersion } from '../core/reward/versions.ts';
import { detectNaming, type MetricNaming } from '../core/metrics/lookup.ts';

/** What --resume found: the run so far, cut back to its last checkpoint. */
export interface ResumeSource {
  config: RunConfig;
  checkpoint: Checkpoint;
  /** Metric rows and trajectories of the iterations before the checkpoint's (later ones are trained again). */
  metrics: MetricRow[];
  trajectories: TrajectoryLine[];
  /** The CLI folder it came from (the run continues there unless --out), or null for a run file. */
  dir: string | null;
  /** Rows past the checkpoint that were dropped (they are trained again, identically for sync runs). */
  dropped: number;
  /** The reward-code versions applied at or before the checkpoint (the run's provenance from here on). */
  rewardVersions: CodeVersion[];
  /** The version that scores from the checkpoint on (null: no user terms). */
  rewardInForce: CodeVersion | null;
  /** The names the folder's metrics.jsonl was written in (a run file: ours). `metrics` are in ours either way. */
  metricNaming: MetricNaming;
}

/**
 * Reads a run to resume: a CLI output folder (config.json, metrics.jsonl, checkpoint.json, and
 * trajectories.jsonl if there) or an app-exported run file. Everything is validated first; a
 * problem throws a UsageError naming the file and field.
 */
export function loadResume(path: string): ResumeSource {
  const abs = resolve(path);
  if (!existsSync(abs)) throw new UsageError(`--resume ${path}: no such file or folder`);
  let parsed;
  let dir: string | null = null;
  let naming: MetricNaming = 'ours';
  if (statSync(abs).isDirectory()) {
    dir = path;
    const files = ['config.json', 'metrics.jsonl', 'trajectories.jsonl', 'checkpoint.json', REWARD_VERSIONS_FILE].filter((f) => existsSync(join(abs, f))).map((f) => ({ name: f, text: readFileSync(join(abs, f), 'utf8') }));
    if (!files.some((f) => f.name === 'checkpoint.json')) {
      throw new UsageError(`--resume ${path}: checkpoint.json: missing (the run saved no checkpoint: it predates them, or its trainer keeps none), so it cannot resume`);
    }
    const metricsText = files.find((f) => f.name === 'metrics.jsonl')?.text;
    if (metricsText === undefined || metricsText.trim() === '') {
      const start = fromCheckpoint(files, path);
      if (start) return { ...start, dir };
    }
    parsed = parseCliFolder(files, null);
    const first = metricsText?.split('\n').find((l) => l.trim() !== '');
    if (first !== undefined && parsed.ok) naming = detectNaming(JSON.parse(first) as Record<string, unknown>);
  } else parsed = parseRunFile(readFileSync(abs, 'utf8'), basename(abs));
  if (!parsed.ok) throw new UsageError(`--resume ${path}: the run cannot be read:\n  - ${parsed.messages.join('\n  - ')}`);
  const run = parsed.run;
  if (!run.checkpoint) throw new UsageError(`--resume ${path}: checkpoint: null (the run saved no checkpoint), so it cannot resume`);
  const misfit = checkpointFitProblems(run.config, run.checkpoint);
  if (misfit.length > 0) throw new UsageError(`--resume ${path}: the checkpoint does not fit the run's config:\n  - ${misfit.join('\n  - ')}`);
  const k = run.checkpoint.iteration;
  const metrics = run.metrics.filter((r) => r.iteration < k);
  // The reward code travels with the run (config + versions applied mid-run, and in a CLI
  // checkpoint every version in force up to it); a run whose rows were scored by a version it no
  // longer carries is refused, never trained on without it.
  const versions = withCheckpointVersions(runRewardVersions(run) ?? [], run.checkpoint.rewardCode);
  if (typeof versions === 'string') throw new UsageError(`--resume ${path}: ${versions}`);
  const missing = missingVersionProblem(versions, metrics);
  if (missing) throw new UsageError(`--resume ${path}: ${missing}`);
  const { kept, inForce } = versionsForResume(versions, k);
  return { config: run.config, checkpoint: run.checkpoint, metrics, trajectories: run.trajectories.filter((t) => t.iteration < k), dir, dropped: run.metrics.length - metrics.length, rewardVersions: kept, rewardInForce: inForce, metricNaming: naming };
}

/**
 * A folder with config.json and checkpoint.json but no metric rows: a run stopped before its first
 * iteration finished (e.g. by SIGTERM right after a long imitation warm start: a checkpoint at
 * iteration 0), or one whose metrics.jsonl was lost. It resumes from the checkpoint with the
 * reward code the checkpoint carries (every version in force up to it); the rows before it are
 * gone, and a warning says so. A checkpoint past iteration 0 that carries no versions (written
 * before they were kept) is left to parseCliFolder's message: its code cannot be known.
 */
function fromCheckpoint(files: readonly { name: string; text: string }[], path: string): Omit<ResumeSource, 'dir'> | null {
  const read = (name: string) => {
    try {
      return JSON.parse(files.find((f) => f.name === name)?.text ?? 'null') as unknown;
    } catch {
      return null;
    }
  };
  const cfg = parseRunConfig(read('config.json'));
  const cp = checkpointFromJson(read('checkpoint.json'), 'checkpoint.json:');
  if (!cfg.ok || !cp.ok) {
    const messages = [...(cfg.ok ? [] : cfg.messages.map((m) => `config.json: ${m}`)), ...(cp.ok ? [] : cp.messages)];
    throw new UsageError(`--resume ${path}: the run cannot be read:\n  - ${messages.join('\n  - ')}`);
  }
  const k = cp.checkpoint.iteration;
  const carried = cp.checkpoint.rewardCode;
  if (k !== 0 && !carried) return null;
  const misfit = checkpointFitProblems(cfg.config, cp.checkpoint);
  if (misfit.length > 0) throw new UsageError(`--resume ${path}: the checkpoint does not fit the run's config:\n  - ${misfit.join('\n  - ')}`);
  if (k > 0) console.warn(`warning: --resume ${path}: metrics.jsonl is missing or empty, so the rows of iterations 0–${k - 1} are lost; the run continues from its checkpoint at iteration ${k} with the reward code the checkpoint carries`);
  // Nothing scored yet and no versions carried: the run starts with the code in its config (v1), as a fresh one does.
  const { kept, inForce } = versionsForResume(carried ?? rewardVersions(cfg.config.reward.code, []), k);
  return { config: cfg.config, checkpoint: cp.checkpoint, metrics: [], trajectories: [], dropped: 0, rewardVersions: kept, rewardInForce: inForce, metricNaming: 'ours' };
}
