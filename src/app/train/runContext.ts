/**
 * What every part of the training slice's run state shares (run.ts composes them): the store's
 * get/set, the record of the tab's current run that React never reads, the chart feed, and the
 * small acts all of them use: fail the run, wake those waiting for it to rest, send the worker's
 * loop a command, save a checkpoint between steps, refuse to train on invalid settings.
 */
import type { StoreApi } from 'zustand';
import type { RunCommand } from '../../core/trainer/runControl.ts';
import type { Store } from '../storeTypes.ts';
import { terminateTrainWorker, trainWorker } from './client.ts';
import { blockingFields } from './config.ts';
import { FIELD_BY_PATH } from './fields.ts';
import { createChartFeed } from './chartFeed.ts';
import { recording } from './recording.ts';
import type { CheckpointWrite } from '../../runtime/storage/runStore.ts';

export type Get = StoreApi<Store>['getState'];
export type Set = StoreApi<Store>['setState'];

/** What this tab's current run holds that React never reads. */
export interface RunRecord {
  /** Bumped by every boot and reset, so late reports of an old run are dropped. */
  id: number;
  /** Iterations the current trainer has done in all (a resumed run starts at its checkpoint's). */
  trained: number;
  /** The current trainer saves checkpoints (StartInfo.canCheckpoint). */
  canCheckpoint: boolean;
  /** Resumes a paused warm start (the promise its last progress report waits on). */
  releaseWarm: (() => void) | null;
  /** The trainer's iterations when the worker's loop started: the loop's budget counts from there. */
  base: number;
  /** Callers waiting for the run to come to rest (held, failed, reset): what an awaited startRun waits on. */
  resting: (() => void)[];
}

export interface RunContext {
  set: Set;
  get: Get;
  run: RunRecord;
  feed: ReturnType<typeof createChartFeed>;
  /** Ends the run on an error: its record closes, its worker is terminated, a notice says why. */
  fail: (message: string) => void;
}

/** A context with no run yet. */
export function createRunContext(set: Set, get: Get): RunContext {
  const run: RunRecord = { id: 0, trained: 0, canCheckpoint: false, releaseWarm: null, base: 0, resting: [] };
  const ctx: RunContext = { set, get, run, feed: createChartFeed((s) => set(s)), fail: () => undefined };
  ctx.fail = (message: string) => {
    recording.close('error', message);
    terminateTrainWorker();
    set({ status: 'error', error: message, running: null, warmStart: null, phase: null });
    get().notify('error', `Training stopped: ${message}. The charts keep what was learnt so far.`);
    rested(ctx);
  };
  return ctx;
}

/** Wakes everyone waiting for the run to rest. */
export function rested(ctx: RunContext): void {
  for (const r of ctx.run.resting.splice(0)) r();
}

/** Resolves when the run next rests. */
export function untilRest(ctx: RunContext): Promise<void> {
  return new Promise<void>((resolve) => ctx.run.resting.push(resolve));
}

/** The worker builds the checkpoint and writes it into IndexedDB itself (no tensor is cloned on this thread); null once the run changed. */
export function writer(ctx: RunContext, id: number): ((recordId: string) => Promise<CheckpointWrite | null>) | null {
  return ctx.run.canCheckpoint ? (recordId: string) => (ctx.run.id === id ? trainWorker(ctx.fail).saveCheckpoint(recordId) : Promise.resolve(null)) : null;
}

/** Best effort, between steps only: a failure is reported by the record and the run trains on. */
export async function saveCheckpoint(ctx: RunContext, id: number): Promise<void> {
  const w = writer(ctx, id);
  if (w) await recording.saveCheckpoint(w);
}

/** The loop's budget for a run of `iterations` in all. */
export function budget(ctx: RunContext, iterations: number): RunCommand {
  return { budget: iterations - ctx.run.base };
}

/** Sends a command to the running loop (a worker that died meanwhile is the watchdog's to report). */
export function send(ctx: RunContext, c: RunCommand): void {
  void trainWorker(ctx.fail)
    .command(c)
    .catch(() => undefined);
}

/** Sends a command to the running loop; resolves when it next rests. */
export function command(ctx: RunContext, c: RunCommand): Promise<void> {
  const rest = untilRest(ctx);
  send(ctx, c);
  return rest;
}

/**
 * Invalid fields block everything that would train, a resumed or extended run included (it
 * would otherwise train on the last valid values while the form shows others).
 */
export function blocked(ctx: RunContext): boolean {
  const why = blockingFields(ctx.get().validation, (p) => FIELD_BY_PATH.get(p)?.label ?? p);
  if (why.length === 0) return false;
  ctx.get().notify('warning', `Fix the highlighted settings first; nothing was trained. ${why.join('; ')}`);
  return true;
}
