/**
 * Runs in IndexedDB through dexie (runs are kept in the browser, beside nothing on a server): one `runs` row per run (its config, name, tags,
 * note, status and summary), one `metrics` row per iteration, the sampled `trajectories`, and
 * the run's latest `checkpoints` row (only the latest is kept, which bounds storage: one model's
 * weights and Adam moments, ~0.8 MB for the grid MLP).
 * Every multi-table write is one transaction, so a failed write (a full disk) leaves what was
 * saved before exactly as it was.
 */
import Dexie, { type DexieOptions, type Table } from 'dexie';
import type { DesignRecord } from './designRecord.ts';
import type { LiveEdit, MetricRow, RunData, RunInfo, RunStatus, TrajectoryLine } from '../../core/runs/format.ts';
import { checkpointFloats, type Checkpoint } from '../../core/runs/checkpoint.ts';
import { bestSuccess } from '../../core/runs/format.ts';
import type { RunConfig } from '../../core/presets/schema.ts';

/** A run's row in the `runs` table. */
export interface RunMeta extends RunInfo {
  id: string;
  config: RunConfig;
  /** Metric rows saved (= iterations saved). */
  iterations: number;
  bestSuccess: number;
  /** Trajectories saved. */
  trajectoryCount: number;
  /** Trajectories are kept for iterations that are multiples of this (it doubles at the per-run cap). */
  trajectoryStride: number;
  /** Why saving stopped early (a full disk), or null. */
  storageProblem: string | null;
  /** Set while the run sits in the undo window after a delete; purged afterwards. */
  deletedAt: number | null;
  /** The iteration of the run's saved checkpoint (what Resume continues from); null or absent (older rows) when none. */
  checkpointAt?: number | null;
  /**
   * Iterations trained but not saved, as inclusive [first, last] ranges (storage was full past
   * the recorder's memory bound, or the database was deleted mid-run); absent or empty when the
   * saved run is whole.
   */
  missingIterations?: [number, number][];
}

/**
 * The run's row is not in the database (it was deleted or cleared while the run recorded):
 * thrown by the recorder's writes instead of writing rows no run owns.
 */
export class RunMissingError extends Error {
  constructor(readonly runId: string) {
    super(`run ${runId} is not in the database (it was deleted or cleared)`);
    this.name = 'RunMissingError';
  }
}

/** True for a connection that is closed or closing (Dexie's DatabaseClosedError, IndexedDB's InvalidStateError). */
export function isClosedError(e: unknown): boolean {
  const name = (e as { name?: string } | null)?.name;
  const inner = (e as { inner?: { name?: string } } | null)?.inner?.name;
  return name === 'DatabaseClosedError' || name === 'InvalidStateError' || inner === 'InvalidStateError';
}

interface CheckpointRecord {
  runId: string;
  /** Typed arrays are stored as they are (IndexedDB clones them structurally). */
  checkpoint: Checkpoint;
}

interface MetricRecord {
  runId: string;
  iteration: number;
  row: MetricRow;
}

interface TrajectoryRecord {
  runId: string;
  iteration: number;
  index: number;
  line: TrajectoryLine;
}

/** The IndexedDB database name the app uses. */
export const RUNS_DB_NAME = 'agentic-rl-playground-runs';

class RunsDexie extends Dexie {
  runs!: Table<RunMeta, string>;
  metrics!: Table<MetricRecord, [string, number]>;
  trajectories!: Table<TrajectoryRecord, [string, number, number]>;
  checkpoints!: Table<CheckpointRecord, string>;
  designs!: Table<DesignRecord, string>;
  constructor(name: string, options?: DexieOptions) {
    super(name, options);
    this.version(1).stores({
      runs: 'id, createdAt, status, deletedAt',
      metrics: '[runId+iteration], runId',
      trajectories: '[runId+iteration+index], runId',
    });
    // Version 2: one checkpoint per run (keyed by run id, so a save replaces the previous one).
    this.version(2).stores({ checkpoints: 'runId' });
    // Version 3: envs a person made in the studio (designs.ts), beside the runs trained on them.
    this.version(3).stores({ designs: 'id, updatedAt' });
  }
}

