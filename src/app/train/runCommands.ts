/**
 * The person's commands to the run (Start, Pause, Step, Reset), each as the state it finds the
 * run in allows: a fresh run boots, a paused or finished one is played on or extended.
 */
import { clearRecentBatches } from '../rewardLab/recentBatches.ts';
import { retireTrainWorker } from './client.ts';
import { recording } from './recording.ts';
import { blocked, budget, command, rested, send, type RunContext } from './runContext.ts';
import { boot } from './runBoot.ts';
import { go } from './runEvents.ts';

/** Start (or Train N more, or Resume): boots, plays on, or extends the finished run. */
export async function startRun(ctx: RunContext): Promise<void> {
  const { get, set } = ctx;
  const s = get().status;
  if (s === 'running' || s === 'starting' || s === 'stepping') return;
  if (blocked(ctx)) return;
  if (s === 'pausing') {
    // The loop has not rested yet: it trains on (the pause's checkpoint, if under way, first).
    set({ status: 'running' });
    send(ctx, 'play');
    return;
  }
  const r = get().running;
  if (r && s === 'paused') {
    set({ status: 'running' });
    return command(ctx, 'play');
  }
  // A finished run is extended only on its own settings: a draft that changed what needs a
  // fresh run (another map from "Train on this map", another algorithm) starts one, as the
  // button says (before, "Train 200 more" ran the old map's run on to 360 iterations).
  if (r && s === 'finished' && get().pendingRestart.length === 0) {
    // Continue past the configured end: a finished run can be extended by its length again.
    const more = get().draft.iterations;
    set({ running: { ...r, iterations: r.iterations + more }, status: 'running' });
    send(ctx, budget(ctx, r.iterations + more));
    return command(ctx, 'play');
  }
  if (!(await boot(ctx))) return;
  set({ status: 'running' });
  await go(ctx, 'play');
}

/** Restarts with the draft (after the person confirmed). */
export async function applyRestart(ctx: RunContext): Promise<void> {
  if (await boot(ctx)) {
    ctx.set({ status: 'running' });
    await go(ctx, 'play');
  }
}

export function pauseRun(ctx: RunContext): void {
  if (ctx.get().status !== 'running') return;
  ctx.set({ status: 'pausing' });
  send(ctx, 'pause');
}

/** One iteration: boots first when there is no run to step (or it must restart), one past the end of a finished one. */
export async function stepOnce(ctx: RunContext): Promise<void> {
  const { get, set } = ctx;
  const s = get().status;
  if (s !== 'idle' && s !== 'paused' && s !== 'finished' && s !== 'error') return;
  if (blocked(ctx)) return;
  const r = get().running;
  if (!r || s === 'error' || s === 'idle' || (s === 'finished' && get().pendingRestart.length > 0)) {
    if (!(await boot(ctx))) return;
    set({ status: 'stepping' });
    return go(ctx, 'step');
  }
  set({ status: 'stepping' });
  if (s === 'finished') {
    // One iteration past the end, as the run's length says.
    set({ running: { ...r, iterations: r.iterations + 1 } });
    send(ctx, budget(ctx, r.iterations + 1));
  }
  return command(ctx, 'step');
}

/** Drops the run: its record stops, its worker retires as the spare, the charts empty. */
export function resetRun(ctx: RunContext): void {
  ctx.run.id++;
  recording.close('stopped');
  void retireTrainWorker();
  ctx.feed.reset();
  clearRecentBatches();
  ctx.set({ status: 'idle', running: null, pendingRestart: [], liveChanges: [], history: [], latest: null, inspect: null, info: null, phase: null, warmStart: null, warmHistory: [], warmEta: null, warmPaused: false, error: null, itPerS: 0, skippedUpdates: 0, recordId: null });
  rested(ctx);
}
