/**
 * Records one training run into a RunStore off the hot path: iterations are buffered and written
 * in batches (every few iterations or every second, when the main thread is idle), so saving
 * never adds a long task to the training loop. A full disk stops trajectories first and metrics
 * only if that did not free enough; a failed write is one aborted transaction, so nothing saved
 * before is lost.
 */
import type { LiveEdit, MetricRow, RunInfo, RunStatus, TrajectoryLine } from '../../core/runs/format.ts';
import { bestSuccess } from '../../core/runs/format.ts';
import type { Checkpoint } from '../../core/runs/checkpoint.ts';
import type { RunConfig } from '../../core/presets/schema.ts';
import { isQuotaError, newRunMeta, writeCheckpoint, type CheckpointWrite, type RunMeta, type RunStore } from './runStore.ts';

export interface RecorderOptions {
  /** Sampled episodes saved per iteration (the first ones of each batch). */
  trajectoriesPerIteration: number;
  /** Most trajectories saved per run: past it, every other saved iteration's are dropped and only every 2nd (4th, …) iteration is kept, so they stay spread over the run. */
  maxTrajectories: number;
  /** Write once this many iterations wait. */
  flushEveryIterations: number;
  /** ...or once the oldest waiting iteration is this old, ms. */
  flushEveryMs: number;
  /** Save the trainer's checkpoint every this many iterations (and on pause and at the end); 0 = only on pause and at the end. */
  checkpointEvery: number;
}

export const DEFAULT_RECORDER_OPTIONS: RecorderOptions = {
  trajectoriesPerIteration: 4,
  maxTrajectories: 2000,
  flushEveryIterations: 5,
  flushEveryMs: 1000,
  checkpointEvery: 10,
};

/** What the recorder needs from its platform (injected in tests). */
export interface RecorderHooks {
  /** A message for the person (a full disk). */
  onProblem(message: string): void;
  /** Runs `fn` soon, when the thread is idle (default: requestIdleCallback, else setTimeout 0). */
  schedule?(fn: () => void): void;
  /** Holds a lock named after the run while it records; returns its release (default: Web Locks). */
  lock?(name: string): () => void;
  /** Bytes used and allowed for this site (default: navigator.storage.estimate; absent = never nearly full). */
  estimate?(): Promise<{ usage?: number; quota?: number }>;
}

/**
 * Free space below which trajectories stop, bytes: a quarter of the quota (at most 8 MB), and at
 * least room for two checkpoints of `checkpointBytes` (a checkpoint is replaced by writing the new
 * one first). Measured in Chromium with a small quota: trajectories (~15 KB per grid iteration)
 * filled it and the next metrics write failed too, since stopping trajectories frees nothing;
 * stopping them while room is left keeps it for metrics (~1 KB per iteration) and checkpoints
 * (~0.8 MB for the grid MLP), which Resume needs.
 */
export function trajectoryReserveBytes(quota: number, checkpointBytes = 0): number {
  return Math.max(Math.min(quota / 4, 8 * 1024 * 1024), 2 * checkpointBytes);
}

function defaultEstimate(): Promise<{ usage?: number; quota?: number }> {
  const storage = (globalThis.navigator as Navigator | undefined)?.storage;
  return storage?.estimate ? storage.estimate() : Promise.resolve({});
}

/** The Web Locks name a recording tab holds for a run (another tab sees the run is alive). */
export const runLockName = (id: string) => `agentic-rl-playground:run:${id}`;

function defaultSchedule(fn: () => void): void {
  const ric = (globalThis as { requestIdleCallback?: (cb: () => void, o?: { timeout: number }) => number }).requestIdleCallback;
  if (ric) ric(fn, { timeout: 500 });
  else setTimeout(fn, 0);
}

function defaultLock(name: string): () => void {
  const locks = (globalThis.navigator as Navigator | undefined)?.locks;
  if (!locks) return () => undefined;
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  void locks.request(name, () => held).catch(() => undefined);
  return () => release();
}