/** True for a quota error however dexie wraps it (directly, as `inner`, or in a bulk error's failures). */
export function isQuotaError(e: unknown, depth = 0): boolean {
  if (!e || typeof e !== 'object' || depth > 4) return false;
  const x = e as { name?: string; inner?: unknown; failures?: unknown[]; failuresByPos?: Record<string, unknown> };
  if (x.name === 'QuotaExceededError' || x.name === 'QuotaExceeded') return true;
  if (isQuotaError(x.inner, depth + 1)) return true;
  const failures = x.failures ?? (x.failuresByPos ? Object.values(x.failuresByPos) : []);
  return failures.some((f) => isQuotaError(f, depth + 1));
}

/**
 * How a checkpoint write went. The training worker writes checkpoints into this same database
 * itself (the tensors are there already, and IndexedDB's structured clone of ~0.8 MB of floats
 * took 20–80 ms, a long task, on the page's thread) and answers with this plain object, which
 * crosses postMessage whole where an Error would lose its quota name.
 */
export interface CheckpointWrite {
  /** The checkpoint's iteration (iterations trained). */
  iteration: number;
  /** Its size in floats (×4 for bytes). */
  floats: number;
  /** Set when it was not saved: `quota` for a full disk, else the message. */
  error?: { quota: boolean; message: string };
}

/** Saves `checkpoint` for `runId` into `store` and says how it went (never throws). */
export async function writeCheckpoint(store: RunStore, runId: string, checkpoint: Checkpoint): Promise<CheckpointWrite> {
  const done = { iteration: checkpoint.iteration, floats: checkpointFloats(checkpoint) };
  try {
    try {
      await store.putCheckpoint(runId, checkpoint);
    } catch (e) {
      // A connection closed under it (the database was deleted, or the browser closed it): open it again, once.
      if (!isClosedError(e)) throw e;
      await store.reopen();
      await store.putCheckpoint(runId, checkpoint);
    }
    return done;
  } catch (e) {
    return { ...done, error: { quota: isQuotaError(e), message: (e as Error).message } };
  }
}

/** A fresh run id: time-ordered, unique enough for one browser. */
export function newRunId(now = Date.now()): string {
  const rand = typeof crypto !== 'undefined' && crypto.randomUUID ? crypto.randomUUID().slice(0, 8) : Math.random().toString(36).slice(2, 10);
  return `run-${now.toString(36)}-${rand}`;
}

/** What a new run's row starts with. */
export function newRunMeta(config: RunConfig, info: Partial<RunInfo> & { name: string }, now = Date.now()): RunMeta {
  return {
    id: newRunId(now),
    config,
    tags: [],
    note: '',
    createdAt: now,
    updatedAt: now,
    status: 'running',
    error: null,
    liveEdits: [],
    source: 'browser',
    iterations: 0,
    bestSuccess: 0,
    trajectoryCount: 0,
    trajectoryStride: 1,
    storageProblem: null,
    deletedAt: null,
    checkpointAt: null,
    ...info,
  };
}

export class RunStore {
  readonly db: RunsDexie;

  constructor(name = RUNS_DB_NAME, options?: DexieOptions) {
    this.db = new RunsDexie(name, options);
  }

  async createRun(meta: RunMeta): Promise<void> {
    await this.db.runs.add(meta);
  }

  /**
   * Writes a run's row and metric rows whole, replacing what is there, in one transaction: a
   * recorder recreating its run after the database was deleted, or creating it late after a full
   * disk refused the first write.
   */
  async recreateRun(meta: RunMeta, rows: readonly MetricRow[]): Promise<void> {
    await this.db.transaction('rw', this.db.runs, this.db.metrics, async () => {
      await this.db.runs.put(meta);
      await this.db.metrics.bulkPut(rows.map((row) => ({ runId: meta.id, iteration: row.iteration, row })));
    });
  }

  /** Opens the connection again after it was closed under the app (a deleted database). */
  async reopen(): Promise<void> {
    if (!this.db.isOpen()) await this.db.open();
  }

  /** Throws RunMissingError when `runId` has no row (call inside a transaction that includes `runs`). */
  private async mustExist(runId: string): Promise<void> {
    if ((await this.db.runs.where('id').equals(runId).count()) === 0) throw new RunMissingError(runId);
  }

