/**
 * Records one training run into a RunStore off the hot path: iterations are buffered and written
 * in batches (every few iterations or every second, when the main thread is idle), so saving
 * never adds a long task to the training loop. A failed write is one aborted transaction, so
 * nothing saved before is lost.
 *
 * Nothing is lost quietly either:
 * - A full disk stops trajectories first (they are samples). Metric rows that cannot be written
 *   stay in memory (the last `memoryRows` iterations, 2000 by default) and the write is retried
 *   (backing off from 1 s to 15 s, and at every flush); once there is room the gap is written
 *   and the saved run is whole again. Rows pushed out of memory while the disk stays full are
 *   missing: the run's row names them (`missingIterations`), and the Runs list and the run's page
 *   say which.
 * - A database deleted or cleared mid-run (the run's row is gone, or the connection was closed)
 *   is noticed at the next write: the run is written again from memory (its row, every metric
 *   row still in memory; what is not is named as missing), and the person is told.
 * - A checkpoint is saved only while every metric row before it is saved or named missing, so
 *   Resume never continues past rows the saved run lacks without saying so.
 */
import type { LiveEdit, MetricRow, RunInfo, RunStatus, TrajectoryLine } from '../../core/runs/format.ts';
import { bestSuccess } from '../../core/runs/format.ts';
import type { Checkpoint } from '../../core/runs/checkpoint.ts';
import type { RunConfig } from '../../core/presets/schema.ts';
import { isClosedError, isQuotaError, newRunMeta, RunMissingError, writeCheckpoint, type CheckpointWrite, type RunMeta, type RunStore } from './runStore.ts';
import { strideToFit } from './trajectoryBudget.ts';
import { addMissing, DEFAULT_RECORDER_OPTIONS, formatRanges, trajectoryReserveBytes, defaultEstimate, runLockName, defaultSchedule, defaultLock, type RecorderOptions, type RecorderHooks } from './recorderOptions.ts';