export class RunRecorder {
  readonly id: string;
  private readonly options: RecorderOptions;
  private pendingMetrics: MetricRow[] = [];
  private pendingTraj: { index: number; line: TrajectoryLine }[] = [];
  private chain: Promise<void> = Promise.resolve();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private scheduled = false;
  private release: (() => void) | null = null;
  private metricsOn = true;
  private trajOn = true;
  private saved = 0;
  private trajCount = 0;
  private stride = 1;
  private best = 0;
  private wall = 0;
  private problem: string | null = null;
  /** Size of the last checkpoint handed to the recorder, bytes (its floats × 4; 0 before one). */
  private checkpointBytes = 0;
  /** A checkpoint was handed to this record (a resumed run starts with the one it resumed from). */
  private hasCheckpoint = false;
  /** Iterations handed to the recorder (saved or not). */
  private seen = 0;
  private readonly created: Promise<boolean>;

  private constructor(
    private readonly store: RunStore,
    readonly meta: RunMeta,
    options: Partial<RecorderOptions>,
    private readonly hooks: RecorderHooks,
    /** A resumed run: its row exists already (with these metric rows kept before the checkpoint). */
    existing?: { metrics: readonly MetricRow[]; trajectoryCount: number },
  ) {
    this.id = meta.id;
    this.options = { ...DEFAULT_RECORDER_OPTIONS, ...options };
    this.release = (hooks.lock ?? defaultLock)(runLockName(meta.id));
    if (existing) {
      this.saved = this.seen = existing.metrics.length;
      this.best = bestSuccess(existing.metrics);
      const w = existing.metrics.at(-1)?.wall_s;
      this.wall = w !== undefined && Number.isFinite(w) ? w : 0;
      this.trajCount = existing.trajectoryCount;
      this.stride = meta.trajectoryStride;
      this.hasCheckpoint = true;
    }
    const write = existing ? store.updateRun(meta.id, { status: 'running', error: null, updatedAt: Date.now() }) : store.createRun(meta);
    this.created = write.then(
      () => true,
      (e) => {
        this.metricsOn = this.trajOn = false;
        this.report(isQuotaError(e) ? 'Storage is full: this run is not being saved (its live charts are unaffected). Delete old runs in Runs to make room.' : `This run is not being saved: ${(e as Error).message}`);
        return false;
      },
    );
  }

  /**
   * Starts recording a run of `config` (its row is written at once, with status 'running');
   * `info` is its name, or its name with tags and a note.
   */
  static start(store: RunStore, config: RunConfig, info: string | (Partial<RunInfo> & { name: string }), hooks: RecorderHooks, options: Partial<RecorderOptions> = {}, now = Date.now()): RunRecorder {
    return new RunRecorder(store, newRunMeta(config, typeof info === 'string' ? { name: info } : info, now), options, hooks);
  }

  /**
   * Continues recording an existing run (Resume): its row goes back to 'running', and the
   * counts and wall time carry on from `metrics` (the rows kept before the checkpoint).
   */
  static resume(store: RunStore, meta: RunMeta, metrics: readonly MetricRow[], trajectoryCount: number, hooks: RecorderHooks, options: Partial<RecorderOptions> = {}): RunRecorder {
    return new RunRecorder(store, meta, options, hooks, { metrics, trajectoryCount });
  }

  /**
   * True when iteration `iteration` (0-based, just finished) is one to checkpoint after: every
   * `checkpointEvery`-th, and the first one this record sees while it holds no checkpoint, so a
   * tab closed before the first periodic checkpoint still leaves a run that Resume can continue.
   */
  checkpointDue(iteration: number): boolean {
    if (!this.hasCheckpoint) return true;
    const n = this.options.checkpointEvery;
    return n > 0 && (iteration + 1) % n === 0;
  }