  /** Appends metric rows and updates the run's row, in one transaction; RunMissingError when the run's row is gone. */
  async appendMetrics(runId: string, rows: readonly MetricRow[], patch: Partial<RunMeta>): Promise<void> {
    await this.db.transaction('rw', this.db.runs, this.db.metrics, async () => {
      await this.mustExist(runId);
      await this.db.metrics.bulkPut(rows.map((row) => ({ runId, iteration: row.iteration, row })));
      await this.db.runs.update(runId, patch);
    });
  }

  /** Appends trajectories (`index` = position within its iteration) and the run's new count, in one transaction; RunMissingError when the run's row is gone. */
  async appendTrajectories(runId: string, lines: readonly { index: number; line: TrajectoryLine }[], patch: Partial<RunMeta>): Promise<void> {
    await this.db.transaction('rw', this.db.runs, this.db.trajectories, async () => {
      await this.mustExist(runId);
      await this.db.trajectories.bulkPut(lines.map(({ index, line }) => ({ runId, iteration: line.iteration, index, line })));
      await this.db.runs.update(runId, patch);
    });
  }

  /** Deletes the trajectories of iterations that are not multiples of `stride`; returns how many are left. */
  async thinTrajectories(runId: string, stride: number): Promise<number> {
    return this.db.transaction('rw', this.db.runs, this.db.trajectories, async () => {
      await this.db.trajectories
        .where('runId')
        .equals(runId)
        .filter((t) => t.iteration % stride !== 0)
        .delete();
      const left = await this.db.trajectories.where('runId').equals(runId).count();
      await this.db.runs.update(runId, { trajectoryStride: stride, trajectoryCount: left });
      return left;
    });
  }

  /** Saves the run's checkpoint, replacing the one before (only the latest is kept), and notes its iteration on the run; RunMissingError when the run's row is gone. */
  async putCheckpoint(runId: string, checkpoint: Checkpoint): Promise<void> {
    await this.db.transaction('rw', this.db.runs, this.db.checkpoints, async () => {
      await this.mustExist(runId);
      await this.db.checkpoints.put({ runId, checkpoint });
      await this.db.runs.update(runId, { checkpointAt: checkpoint.iteration });
    });
  }

  async getCheckpoint(runId: string): Promise<Checkpoint | null> {
    return (await this.db.checkpoints.get(runId))?.checkpoint ?? null;
  }

  /**
   * Before a resume from iteration k: drops the metric rows and trajectories of iterations ≥ k
   * (the resumed run trains them again) and sets the run's counts to what is left, in one transaction.
   */
  async truncateRun(runId: string, k: number): Promise<{ metrics: MetricRow[]; trajectoryCount: number }> {
    return this.db.transaction('rw', this.db.runs, this.db.metrics, this.db.trajectories, async () => {
      await this.db.metrics.where('runId').equals(runId).filter((m) => m.iteration >= k).delete();
      await this.db.trajectories.where('runId').equals(runId).filter((t) => t.iteration >= k).delete();
      const metrics = await this.getMetrics(runId);
      const trajectoryCount = await this.db.trajectories.where('runId').equals(runId).count();
      await this.db.runs.update(runId, { iterations: metrics.length, bestSuccess: bestSuccess(metrics), trajectoryCount });
      return { metrics, trajectoryCount };
    });
  }

  async updateRun(runId: string, patch: Partial<RunMeta>): Promise<void> {
    await this.db.runs.update(runId, patch);
  }

  /** Adds a live hyperparameter change to the run's record. */
  async addLiveEdits(runId: string, edits: readonly LiveEdit[]): Promise<void> {
    await this.db.transaction('rw', this.db.runs, async () => {
      const r = await this.db.runs.get(runId);
      if (r) await this.db.runs.update(runId, { liveEdits: [...r.liveEdits, ...edits] });
    });
  }

  /** Every run not awaiting deletion, newest first. */
  async listRuns(): Promise<RunMeta[]> {
    const all = await this.db.runs.orderBy('createdAt').reverse().toArray();
    return all.filter((r) => r.deletedAt === null);
  }

  getRun(id: string): Promise<RunMeta | undefined> {
    return this.db.runs.get(id);
  }