export class RunRecorder {
  readonly id: string;
  private readonly options: RecorderOptions;
  /** The newest metric rows (≤ memoryRows), oldest first; the first `savedRows` of them are saved. */
  private rows: MetricRow[] = [];
  private savedRows = 0;
  private pendingTraj: { index: number; line: TrajectoryLine }[] = [];
  private chain: Promise<void> = Promise.resolve();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private scheduled = false;
  private release: (() => void) | null = null;
  private trajOn = true;
  /** Metric rows in the database. */
  private saved = 0;
  private trajCount = 0;
  private stride = 1;
  private best = 0;
  private wall = 0;
  /** Why trajectories stopped, and why metrics are not saved now (null when they are). */
  private trajProblem: string | null = null;
  private metricsProblem: string | null = null;
  /** Iterations dropped from memory unsaved, or lost with a deleted database. */
  private missing: [number, number][] = [];
  /** The run's row does not say `missing` yet. */
  private missingUnsaved = false;
  /** The run's row is not (or no longer) in the database: the next write creates it from memory. */
  private needsRow = false;
  /** Why: its first write failed ('create'), or it was deleted while recording ('deleted'). */
  private rowReason: 'create' | 'deleted' = 'create';
  /** Consecutive failed writes (0 while writes succeed), and when the next may be tried. */
  private failures = 0;
  private retryAt = 0;
  /** Live edits of this record (a recreated row carries them). */
  private edits: LiveEdit[];
  /** The status finish() gave the run (kept for a row written again later). */
  private status: RunStatus = 'running';
  private error: string | null = null;
  private config: RunConfig;
  /** Size of the last checkpoint handed to the recorder, bytes (its floats × 4; 0 before one). */
  private checkpointBytes = 0;
  /** A checkpoint was handed to this record (a resumed run starts with the one it resumed from). */
  private hasCheckpoint = false;
  /** The iteration of the checkpoint in the database (null: none). */
  private checkpointAt: number | null = null;
  /** A checkpoint was held back because metric rows before it were unsaved (reported once per such stretch). */
  private checkpointHeld = false;
  /** Iterations handed to the recorder (saved or not). */
  private seen = 0;
  private lastIteration = -1;
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
    this.edits = [...meta.liveEdits];
    this.config = meta.config;
    this.missing = (meta.missingIterations ?? []).map(([a, b]) => [a, b]);
    if (existing) {
      this.saved = this.seen = existing.metrics.length;
      this.rows = existing.metrics.slice(-this.options.memoryRows);
      this.savedRows = this.rows.length;
      this.lastIteration = existing.metrics.at(-1)?.iteration ?? -1;
      this.best = bestSuccess(existing.metrics);
      const w = existing.metrics.at(-1)?.wall_s;
      this.wall = w !== undefined && Number.isFinite(w) ? w : 0;
      this.trajCount = existing.trajectoryCount;
      this.stride = meta.trajectoryStride;
      this.hasCheckpoint = true;
      this.checkpointAt = meta.checkpointAt ?? null;
    }
    const write = existing ? store.updateRun(meta.id, { status: 'running', error: null, updatedAt: Date.now() }) : store.createRun(meta);
    this.created = write.then(
      () => true,
      (e) => {
        // Created later from memory, at the next write that succeeds.
        this.needsRow = true;
        this.failed(e);
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

  /** Every metric row handed so far is saved or named missing in the run's row. */
  private get metricsWhole(): boolean {
    return !this.needsRow && this.savedRows === this.rows.length && !this.missingUnsaved;
  }

  /**
   * Saves the run's checkpoint after the metrics before it (the same write queue), replacing the
   * previous one. `checkpoint` is the checkpoint itself, written here, or a writer called in its
   * turn in the queue: the page passes the training worker's, which builds the checkpoint and
   * writes it into the same database off this thread (null: that trainer has none). A full disk
   * or a failed write is reported and the older checkpoint stays. While metric rows before it are
   * not saved (a full disk), it is held back: a checkpoint newer than the saved metrics would let
   * Resume skip the rows the saved run lacks.
   */
  saveCheckpoint(checkpoint: Checkpoint | (() => Promise<CheckpointWrite | null>)): Promise<void> {
    this.hasCheckpoint = true;
    void this.flush();
    this.chain = this.chain.then(async () => {
      if (!this.metricsWhole) {
        if (!this.checkpointHeld) {
          this.checkpointHeld = true;
          this.hooks.onProblem(`The checkpoint at iteration ${this.seen} was not saved: the metrics before it are not saved yet (Resume would continue from ${this.checkpointAt === null ? 'the start' : `iteration ${this.checkpointAt}`}).`);
        }
        return;
      }
      this.checkpointHeld = false;
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
      } else this.checkpointAt = done.iteration;
    });
    return this.chain;
  }

  /** Training seconds recorded so far (the x of the wall-time axis). */
  get wallS(): number {
    return this.wall;
  }

  /** Why saving is or was incomplete, or null. */
  get storageProblem(): string | null {
    return [this.metricsProblem, this.trajProblem].filter((x) => x !== null).join(' ') || null;
  }

  /** Iterations the saved run lacks for good (inclusive ranges). */
  get missingIterations(): readonly (readonly [number, number])[] {
    return this.missing;
  }

  /** Metric rows waiting to be written. */
  get unsavedRows(): number {
    return this.rows.length - this.savedRows;
  }

  /**
   * One iteration: its metrics (saved as `{iteration, wall_s, ...metrics}`) and the batch's
   * episodes as trajectory lines (made lazily: only the first few of iterations that keep them).
   */
  add(iteration: number, metrics: Readonly<Record<string, number>>, wallS: number, episodes: (n: number) => TrajectoryLine[]): void {
    this.wall += Number.isFinite(wallS) ? wallS : 0;
    this.seen++;
    this.lastIteration = iteration;
    this.rows.push({ ...metrics, iteration, wall_s: Number(this.wall.toFixed(3)) } as MetricRow);
    const s = metrics['episode/success_rate'];
    if (Number.isFinite(s) && s > this.best) this.best = s;
    this.bound();
    if (this.trajOn && this.options.trajectoriesPerIteration > 0 && iteration % this.stride === 0) {
      episodes(this.options.trajectoriesPerIteration).forEach((line, index) => this.pendingTraj.push({ index, line }));
    }
    const n = this.unsavedRows;
    if (n >= this.options.flushEveryIterations) this.scheduleFlush();
    else if (n === 1 && this.timer === undefined) this.timer = setTimeout(() => this.scheduleFlush(), this.options.flushEveryMs);
  }

  /** Keeps at most memoryRows rows; an unsaved row pushed out is missing. */
  private bound(): void {
    const over = this.rows.length - this.options.memoryRows;
    if (over <= 0) return;
    const out = this.rows.splice(0, over);
    const savedOut = Math.min(over, this.savedRows);
    this.savedRows -= savedOut;
    const lost = out.slice(savedOut);
    if (lost.length === 0) return;
    const before = this.missing.length === 0;
    for (const r of lost) this.missing = addMissing(this.missing, r.iteration);
    this.missingUnsaved = true;
    if (before) {
      this.hooks.onProblem(
        `Saving still fails: past ${this.options.memoryRows} unsaved iterations the oldest are dropped from memory, so iteration ${lost[0].iteration} is missing from the saved run (the run's page lists every missing one). Delete old runs in Runs to make room.`,
      );
    }
  }

  /** Notes live hyperparameter changes (written with the next batch). */
  liveEdit(edits: readonly LiveEdit[]): void {
    if (edits.length === 0) return;
    this.edits.push(...edits);
    this.chain = this.chain.then(() => this.store.addLiveEdits(this.id, edits).catch(() => undefined));
  }

  private scheduleFlush(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    (this.hooks.schedule ?? defaultSchedule)(() => {
      this.scheduled = false;
      void this.queueWrite(false);
    });
  }

  /** Writes everything waiting; resolves when it is written (or given up on for now: it is retried). */
  flush(): Promise<void> {
    return this.queueWrite(true);
  }

  /** `force`: try now even while backing off after a failure (a flush someone waits for). */
  private queueWrite(force: boolean): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.chain = this.chain.then(() => this.write(force));
    return this.chain;
  }