  /**
   * Saves the run's checkpoint after the metrics before it (the same write queue), replacing the
   * previous one. `checkpoint` is the checkpoint itself, written here, or a writer called in its
   * turn in the queue: the page passes the training worker's, which builds the checkpoint and
   * writes it into the same database off this thread (null: that trainer has none). A full disk
   * or a failed write is reported and the older checkpoint stays.
   */
  saveCheckpoint(checkpoint: Checkpoint | (() => Promise<CheckpointWrite | null>)): Promise<void> {
    this.hasCheckpoint = true;
    void this.flush();
    this.chain = this.chain.then(async () => {
      if (!(await this.created)) return;
      let done: CheckpointWrite | null;
      try {
        done = typeof checkpoint === 'function' ? await checkpoint() : await writeCheckpoint(this.store, this.id, checkpoint);
      } catch (e) {
        this.hooks.onProblem(`The checkpoint was not saved: ${(e as Error).message}`);
        return;
      }
      if (!done) return;
      this.checkpointBytes = 4 * done.floats;
      if (done.error) {
        this.hooks.onProblem(
          done.error.quota
            ? `Storage is full: the checkpoint at iteration ${done.iteration} was not saved (Resume would continue from an older one). Delete old runs in Runs to make room.`
            : `Saving the checkpoint at iteration ${done.iteration} failed: ${done.error.message}`,
        );
      }
    });
    return this.chain;
  }

  /** Training seconds recorded so far (the x of the wall-time axis). */
  get wallS(): number {
    return this.wall;
  }

  /** Why saving stopped early, or null. */
  get storageProblem(): string | null {
    return this.problem;
  }

  /**
   * One iteration: its metrics (saved as `{iteration, wall_s, ...metrics}`) and the batch's
   * episodes as trajectory lines (made lazily: only the first few of iterations that keep them).
   */
  add(iteration: number, metrics: Readonly<Record<string, number>>, wallS: number, episodes: (n: number) => TrajectoryLine[]): void {
    this.wall += Number.isFinite(wallS) ? wallS : 0;
    this.seen++;
    if (this.metricsOn) {
      this.pendingMetrics.push({ ...metrics, iteration, wall_s: Number(this.wall.toFixed(3)) } as MetricRow);
      const s = metrics['episode/success_rate'];
      if (Number.isFinite(s) && s > this.best) this.best = s;
    }
    if (this.trajOn && this.options.trajectoriesPerIteration > 0 && iteration % this.stride === 0) {
      episodes(this.options.trajectoriesPerIteration).forEach((line, index) => this.pendingTraj.push({ index, line }));
    }
    const n = this.pendingMetrics.length;
    if (n >= this.options.flushEveryIterations) this.scheduleFlush();
    else if (n === 1 && this.timer === undefined) this.timer = setTimeout(() => this.scheduleFlush(), this.options.flushEveryMs);
  }

  /** Notes live hyperparameter changes (written with the next batch). */
  liveEdit(edits: readonly LiveEdit[]): void {
    if (edits.length === 0) return;
    this.chain = this.chain.then(() => this.store.addLiveEdits(this.id, edits).catch(() => undefined));
  }