  async getMetrics(id: string): Promise<MetricRow[]> {
    const recs = await this.db.metrics.where('runId').equals(id).toArray();
    return recs.sort((a, b) => a.iteration - b.iteration).map((r) => r.row);
  }

  async getTrajectories(id: string): Promise<TrajectoryLine[]> {
    const recs = await this.db.trajectories.where('runId').equals(id).toArray();
    return recs.sort((a, b) => a.iteration - b.iteration || a.index - b.index).map((r) => r.line);
  }

  /** A whole run (for export and the read-only view). */
  async loadRun(id: string): Promise<(RunData & { meta: RunMeta }) | null> {
    const meta = await this.getRun(id);
    if (!meta) return null;
    const [metrics, trajectories, checkpoint] = await Promise.all([this.getMetrics(id), this.getTrajectories(id), this.getCheckpoint(id)]);
    const { name, tags, note, createdAt, updatedAt, status, error, liveEdits, source } = meta;
    return { meta, info: { name, tags, note, createdAt, updatedAt, status, error, liveEdits, source }, config: meta.config, metrics, trajectories, checkpoint };
  }

  /** Hides a run (undo with restoreRun); purgeDeleted removes it for good. */
  async deleteRun(id: string, now = Date.now()): Promise<void> {
    await this.db.runs.update(id, { deletedAt: now });
  }

  async restoreRun(id: string): Promise<void> {
    await this.db.runs.update(id, { deletedAt: null });
  }

  /** Removes the runs deleted at or before `before` (ms), with their metrics and trajectories. */
  async purgeDeleted(before = Infinity): Promise<number> {
    return this.db.transaction('rw', [this.db.runs, this.db.metrics, this.db.trajectories, this.db.checkpoints], async () => {
      const gone = (await this.db.runs.toArray()).filter((r) => r.deletedAt !== null && r.deletedAt <= before);
      for (const r of gone) {
        await this.db.metrics.where('runId').equals(r.id).delete();
        await this.db.trajectories.where('runId').equals(r.id).delete();
        await this.db.checkpoints.delete(r.id);
        await this.db.runs.delete(r.id);
      }
      return gone.length;
    });
  }

  /** Adds a whole run (an import) in one transaction: all of it or nothing. */
  async importRun(run: RunData, now = Date.now()): Promise<RunMeta> {
    const perIteration = new Map<number, number>();
    const meta = newRunMeta(run.config, { ...run.info, name: run.info.name }, now);
    meta.createdAt = run.info.createdAt;
    meta.updatedAt = now;
    meta.iterations = run.metrics.length;
    meta.bestSuccess = bestSuccess(run.metrics);
    meta.trajectoryCount = run.trajectories.length;
    meta.checkpointAt = run.checkpoint?.iteration ?? null;
    // A run file from a tab that was still training is, here, a run that stopped.
    if (meta.status === 'running') meta.status = 'interrupted';
    await this.db.transaction('rw', [this.db.runs, this.db.metrics, this.db.trajectories, this.db.checkpoints], async () => {
      await this.db.runs.add(meta);
      if (run.checkpoint) await this.db.checkpoints.add({ runId: meta.id, checkpoint: run.checkpoint });
      await this.db.metrics.bulkAdd(run.metrics.map((row) => ({ runId: meta.id, iteration: row.iteration, row })));
      await this.db.trajectories.bulkAdd(
        run.trajectories.map((line) => {
          const index = perIteration.get(line.iteration) ?? 0;
          perIteration.set(line.iteration, index + 1);
          return { runId: meta.id, iteration: line.iteration, index, line };
        }),
      );
    });
    return meta;
  }

  /**
   * Runs left 'running' by a tab that is gone (closed, reloaded, crashed) become 'interrupted'
   * at the iterations they saved. `isLive(id)` says whether some tab still records the run.
   */
  async markInterrupted(isLive: (id: string) => boolean, now = Date.now()): Promise<RunMeta[]> {
    const running = await this.db.runs.where('status').equals('running').toArray();
    const stale = running.filter((r) => !isLive(r.id));
    for (const r of stale) await this.db.runs.update(r.id, { status: 'interrupted' satisfies RunStatus, updatedAt: now });
    return stale;
  }

  close(): void {
    this.db.close();
  }
}