  private stopTrajectories(why: 'full' | 'nearly full' = 'full'): void {
    if (!this.trajOn) return;
    this.trajOn = false;
    this.pendingTraj = [];
    this.trajProblem = `Storage is ${why}: this run's trajectories are no longer saved (from iteration ${this.seen}); its metrics still are.`;
    this.hooks.onProblem(`${this.trajProblem} Delete old runs in Runs to make room.`);
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

  /** The run's row as this recorder knows it (what a recreated row holds). */
  private snapshot(): RunMeta {
    return {
      ...this.meta,
      config: this.config,
      status: this.status,
      error: this.error,
      liveEdits: [...this.edits],
      updatedAt: Date.now(),
      iterations: this.rows.length,
      bestSuccess: this.best,
      trajectoryCount: 0,
      trajectoryStride: this.stride,
      storageProblem: this.storageProblem,
      checkpointAt: null,
      missingIterations: this.missing,
      deletedAt: null,
    };
  }

  /** A failed write: kept in memory, retried later; the person hears of the first failure in a row. */
  private failed(e: unknown): void {
    this.failures++;
    const wait = Math.min(this.options.retryMaxMs, this.options.retryMs * 2 ** (this.failures - 1));
    this.retryAt = Date.now() + wait;
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => void this.queueWrite(false), wait);
    if (this.failures > 1) return;
    const from = this.rows[this.savedRows]?.iteration ?? this.seen;
    const keep = `its metrics from iteration ${from} on wait in memory (up to ${this.options.memoryRows} iterations) and are saved as soon as that works again`;
    this.metricsProblem = isQuotaError(e) ? `Storage is full: ${keep}.` : `Saving this run failed (${(e as Error).message}): ${keep}.`;
    this.hooks.onProblem(isQuotaError(e) ? `${this.metricsProblem} Delete old runs in Runs to make room.` : this.metricsProblem);
  }

  /** A write went through after failures: say what was saved. */
  private recovered(firstSaved: number | null): void {
    if (this.failures === 0) return;
    this.failures = 0;
    this.retryAt = 0;
    clearTimeout(this.retryTimer);
    this.metricsProblem = null;
    const what = firstSaved === null ? 'the run is saved again' : `iterations ${firstSaved}–${this.lastIteration} were saved`;
    const whole = this.missing.length === 0 ? 'the saved run has every iteration' : `missing from the saved run: iterations ${formatRanges(this.missing)}`;
    (this.hooks.onRecovered ?? this.hooks.onProblem)(`Saving works again: ${what}; ${whole}.`);
  }

  /**
   * The run's row is gone (its database was deleted or cleared): write it again from memory. The
   * rows no longer in memory, its trajectories and its checkpoint are lost; the person is told.
   */
  private async recreate(reason: 'deleted' | 'create'): Promise<boolean> {
    const first = this.rows[0]?.iteration ?? this.lastIteration + 1;
    if (reason === 'deleted' && first > 0) {
      this.missing = addMissing(this.missing, 0, first - 1);
    }
    const meta = this.snapshot();
    try {
      await this.store.recreateRun(meta, this.rows);
    } catch (e) {
      if (isClosedError(e)) await this.store.reopen().catch(() => undefined);
      this.failed(e);
      return false;
    }
    this.needsRow = false;
    this.saved = this.savedRows = this.rows.length;
    this.missingUnsaved = false;
    this.trajCount = 0;
    this.checkpointAt = null;
    // The next checkpoint save (the next due one, on pause or at the end) writes a new one.
    this.hasCheckpoint = false;
    if (reason === 'deleted') {
      const kept = this.rows.length ? `iterations ${first}–${this.rows.at(-1)!.iteration}` : 'its row';
      const lost = this.missing.length ? `; missing: iterations ${formatRanges(this.missing)}` : '';
      this.hooks.onProblem(`This run's saved copy was deleted while it trained (the site's data was cleared?). It is saved again from memory (${kept}${lost}); its earlier trajectories and checkpoint are gone.`);
    }
    return true;
  }

