/**
 * The run state of the training slice: starting a run in the training worker, the commands the
 * person gives it (start, pause, step, reset, resume) and what its events change on the page.
 * The loop itself runs in the worker (core's runTraining, as in the CLI): these files send
 * commands and render the worker's reports. By concern: runContext.ts (what they share),
 * runEvents.ts (the loop's reports), runBoot.ts (building a trainer, resuming a saved run),
 * runCommands.ts (Start, Pause, Step, Reset), runLive.ts (changes to a running run).
 */
import type { DraftConfig } from './fields.ts';
import type { TrainSlice } from './trainState.ts';
import { createRunContext, type Get, type Set } from './runContext.ts';
import { resumeSavedRun } from './runBoot.ts';
import { applyRestart, pauseRun, resetRun, startRun, stepOnce } from './runCommands.ts';
import { applyLive, applyRewardCode, measureAgain, toggleWarmPause } from './runLive.ts';

export type RunPart = Omit<TrainSlice, 'presets' | 'presetId' | 'base' | 'draft' | 'validation' | 'openTrain' | 'choosePreset' | 'editField' | 'revertDraft' | 'adoptBackend'>;

export function runSlice(set: Set, get: Get): { part: RunPart; applyLive: (running: DraftConfig, paths: string[]) => void } {
  const ctx = createRunContext(set, get);
  const part: RunPart = {
    running: null,
    pendingRestart: [],
    status: 'idle',
    error: null,
    info: null,
    phase: null,
    warmStart: null,
    warmPaused: false,
    warmHistory: [],
    warmEta: null,
    history: [],
    latest: null,
    itPerS: 0,
    skippedUpdates: 0,
    liveChanges: [],
    tab: 'dashboard',
    renderLive: true,
    inspect: null,
    recordId: null,
    applyRestart: () => applyRestart(ctx),
    startRun: () => startRun(ctx),
    pauseRun: () => pauseRun(ctx),
    stepOnce: () => stepOnce(ctx),
    resumeSavedRun: (id) => resumeSavedRun(ctx, id),
    resetRun: () => resetRun(ctx),
    applyRewardCode: () => applyRewardCode(ctx),
    setTab: (tab) => set({ tab }),
    setRenderLive: (on) => set({ renderLive: on }),
    inspectEpisode: (index, pinned = false) => {
      const batch = pinned ? (get().inspect?.batch ?? get().latest) : get().latest;
      if (!batch || !batch.episodes[index]) return;
      set({ inspect: { batch, index }, tab: 'trajectories' });
    },
    toggleWarmPause: () => toggleWarmPause(ctx),
    measureAgain: () => measureAgain(ctx),
  };
  return { part, applyLive: (r, live) => applyLive(ctx, r, live) };
}