  private scheduleFlush(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    (this.hooks.schedule ?? defaultSchedule)(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  /** Writes everything waiting; resolves when it is written (or given up on). */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.chain = this.chain.then(() => this.write());
    return this.chain;
  }

  private report(message: string): void {
    this.problem = message;
    this.hooks.onProblem(message);
  }

  private stopTrajectories(why: 'full' | 'nearly full' = 'full'): void {
    if (!this.trajOn) return;
    this.trajOn = false;
    this.pendingTraj = [];
    this.report(`Storage is ${why}: this run's trajectories are no longer saved (from iteration ${this.seen}); its metrics still are. Delete old runs in Runs to make room.`);
  }

  /** True when free space is under the trajectory reserve (an estimate that fails says nothing). */
  private async nearlyFull(): Promise<boolean> {
    try {
      const { usage, quota } = await (this.hooks.estimate ?? defaultEstimate)();
      return usage !== undefined && quota !== undefined && quota > 0 && quota - usage < trajectoryReserveBytes(quota, this.checkpointBytes);
    } catch {
      return false;
    }
  }

  private stopMetrics(reason: string): void {
    this.metricsOn = false;
    this.trajOn = false;
    this.pendingMetrics = [];
    this.pendingTraj = [];
    this.report(`${reason}: this run's metrics after iteration ${this.saved} are not saved (the live charts keep them; everything saved before is kept). Delete old runs in Runs to make room.`);
  }

  private async write(): Promise<void> {
    if (!(await this.created)) return;
    const rows = this.pendingMetrics;
    this.pendingMetrics = [];
    if (rows.length > 0 && this.metricsOn) {
      const patch = () => ({ iterations: this.saved + rows.length, bestSuccess: this.best, updatedAt: Date.now() });
      try {
        await this.store.appendMetrics(this.id, rows, patch());
        this.saved += rows.length;
      } catch (e) {
        if (!isQuotaError(e)) this.stopMetrics(`Saving this run failed (${(e as Error).message})`);
        else if (this.trajOn) {
          // Trajectories go first: the metrics are what the Runs view and Compare need.
          this.stopTrajectories();
          try {
            await this.store.appendMetrics(this.id, rows, patch());
            this.saved += rows.length;
          } catch (e2) {
            this.stopMetrics(isQuotaError(e2) ? 'Storage is full' : `Saving this run failed (${(e2 as Error).message})`);
          }
        } else this.stopMetrics('Storage is full');
        await this.store.updateRun(this.id, { storageProblem: this.problem }).catch(() => undefined);
      }
    }
    let traj = this.pendingTraj;
    this.pendingTraj = [];
    if (traj.length === 0 || !this.trajOn) return;
    if (await this.nearlyFull()) {
      this.stopTrajectories('nearly full');
      await this.store.updateRun(this.id, { storageProblem: this.problem }).catch(() => undefined);
      return;
    }
    const max = this.options.maxTrajectories;
    if (this.trajCount + traj.length > max) {
      let stride = this.stride;
      // Double the stride until what is kept (roughly halved each time) and what comes fits.
      while (stride < 2 ** 30) {
        stride *= 2;
        const kept = traj.filter((t) => t.line.iteration % stride === 0);
        const estimate = Math.ceil(this.trajCount / (stride / this.stride));
        if (estimate + kept.length <= max) break;
      }
      this.stride = stride;
      traj = traj.filter((t) => t.line.iteration % stride === 0);
      try {
        this.trajCount = await this.store.thinTrajectories(this.id, stride);
      } catch {
        // Deleting never needs space; a failure here leaves the old ones, still bounded below.
      }
      if (this.trajCount + traj.length > max) traj = traj.slice(0, Math.max(0, max - this.trajCount));
    }
    if (traj.length === 0) return;
    try {
      await this.store.appendTrajectories(this.id, traj, { trajectoryCount: this.trajCount + traj.length });
      this.trajCount += traj.length;
    } catch (e) {
      if (isQuotaError(e)) {
        this.stopTrajectories();
        await this.store.updateRun(this.id, { storageProblem: this.problem }).catch(() => undefined);
      } else this.trajOn = false;
    }
  }

  /** Writes what waits and sets the final status ('finished', 'stopped', 'error'); releases the run's lock. */
  async finish(status: Exclude<RunStatus, 'running' | 'interrupted'>, error: string | null = null): Promise<void> {
    await this.flush();
    if (await this.created) await this.store.updateRun(this.id, { status, error, updatedAt: Date.now() }).catch(() => undefined);
    this.release?.();
    this.release = null;
  }

  /** A finished run trains on ("Train N more"): 'running' again, with its new iteration budget. */
  async reopen(config: RunConfig): Promise<void> {
    this.release ??= (this.hooks.lock ?? defaultLock)(runLockName(this.id));
    await this.chain;
    if (await this.created) await this.store.updateRun(this.id, { status: 'running', config, updatedAt: Date.now() }).catch(() => undefined);
  }
}
