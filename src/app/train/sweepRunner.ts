/**
 * A sweep in the tab: its runs (core/runs/sweep.ts's grid), `slots` at a time, each in a training
 * worker of its own (the one the single run uses, a separate instance), the rest queued. Each run
 * is a normal run of the app: core's runTraining in the worker, recorded into IndexedDB by a
 * RunRecorder of its own, named after what it varies and tagged with the sweep's id. A run whose
 * worker dies or fails is marked failed with its message and its slot takes the next run.
 * Independent of the single run (its worker, record and charts are untouched).
 */
import { proxy, type Remote } from 'comlink';
import type { RunConfig } from '../../core/presets/schema.ts';
import type { SweepJob } from '../../core/runs/sweep.ts';
import type { RunEvent } from '../../runtime/trainWorker/types.ts';
import type { TrainWorkerApi } from '../../runtime/trainWorker/worker.ts';
import { RunRecorder } from '../../runtime/storage/recorder.ts';
import { type RecorderHooks } from '../../runtime/storage/recorderOptions.ts';
import type { RunStore } from '../../runtime/storage/runStore.ts';
import { trajectoryLine } from '../../runtime/trainWorker/trajectory.ts';

export type SweepRunState = 'queued' | 'running' | 'done' | 'failed' | 'stopped';

/** One row of the sweep's progress table. */
export interface SweepRunView {
  name: string;
  /** The config's name ("lr=0.003"), shared by its seeds. */
  configName: string;
  /** Its config's key (unique in the sweep, where names only read alike). */
  configKey: string;
  seed: number;
  state: SweepRunState;
  /** Iterations done, of `total`. */
  iteration: number;
  total: number;
  /** The latest iteration's success rate and mean reward (null before the first). */
  success: number | null;
  reward: number | null;
  /** Why it failed (state 'failed'). */
  error: string | null;
  /** Its saved run, once it has one. */
  recordId: string | null;
}

/** A training worker that belongs to one run of a sweep. */
export interface SweepWorker {
  api: Pick<Remote<TrainWorkerApi>, 'start' | 'run' | 'command' | 'saveCheckpoint' | 'stop'>;
  /** Rejects when the worker dies (a script error, or silence past the heartbeat timeout). */
  died: Promise<never>;
  /** The worker is building its run (a longer silence is allowed meanwhile). */
  setStarting(on: boolean): void;
  terminate(): void;
}

export interface SweepDeps {
  /** A fresh training worker; `name` shows in the browser's task manager. */
  newWorker(name: string): SweepWorker;
  /** Where runs are recorded; null without storage (the sweep trains on, unrecorded). */
  store: RunStore | null;
  hooks: RecorderHooks;
  /** Runs at once. */
  slots: number;
  /**
   * Slots lent to other training in this tab now (the single run: 1 while it trains, else 0).
   * The sweep starts queued runs only while fewer than slots − lent run (at least one), so a
   * run started beside a sweep does not share its cores with one more sweep run; runs already
   * going are not stopped. Call `slotsChanged()` when the answer changes.
   */
  lent?(): number;
  /** Coalesces progress reports (default: at most one per 100 ms). */
  schedule?(fn: () => void): void;
  /** Longest a stopped run may take to come to rest before its worker is terminated, ms. */
  stopWaitMs?: number;
}

export interface SweepRunJob extends Omit<SweepJob, 'config'> {
  /** Its config, validated. */
  config: RunConfig;
}

/** What a run's worker reports, turned into the row's numbers. */
const num = (x: number | undefined) => (x === undefined || !Number.isFinite(x) ? null : x);

export class SweepRunner {
  readonly views: SweepRunView[];
  private stopped = false;
  private next = 0;
  private pending = false;
  /** Runs in flight now. */
  private active = 0;
  /** Lanes waiting for a slot: woken by `slotsChanged` and by `stop`. */
  private waiting: (() => void)[] = [];
  /** Stops the runs in flight: each resolves once its run came to rest and its record is closed. */
  private readonly stoppers = new Set<() => Promise<void>>();

  constructor(
    /** Tags every record of this sweep ("sweep 2026-11-26 14:50 · grid-empty-8x8-grpo"). */
    readonly tag: string,
    private readonly jobs: readonly SweepRunJob[],
    private readonly deps: SweepDeps,
    private readonly onChange: (views: SweepRunView[]) => void,
  ) {
    this.views = jobs.map((j) => ({ name: j.name, configName: j.configName, configKey: j.configKey, seed: j.seed, state: 'queued', iteration: 0, total: j.config.iterations, success: null, reward: null, error: null, recordId: null }));
  }

  /** Runs at once now: the slots less those lent to the tab's other training, at least one. */
  get capacity(): number {
    return Math.max(1, this.deps.slots - (this.deps.lent?.() ?? 0));
  }

  /** What `lent` reports changed: waiting lanes look again. */
  slotsChanged(): void {
    this.wakeLanes();
    this.changed();
  }

