/**
 * The saved record of the run this tab trains (IndexedDB, see runtime/storage/recorder.ts): made
 * at the run's first iteration, fed every iteration, given a final status when the run ends. One
 * per tab, so the Runs view and the page's pagehide handler reach it through the functions below.
 */
import type { RunConfig } from '../../core/presets/schema.ts';
import type { CheckpointWrite, RunMeta, RunStore } from '../../runtime/storage/runStore.ts';
import { RunRecorder } from '../../runtime/storage/recorder.ts';
import { type RecorderHooks } from '../../runtime/storage/recorderOptions.ts';
import { browserRunStore } from '../../runtime/storage/browser.ts';
import { trajectoryLine } from '../../runtime/trainWorker/trajectory.ts';
import type { IterationView } from '../../runtime/trainWorker/types.ts';
import type { LiveEdit, MetricRow } from '../../core/runs/format.ts';

/** How a new record is named and tagged (the run's config, a lesson step, a seed plan). */
export interface RecordLabel {
  config: RunConfig;
  name: string;
  tags: string[];
}

export class RunRecording {
  private recorder: RunRecorder | null = null;
  /** The record has a final status (finished, stopped, error) and no lock; "Train N more" reopens it. */
  private closed = false;

  /** The id of the run this tab records, if any (alive even before its Web Lock is granted). */
  get liveId(): string | null {
    return this.recorder && !this.closed ? this.recorder.id : null;
  }

  /**
   * Hands an iteration to the record, starting one at the run's first iteration (`label()`:
   * null without storage or a valid config). Returns the id of a record it started, else null.
   */
  add(v: IterationView, envId: string, label: () => RecordLabel | null, hooks: RecorderHooks, reopenWith: () => RunConfig | null): string | null {
    let started: string | null = null;
    if (!this.recorder) {
      const store = browserRunStore();
      const l = store ? label() : null;
      if (!store || !l) return null;
      this.recorder = RunRecorder.start(store, l.config, { name: l.name, tags: l.tags }, hooks);
      this.closed = false;
      started = this.recorder.id;
    } else if (this.closed) {
      // "Train N more" on a finished run: the same record trains on.
      const c = reopenWith();
      if (c) void this.recorder.reopen(c);
      this.closed = false;
    }
    this.recorder.add(v.iteration, v.metrics, v.wallS, (n) => v.episodes.slice(0, n).map((ep) => trajectoryLine(v.iteration, envId, ep)));
    return started;
  }

  /** Continues a saved record (Resume) with the rows kept before its checkpoint. */
  resume(store: RunStore, meta: RunMeta, kept: { metrics: readonly MetricRow[]; trajectoryCount: number }, hooks: RecorderHooks): string {
    this.recorder = RunRecorder.resume(store, meta, kept.metrics, kept.trajectoryCount, hooks);
    this.closed = false;
    return this.recorder.id;
  }

  checkpointDue(iteration: number): boolean {
    return !!this.recorder && this.recorder.checkpointDue(iteration);
  }

  /**
   * Saves a checkpoint into the record after the rows queued before it; `write(id)` builds and
   * writes it (the training worker does, off this thread) and is skipped when the record
   * changed meanwhile.
   */
  async saveCheckpoint(write: (id: string) => Promise<CheckpointWrite | null>): Promise<void> {
    const rec = this.recorder;
    if (!rec || this.closed) return;
    await rec.saveCheckpoint(async () => (this.recorder === rec ? write(rec.id) : null));
  }

  liveEdit(edits: readonly LiveEdit[]): void {
    this.recorder?.liveEdit(edits);
  }

  /** The run reached its end: checkpoint first (what "Train N more" or Resume goes on from), then status finished. */
  async finish(write: ((id: string) => Promise<CheckpointWrite | null>) | null): Promise<void> {
    const rec = this.recorder;
    if (!rec || this.closed) return;
    if (write) await this.saveCheckpoint(write);
    if (this.recorder !== rec || this.closed) return;
    this.closed = true;
    void rec.finish('finished');
  }

  /** Gives the record a final status and forgets it (a reset, a restart, an error). */
  close(status: 'stopped' | 'error', error: string | null = null): void {
    if (this.recorder && !this.closed) void this.recorder.finish(status, error);
    this.recorder = null;
    this.closed = false;
  }

  /** The person deleted the (finished) record this tab holds: "Train N more" then starts a new one. */
  forget(id: string): void {
    if (this.recorder?.id === id && this.closed) {
      this.recorder = null;
      this.closed = false;
    }
  }

  flush(): Promise<void> {
    return this.recorder?.flush() ?? Promise.resolve();
  }
}

/** This tab's record. */
export const recording = new RunRecording();

/** Writes what the recorder holds (before an export; best effort when the page is being hidden or closed). */
export const flushRunRecord = (): Promise<void> => recording.flush();
/** The id of the run this tab records, if any. */
export const recordingRunId = (): string | null => recording.liveId;
/** See RunRecording.forget. */
export const forgetRunRecord = (id: string): void => recording.forget(id);