  private async write(force: boolean): Promise<void> {
    await this.created;
    if (!force && this.failures > 0 && Date.now() < this.retryAt) return;
    const firstUnsaved = this.rows[this.savedRows]?.iteration ?? null;
    if (this.needsRow) {
      if (!(await this.recreate(this.rowReason))) return;
      this.recovered(firstUnsaved);
    }
    const rows = this.rows.slice(this.savedRows);
    if (rows.length > 0 || this.missingUnsaved) {
      // The status too: a run that finished while its rows could not be written says so once they are.
      const patch = () => ({ iterations: this.saved + rows.length, bestSuccess: this.best, updatedAt: Date.now(), missingIterations: this.missing, storageProblem: this.storageProblem, status: this.status, error: this.error });
      try {
        try {
          await this.store.appendMetrics(this.id, rows, patch());
        } catch (e) {
          if (isClosedError(e)) {
            // The connection was closed under us: open it again and try once more (the row may be gone too).
            await this.store.reopen();
            await this.store.appendMetrics(this.id, rows, patch());
          } else if (isQuotaError(e) && this.trajOn) {
            // Trajectories go first: the metrics are what the Runs view and Compare need.
            this.stopTrajectories();
            await this.store.appendMetrics(this.id, rows, patch());
          } else throw e;
        }
        this.saved += rows.length;
        this.savedRows += rows.length;
        this.missingUnsaved = false;
        this.recovered(firstUnsaved);
      } catch (e) {
        if (!(e instanceof RunMissingError)) {
          this.failed(e);
          await this.store.updateRun(this.id, { storageProblem: this.storageProblem }).catch(() => undefined);
          return;
        }
        this.needsRow = true;
        this.rowReason = 'deleted';
        if (!(await this.recreate('deleted'))) return;
        this.recovered(firstUnsaved);
      }
    }
    await this.writeTrajectories();
  }

  private async writeTrajectories(): Promise<void> {
    let traj = this.pendingTraj;
    this.pendingTraj = [];
    if (traj.length === 0 || !this.trajOn) return;
    if (await this.nearlyFull()) {
      this.stopTrajectories('nearly full');
      await this.store.updateRun(this.id, { storageProblem: this.storageProblem }).catch(() => undefined);
      return;
    }
    const max = this.options.maxTrajectories;
    if (this.trajCount + traj.length > max) {
      const stride = strideToFit(traj.map((t) => t.line.iteration), this.trajCount, this.stride, max);
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
      const append = () => this.store.appendTrajectories(this.id, traj, { trajectoryCount: this.trajCount + traj.length });
      await append().catch(async (e: unknown) => {
        if (!isClosedError(e)) throw e;
        await this.store.reopen();
        await append();
      });
      this.trajCount += traj.length;
    } catch (e) {
      if (isQuotaError(e)) {
        this.stopTrajectories();
        await this.store.updateRun(this.id, { storageProblem: this.storageProblem }).catch(() => undefined);
      } else if (e instanceof RunMissingError || isClosedError(e)) {
        // The next write recreates the run; these lines are lost with the old copy.
        this.needsRow = true;
        this.rowReason = 'deleted';
      } else this.trajOn = false;
    }
  }

  /**
   * Writes what waits and sets the final status ('finished', 'stopped', 'error'); releases the
   * run's lock. Rows that still cannot be written stay in memory and are retried while the page
   * lives; meanwhile the run's row names them as missing.
   */
  async finish(status: Exclude<RunStatus, 'running' | 'interrupted'>, error: string | null = null): Promise<void> {
    this.status = status;
    this.error = error;
    void this.flush();
    this.chain = this.chain.then(() => this.writeStatus());
    await this.chain;
    this.release?.();
    this.release = null;
  }

  /** The final status on the run's row, with the rows not saved yet named as missing. */
  private async writeStatus(): Promise<void> {
    if (this.needsRow) return;
    let missing = this.missing;
    for (const r of this.rows.slice(this.savedRows)) missing = addMissing(missing, r.iteration);
    await this.store.updateRun(this.id, { status: this.status, error: this.error, updatedAt: Date.now(), missingIterations: missing, storageProblem: this.storageProblem }).catch(() => undefined);
  }

  /** A finished run trains on ("Train N more"): 'running' again, with its new iteration budget. */
  async reopen(config: RunConfig): Promise<void> {
    this.release ??= (this.hooks.lock ?? defaultLock)(runLockName(this.id));
    this.config = config;
    this.status = 'running';
    this.error = null;
    await this.chain;
    if (!this.needsRow) await this.store.updateRun(this.id, { status: 'running', config, updatedAt: Date.now() }).catch(() => undefined);
  }
}