  private wakeLanes(): void {
    const w = this.waiting;
    this.waiting = [];
    for (const wake of w) wake();
  }

  /** Runs every job, `slots` at a time; resolves when all ended or the sweep was stopped. */
  async run(): Promise<void> {
    const lane = async () => {
      while (!this.stopped && this.next < this.jobs.length) {
        if (this.active >= this.capacity) {
          await new Promise<void>((wake) => this.waiting.push(wake));
          continue;
        }
        this.active++;
        try {
          await this.runOne(this.next++);
        } finally {
          this.active--;
          // A waiting lane may take the freed slot, or end when nothing is left to run.
          this.wakeLanes();
        }
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(this.deps.slots, this.jobs.length)) }, lane));
    this.changed(true);
  }

  /** Stops the runs in flight (what they recorded stays, with a checkpoint where one can be saved) and drops the queue. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const v of this.views) if (v.state === 'queued') v.state = 'stopped';
    this.slotsChanged();
    this.changed(true);
    await Promise.all([...this.stoppers].map((s) => s()));
  }

  /** The saved runs so far. */
  get recordIds(): string[] {
    return this.views.flatMap((v) => (v.recordId ? [v.recordId] : []));
  }

  private changed(now = false): void {
    if (now) {
      this.onChange(this.views.map((v) => ({ ...v })));
      return;
    }
    if (this.pending) return;
    this.pending = true;
    (this.deps.schedule ?? ((fn) => setTimeout(fn, 100)))(() => {
      this.pending = false;
      this.onChange(this.views.map((v) => ({ ...v })));
    });
  }

  private async runOne(i: number): Promise<void> {
    const job = this.jobs[i];
    const view = this.views[i];
    view.state = 'running';
    this.changed(true);
    const w = this.deps.newWorker(`sweep ${i + 1}: ${job.name}`);
    let recorder: RunRecorder | null = null;
    let rest: () => void = () => undefined;
    const rested = new Promise<void>((r) => (rest = r));
    let failRun: (e: Error) => void = () => undefined;
    // The loop's error event (a NaN-guard stop, a reward code that throws): the run failed.
    const failed = new Promise<never>((_, reject) => (failRun = reject));
    failed.catch(() => undefined);
    let looping = false;
    const checkpoint = async () => {
      const rec = recorder;
      // A dead worker never answers (comlink): without the race the record's write queue, and with
      // it this run's finish() and its lane's next run, would wait forever.
      if (rec) await rec.saveCheckpoint(() => Promise.race([w.api.saveCheckpoint(rec.id), w.died]));
    };
    const onEvent = proxy(async (e: RunEvent) => {
      if (e.type === 'iteration') {
        const v = e.view;
        const store = this.deps.store;
        if (!recorder && store) {
          recorder = RunRecorder.start(store, job.config, { name: job.name, tags: [this.tag] }, this.deps.hooks);
          view.recordId = recorder.id;
        }
        recorder?.add(v.iteration, v.metrics, v.wallS, (n) => v.episodes.slice(0, n).map((ep) => trajectoryLine(v.iteration, job.config.env.id, ep)));
        view.iteration = v.iteration + 1;
        view.success = num(v.metrics['episode/success_rate']);
        view.reward = num(v.metrics['reward/mean']);
        this.changed();
        if (recorder?.checkpointDue(v.iteration)) await checkpoint();
      } else if (e.type === 'held') {
        // Its budget or success target (done), or the pause a stop asked for: checkpoint first.
        await checkpoint();
        rest();
      } else failRun(new Error(e.message));
    });
    let stopping = false;
    const stopper = async () => {
      stopping = true;
      if (!looping) return rest();
      void w.api.command('pause').catch(() => undefined);
      // The iteration in flight ends and the loop holds (saving its checkpoint); a loop that does not is cut off.
      await Promise.race([rested, new Promise((r) => setTimeout(r, this.deps.stopWaitMs ?? 10_000))]);
      rest();
    };
    this.stoppers.add(stopper);
    try {
      w.setStarting(true);
      await Promise.race([w.api.start(job.config, 'wasm', undefined, 1), w.died]);
      w.setStarting(false);
      if (!this.stopped) {
        looping = true;
        const loop = w.api.run({ iterations: job.config.iterations, stopAtSuccess: job.config.stopAtSuccess ?? null, mode: 'play' }, onEvent);
        await Promise.race([rested, loop.then(() => undefined), w.died, failed]);
      }
      view.state = stopping || this.stopped ? 'stopped' : 'done';
      await (recorder as RunRecorder | null)?.finish(view.state === 'done' ? 'finished' : 'stopped');
    } catch (e) {
      view.state = 'failed';
      view.error = (e as Error).message.replace(/^Error: /, '');
      await (recorder as RunRecorder | null)?.finish('error', view.error);
    } finally {
      this.stoppers.delete(stopper);
      w.terminate();
      this.changed(true);
    }
  }
}
