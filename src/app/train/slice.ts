/**
 * The training slice of the app store: the config form (draft vs running run), the run state
 * machine, and the metric history the dashboard draws.
 *
 * Run loop: the main thread asks the worker for one iteration at a time, so pausing never cuts
 * an update in half and "step" is exactly one rollout + one update. Iteration reports are
 * buffered here and handed to React at most once per animation frame, so a fast trainer never floods React.
 */
import type { StateCreator } from 'zustand';
import { proxy, transfer } from 'comlink';
import type { IterationView, WarmStartProgress } from '../../runtime/trainWorker/types.ts';
import type { Store } from '../state/storeTypes.ts';
import type { MetricPoint, TrainSlice } from './trainState.ts';
import { terminateTrainWorker, trainWorker, withProbeWorker, workerStarting } from './client.ts';
import type { Remote } from 'comlink';
import type { TrainWorkerApi } from '../../runtime/trainWorker/worker.ts';
import { blockingFields, changedFields, draftFromHash, draftFromPreset, isLiveChange, liveHyper, loadPresets, parseTrainHash, setField, validate } from './config.ts';
import { boundHistory } from './liveHistory.ts';
import { FIELD_BY_PATH, getPath, setPath, type DraftConfig } from './fields.ts';
import type { RunConfig } from '../../core/presets/schema.ts';
import { learnerThreads } from '../../core/engine/threads.ts';
import { deviceKey } from '../../runtime/backend.ts';
import type { WebBackend } from '../../runtime/engine/web.ts';
import { recallChoice, rememberChoice } from '../state/engineCache.ts';
import { MAX_SKIPPED_IN_A_ROW, skippedRunMessage, successReached } from '../../core/trainer/events.ts';
import { RunRecorder } from '../../runtime/storage/recorder.ts';
import { browserRunStore, recordedElsewhere } from '../../runtime/storage/browser.ts';
import { trajectoryLine } from '../../runtime/storage/trajectory.ts';
import { checkpointTransferables, type Checkpoint } from '../../core/runs/checkpoint.ts';
import type { MetricRow } from '../../core/runs/format.ts';
import { rewardVersions } from '../../core/reward/versions.ts';
import { adoptRewardCode, messageLine, setAppliedCode, setOwnCode, useRewardLab } from '../rewardLab/rewardLab.ts';
import { clearRecentBatches, noteBatch } from '../rewardLab/recentBatches.ts';

/** Wall-clock budget for timing the backends at a run's first start on a device, ms. */
const MEASURE_BUDGET_MS = 1500;
/**
 * Budget when the person asks to measure again, ms: nobody is waiting to train, so a GPU whose
 * first shader compiles outlast the start budget still gets timed.
 */
const MEASURE_AGAIN_BUDGET_MS = 10_000;



const rawPresets = Object.values(import.meta.glob('../../../presets/*.json', { eager: true, import: 'default' }));
const loaded = loadPresets(rawPresets);


// Run-loop state that React never reads directly.
let buffer: MetricPoint[] = [];
let latestPending: IterationView | null = null;
let frame = 0;
let stamps: number[] = [];
let backendChosenByPerson = false;
/** Resumes a paused warm start (the promise its last progress report waits on). */
let releaseWarm: (() => void) | null = null;
/** Iterations in a row whose updates were all skipped (non-finite): the run stops at MAX_SKIPPED_IN_A_ROW. */
let skippedInARow = 0;
/** Identifies the current run: bumped by every boot and reset, so late replies of an old run are dropped. */
let runId = 0;
/** Saves the current run to IndexedDB (created at its first iteration); null without storage or run. */
let recorder: RunRecorder | null = null;
/** The recorder's run has a final status (finished, stopped, error) and no lock. */
let recorderClosed = false;
/** Iterations the current trainer has done in all (a resumed run starts at its checkpoint's). */
let trained = 0;
/** The current trainer saves checkpoints (StartInfo.canCheckpoint). */
let canCheckpoint = false;
/**
 * "Run N seeds": the config they share (its seed replaced per run), the seeds, which one trains
 * now, the tag that groups their records, and the records made so far.
 */
let seedPlan: { draft: DraftConfig; seeds: number[]; index: number; tag: string; ids: string[] } | null = null;

/** Most seeds one "Run N seeds" trains (they run one after another). */
export const MAX_SEEDS = 10;

/** A metric row as the charts draw it: x = iterations done, and the reward band mean ± std clipped to the batch's range. */
function metricPoint(m: Readonly<Record<string, number>>, iteration: number): MetricPoint {
  const mean = m['reward/mean'];
  const std = m['reward/std'];
  // The band is mean ± std, clipped to the batch's observed range (rewards never leave it).
  const lo = Math.max(mean - (std || 0), m['reward/min'] ?? -Infinity);
  const hi = Math.min(mean + (std || 0), m['reward/max'] ?? Infinity);
  return { ...m, it: iteration + 1, 'reward/lo': lo, 'reward/hi': hi };
}

/** Writes what the recorder holds (before an export; best effort when the page is being hidden or closed). */
export function flushRunRecord(): Promise<void> {
  return recorder?.flush() ?? Promise.resolve();
}

/** The id of the run this tab records, if any (alive even before its Web Lock is granted). */
export function recordingRunId(): string | null {
  return recorder && !recorderClosed ? recorder.id : null;
}

/**
 * The person deleted the (finished) record of the run this tab holds: "Train N more" then starts
 * a new record instead of writing into the deleted one.
 */
export function forgetRunRecord(id: string): void {
  if (recorder?.id === id && recorderClosed) {
    recorder = null;
    recorderClosed = false;
  }
}

/** Gives the current record a final status and forgets it (a reset, a restart, an error). */
function closeRecorder(status: 'finished' | 'stopped' | 'error', error: string | null = null): void {
  if (recorder && !recorderClosed) void recorder.finish(status, error);
  recorder = null;
  recorderClosed = false;
}

export const trainSlice: StateCreator<Store, [], [], TrainSlice> = (set, get) => {
  const initial = draftFromPreset(loaded.presets[0], 'auto');

  const flush = () => {
    frame = 0;
    const pending = latestPending;
    latestPending = null;
    set({ history: buffer.slice(), ...(pending ? { latest: pending } : {}), itPerS: rate() });
  };
  const scheduleFlush = () => {
    if (frame) return;
    frame = typeof requestAnimationFrame === 'function' ? requestAnimationFrame(flush) : (setTimeout(flush, 16) as unknown as number);
  };
  const rate = () => (stamps.length < 2 ? 0 : ((stamps.length - 1) * 1000) / (stamps[stamps.length - 1] - stamps[0]));

  /** Hands an iteration to the run's record (started at the run's first iteration). */
  const record = (v: IterationView) => {
    if (!recorder) {
      const store = browserRunStore();
      const run = get().running;
      const valid = run ? validate(run) : null;
      if (!store || !valid?.ok) return;
      const c = valid.config;
      const plan = seedPlan;
      // A lesson step's run is named after the step, so "compare with the sparse run" can be done in Runs.
      const { armed, lessons } = get();
      const li = armed ? lessons.findIndex((l) => l.id === armed.lessonId) : -1;
      const step = li >= 0 ? lessons[li].steps[armed!.step] : undefined;
      const name = step ? `Lesson ${li + 1} · step ${armed!.step + 1} · ${step.title} · seed ${c.seed}` : `${c.id} · seed ${c.seed}` + (plan ? ` (${plan.index + 1} of ${plan.seeds.length})` : '');
      const tags = [...(plan ? [plan.tag] : []), ...(step ? [`lesson ${li + 1}`] : [])];
      recorder = RunRecorder.start(store, c, { name, tags }, { onProblem: (m) => get().notify('warning', m), onRecovered: (m) => get().notify('info', m) });
      plan?.ids.push(recorder.id);
      recorderClosed = false;
      set({ recordId: recorder.id });
    } else if (recorderClosed) {
      // "Train N more" on a finished run: the same record trains on.
      const run = get().running;
      const valid = run ? validate(run) : null;
      if (valid?.ok) void recorder.reopen(valid.config);
      recorderClosed = false;
    }
    const envId = get().running?.env.id ?? '';
    recorder.add(v.iteration, v.metrics, v.wallS, (n) => v.episodes.slice(0, n).map((ep) => trajectoryLine(v.iteration, envId, ep)));
  };

  const ingest = (v: IterationView) => {
    record(v);
    noteBatch(v);
    if (v.rewardProblems?.length) {
      useRewardLab.setState({ problems: v.rewardProblems.slice(0, 5) });
      get().notify('warning', v.rewardProblems[0]);
    }
    // A rollout worker died or stopped answering and a new one took its place: the run went on.
    for (const note of v.workerNotes ?? []) get().notify('warning', `${note}. Training goes on.`);
    trained = v.iteration + 1;
    buffer.push(metricPoint(v.metrics, v.iteration));
    boundHistory(buffer);
    latestPending = v;
    stamps.push(performance.now());
    if (stamps.length > 11) stamps = stamps.slice(-11);
    if (!v.allApplied) set({ skippedUpdates: get().skippedUpdates + 1 });
    scheduleFlush();
  };

  const fail = (message: string) => {
    closeRecorder('error', message);
    terminateTrainWorker();
    set({ status: 'error', error: message, running: null, warmStart: null });
    get().notify('error', `Training stopped: ${message}. The charts keep what was learnt so far.`);
  };

  /**
   * The backend a run starts on: the forced one, or for 'auto' the remembered choice for this
   * device and model, else a fresh measurement in the run's own worker (≤ 1.5 s, see
   * measureWebBackends). Null when the run was reset or restarted meanwhile.
   */
  const resolveBackend = async (
    worker: Remote<TrainWorkerApi>,
    config: RunConfig,
    requested: DraftConfig['backend'],
    threads: number,
    isCurrent: () => boolean,
    fresh = false,
    budgetMs = MEASURE_BUDGET_MS,
  ): Promise<WebBackend | null> => {
    const b = get().backend;
    if (requested !== 'auto') {
      set({ engineChoice: null });
      return requested;
    }
    // Detection not done (or failed): WASM always works.
    if (b.status !== 'ready') return 'wasm';
    const report = b.report;
    const shape = await worker.shapeOf(config);
    const key = `${deviceKey(report, navigator.userAgent)} | ${threads} threads | ${shape.key}`;
    const recalled = fresh ? null : recallChoice(key);
    if (recalled) {
      set({ engineChoice: { ...recalled, key, cached: true } });
      return recalled.decision.chosen as WebBackend;
    }
    set({ measuringBackends: true });
    try {
      const decision = await worker.measureBackends(config, {
        backends: report.webgpu.adapter ? ['wasm', 'webgpu'] : ['wasm'],
        threads,
        budgetMs,
        softwareAdapter: report.webgpu.isFallbackAdapter,
      });
      if (!isCurrent()) return null;
      const choice = { decision, shapeLabel: shape.label, at: Date.now() };
      rememberChoice(key, choice);
      set({ engineChoice: { ...choice, key, cached: false } });
      return decision.chosen as WebBackend;
    } finally {
      set({ measuringBackends: false });
    }
  };

  /** WASM threads for a run (fixed for its worker's life). */
  const threadsFor = (config: RunConfig): number => {
    const b = get().backend;
    if (b.status !== 'ready') return 1;
    if (b.threads !== null) return b.threads;
    return learnerThreads({ cores: b.report.hardwareConcurrency, isolated: b.report.wasm.crossOriginIsolated, rolloutWorkers: config.rollout.workers });
  };

  /**
   * Invalid fields block everything that would train, a resumed or extended run included (it
   * would otherwise train on the last valid values while the form shows others).
   */
  const blocked = (): boolean => {
    const why = blockingFields(get().validation, (p) => FIELD_BY_PATH.get(p)?.label ?? p);
    if (why.length === 0) return false;
    get().notify('warning', `Fix the highlighted settings first; nothing was trained. ${why.join('; ')}`);
    return true;
  };

  /**
   * Saves the trainer's checkpoint into the run's record, after the metrics queued before it. The
   * worker builds it and writes it into IndexedDB itself, so no tensor is cloned on this thread.
   * Call between steps only. Best effort: a failure is reported and the run trains on.
   */
  const saveCheckpoint = async (): Promise<void> => {
    const id = runId;
    const rec = recorder;
    if (!rec || !canCheckpoint) return;
    const worker = trainWorker(fail);
    await rec.saveCheckpoint(async () => (runId === id && recorder === rec ? worker.saveCheckpoint(rec.id) : null));
  };

  /**
   * Builds a trainer for the draft in a fresh worker; false when the draft is invalid or it failed.
   * `resume`: continue from a checkpoint, with the run's earlier metric rows on the charts.
   */
  const boot = async (resume?: { checkpoint: Checkpoint; rows: readonly MetricRow[] }): Promise<boolean> => {
    // The reward lab's applied code is part of the run's config (and so of its saved record); a
    // resumed run keeps the code it was trained with, and the lab shows it as applied.
    if (resume) setAppliedCode(get().draft.reward?.code ?? '');
    else {
      const code = useRewardLab.getState().applied;
      if (get().draft.reward?.code !== code) set({ draft: setPath(get().draft, 'reward.code', code) });
    }
    const v = validate(get().draft);
    if (!v.ok) {
      get().notify('warning', 'Fix the highlighted settings first; nothing was started.');
      return false;
    }
    terminateTrainWorker();
    closeRecorder('stopped');
    buffer = resume ? resume.rows.map((r) => metricPoint(r, r.iteration)) : [];
    clearRecentBatches();
    stamps = [];
    skippedInARow = 0;
    trained = resume?.checkpoint.iteration ?? 0;
    canCheckpoint = false;
    releaseWarm = null;
    latestPending = null;
    const id = ++runId;
    const draft = get().draft;
    set({ status: 'starting', error: null, history: buffer.slice(), latest: null, inspect: null, info: null, running: draft, pendingRestart: [], liveChanges: [], skippedUpdates: 0, itPerS: 0, warmHistory: [], warmPaused: false, recordId: null });
    let backend: WebBackend | null = null;
    try {
      const threads = threadsFor(v.config);
      backend = await workerStarting(resolveBackend(trainWorker(fail, threads), v.config, draft.backend, threads, () => runId === id));
      if (backend === null || runId !== id) return false;
      const onWarm = proxy((p: WarmStartProgress) => {
        if (runId !== id) return;
        set({ warmStart: p, warmHistory: [...get().warmHistory, { ...p, t: performance.now() }] });
        // Paused: the worker's warm start waits on this answer before its next step.
        if (get().warmPaused) return new Promise<void>((resolve) => (releaseWarm = resolve));
      });
      useRewardLab.setState({ versions: [], problems: [], error: null });
      const info = await workerStarting(trainWorker(fail).start(v.config, backend, onWarm, threads, resume && transfer(resume.checkpoint, checkpointTransferables(resume.checkpoint))));
      if (runId !== id) return false; // reset or restarted while starting
      canCheckpoint = info.canCheckpoint;
      trained = info.iteration;
      set({ info, warmStart: null });
      if ((v.config.reward?.code ?? '').trim() !== '') useRewardLab.setState({ versions: [{ version: 1, iteration: 0, terms: [], code: v.config.reward.code }] });
      return true;
    } catch (e) {
      const on = backend === 'webgpu' ? 'WebGPU' : backend === 'wasm' ? 'WASM' : 'the chosen backend';
      if (runId === id) fail(`could not start on ${on}: ${(e as Error).message}`);
      return false;
    }
  };

  const oneStep = async (): Promise<boolean> => {
    const id = runId;
    try {
      const v = await trainWorker(fail).step();
      if (runId !== id) return false;
      ingest(v);
      skippedInARow = v.allApplied ? 0 : skippedInARow + 1;
      if (skippedInARow >= MAX_SKIPPED_IN_A_ROW) {
        fail(skippedRunMessage(skippedInARow));
        return false;
      }
      if (recorder?.checkpointDue(v.iteration)) await saveCheckpoint();
      return true;
    } catch (e) {
      if (runId === id) fail((e as Error).message);
      return false;
    }
  };

  const done = (): boolean => {
    const run = get().running;
    return !!run && trained >= run.iterations;
  };

  /** The run reached its iterations: its record says finished (it reopens on "Train N more"), with a checkpoint to train on from. */
  const finishRecord = async () => {
    if (recorder && !recorderClosed) {
      const rec = recorder;
      await saveCheckpoint();
      if (recorder !== rec || recorderClosed) return;
      recorderClosed = true;
      void rec.finish('finished');
    }
  };

  /** Seeds not yet started are dropped (the person reset, started something else or resumed a run). */
  const cancelSeeds = () => {
    if (!seedPlan) return;
    seedPlan = null;
    set({ seedRun: null });
  };

  /** The current seed of a "Run N seeds" finished: start the next, or say where to compare them. */
  const nextSeed = async () => {
    const plan = seedPlan;
    if (!plan) return;
    plan.index++;
    if (plan.index >= plan.seeds.length) {
      cancelSeeds();
      // Selected in Runs, so Compare shows them at once (as one mean ± band group).
      const selected = [...new Set([...get().selected, ...plan.ids])];
      set({ selected });
      get().notify('info', `All ${plan.seeds.length} seeds finished (tag "${plan.tag}"). They are selected in Runs, where Compare draws them as mean ± band.`);
      return;
    }
    const draft = { ...structuredClone(plan.draft), seed: plan.seeds[plan.index] };
    set({ draft, validation: validate(draft), pendingRestart: [], seedRun: { index: plan.index, total: plan.seeds.length, seeds: plan.seeds } });
    if (await boot()) {
      set({ status: 'running' });
      await loop();
    } else cancelSeeds();
  };

  /** The run's stopAtSuccess was met (the same rule as the CLI's runTraining). */
  const succeeded = (): boolean => {
    const run = get().running;
    return !!run && successReached(buffer.slice(-3).map((p) => p['episode/success_rate'] ?? 0), run.stopAtSuccess);
  };

  const loop = async (): Promise<void> => {
    while (get().status === 'running') {
      const reached = !done() && succeeded();
      if (done() || reached) {
        await finishRecord();
        set({ status: 'finished' });
        if (reached) get().notify('info', `Stopped at iteration ${trained}: success ≥ ${Math.round((get().running?.stopAtSuccess ?? 0) * 100)}% over the last 3 iterations (the config's stopAtSuccess), as the CLI stops.`);
        if (seedPlan) await nextSeed();
        break;
      }
      if (!(await oneStep())) return;
    }
    if (get().status === 'pausing') {
      // Paused: the run can resume from here after a reload.
      await saveCheckpoint();
      if (get().status === 'pausing') set({ status: 'paused' });
      // Start pressed while the checkpoint was being saved (startRun leaves a pausing run to its loop).
      else if (get().status === 'running') await loop();
    }
  };

  return {
    presets: loaded.presets,
    presetId: loaded.presets[0].id,
    base: initial,
    draft: initial,
    validation: validate(initial),
    running: null,
    pendingRestart: [],
    status: 'idle',
    error: null,
    info: null,
    warmStart: null,
    warmPaused: false,
    warmHistory: [],
    history: [],
    latest: null,
    itPerS: 0,
    skippedUpdates: 0,
    liveChanges: [],
    tab: 'dashboard',
    renderLive: true,
    inspect: null,
    recordId: null,
    seedRun: null,

    openTrain: (hash) => {
      const backend = get().backend;
      const detected = backend.status === 'ready' ? backend.report.chosen : get().draft.backend;
      const parsed = parseTrainHash(hash);
      backendChosenByPerson = parsed.backend !== null;
      const r = draftFromHash(parsed, get().presets, detected);
      for (const p of [...loaded.problems, ...r.problems]) get().notify('warning', `Ignored part of the link: ${p}.`);
      // A limit that guards the page (how long a reward term may run) changed by a link is said out loud.
      const limit = r.draft.reward?.callTimeoutMs;
      if (limit !== undefined && limit !== r.base.reward?.callTimeoutMs) get().notify('info', `This link sets the reward term time limit to ${limit.toLocaleString('en-US')} ms per call (the preset's is ${r.base.reward?.callTimeoutMs ?? 100} ms): a slow term may then stall each iteration that long.`);
      // A preset that carries reward code (the hackable ones), opened from a link or a reload,
      // scores with it, as when it is picked from the list; a preset without code keeps the
      // code the person applied (the lab remembers it across reloads).
      const code = r.draft.reward?.code ?? '';
      if (code.trim() !== '') adoptRewardCode(code);
      const { running } = get();
      set({ view: 'train', presetId: r.presetId, base: r.base, draft: r.draft, validation: validate(r.draft), pendingRestart: running ? restartFields(running, r.draft) : [] });
    },

    choosePreset: (id) => {
      const p = get().presets.find((x) => x.id === id);
      if (!p) return;
      const base = draftFromPreset(p, get().draft.backend);
      adoptRewardCode(base.reward?.code ?? '');
      const { running, armed, lessons } = get();
      // A lesson step's check watches the setup it made: a preset picked by hand leaves the step.
      const lesson = armed ? lessons.find((l) => l.id === armed.lessonId) : undefined;
      if (armed && lesson) get().notify('info', `Left lesson "${lesson.title}", step ${armed.step + 1}: its check stops watching once another preset is picked. Open the lesson again from Lessons to go on.`);
      set({ presetId: id, base, draft: base, validation: validate(base), pendingRestart: running ? restartFields(running, base) : [], armed: null });
    },

    editField: (path, value) => {
      if (path === 'backend') backendChosenByPerson = true;
      const draft = setField(get().draft, path, value);
      const validation = validate(draft);
      const { running } = get();
      let nextRunning = running;
      if (running && validation.ok) {
        // Apply what can change live; the rest waits for a confirmed restart.
        const live = changedFields(running, draft).filter((p) => isLiveChange(running, draft, p));
        if (live.length) {
          let r = running;
          for (const p of live) r = setField(r, p, getPath(draft, p));
          nextRunning = r;
          recorder?.liveEdit(live.map((p) => ({ iteration: trained, path: p, value: getPath(draft, p) })));
          set({ liveChanges: [...get().liveChanges, ...live.map((p) => ({ iteration: trained, path: p }))] });
          void trainWorker(fail)
            .setHyper(liveHyper(r))
            .catch(() => undefined);
        }
      }
      set({ draft, validation, running: nextRunning, pendingRestart: nextRunning ? restartFields(nextRunning, draft) : [] });
    },

    revertDraft: () => {
      const { running, presets } = get();
      if (!running) return;
      // Keeping the run after picking another preset: the list highlights what is running again.
      const p = presets.find((x) => x.id === running.id);
      set({ draft: running, validation: validate(running), pendingRestart: [], ...(p ? { presetId: p.id, base: draftFromPreset(p, running.backend) } : {}) });
    },

    applyRestart: async () => {
      cancelSeeds();
      if (await boot()) {
        set({ status: 'running' });
        await loop();
      }
    },

    startRun: async () => {
      const s = get().status;
      if (s === 'running' || s === 'starting' || s === 'stepping') return;
      if (blocked()) return;
      if (s === 'pausing') {
        set({ status: 'running' });
        return;
      }
      if (!get().running || s === 'finished' || s === 'error') {
        if (s === 'finished' && get().running) {
          // Continue past the configured end: a finished run can be extended by its length again.
          set({ running: { ...get().running!, iterations: get().running!.iterations + get().draft.iterations }, status: 'running' });
          await loop();
          return;
        }
        cancelSeeds();
        if (!(await boot())) return;
      }
      set({ status: 'running' });
      await loop();
    },

    runSeeds: async (n) => {
      const s = get().status;
      if (s === 'running' || s === 'starting' || s === 'stepping' || s === 'pausing') return;
      if (blocked()) return;
      const count = Math.max(2, Math.min(MAX_SEEDS, Math.floor(Number.isFinite(n) ? n : 2)));
      const draft = structuredClone(get().draft);
      const first = draft.seed;
      const seeds = Array.from({ length: count }, (_, i) => (first + i) % 2 ** 31);
      seedPlan = { draft, seeds, index: -1, tag: `seeds ${seeds[0]}–${seeds[count - 1]} · ${draft.id}`, ids: [] };
      await nextSeed();
    },

    pauseRun: () => {
      if (get().status === 'running') set({ status: 'pausing' });
    },

    stepOnce: async () => {
      const s = get().status;
      if (s !== 'idle' && s !== 'paused' && s !== 'finished' && s !== 'error') return;
      if (blocked()) return;
      if (!get().running || s === 'error') {
        cancelSeeds();
        if (!(await boot())) return;
      }
      set({ status: 'stepping' });
      if (await oneStep()) {
        if (done()) await finishRecord();
        else await saveCheckpoint();
        set({ status: done() ? 'finished' : 'paused' });
      }
    },

    resumeSavedRun: async (id) => {
      const store = browserRunStore();
      if (!store) return;
      if (id === recordingRunId()) {
        get().notify('warning', 'This run is training in this tab already.');
        return;
      }
      // Two tabs writing into one record would interleave its rows: the tab that records it holds its lock.
      if (await recordedElsewhere(id)) {
        get().notify('warning', 'This run is training in another tab of this browser: resume it there, or close that tab first (its run is then listed as interrupted).');
        return;
      }
      const [meta, checkpoint] = await Promise.all([store.getRun(id), store.getCheckpoint(id)]);
      if (!meta) {
        get().notify('warning', 'That run is no longer saved.');
        return;
      }
      if (!checkpoint) {
        get().notify('warning', `"${meta.name}" has no checkpoint to resume from (it stopped before its first save, or was recorded before its kind of run saved them).`);
        return;
      }
      if (checkpoint.iteration >= meta.config.iterations) {
        get().notify('info', `"${meta.name}" is at iteration ${checkpoint.iteration} of ${meta.config.iterations}: nothing left to train.`);
        return;
      }
      // Reward code applied mid-run is a live edit, not part of the stored config: resume with the
      // code that scored the iterations up to the checkpoint.
      const codeEdit = meta.liveEdits.filter((e) => e.path === 'reward.code' && e.iteration <= checkpoint.iteration).at(-1);
      const config = codeEdit ? { ...meta.config, reward: { ...meta.config.reward, code: String(codeEdit.value) } } : meta.config;
      const draft: DraftConfig = { ...structuredClone(config), backend: get().draft.backend } as DraftConfig;
      const validation = validate(draft);
      if (!validation.ok) {
        get().notify('error', `"${meta.name}" has a config this playground no longer accepts: ${blockingFields(validation, (p) => p).join('; ')}`);
        return;
      }
      const p = get().presets.find((x) => x.id === meta.config.id);
      set({ view: 'train', draft, validation, pendingRestart: [], ...(p ? { presetId: p.id, base: draftFromPreset(p, draft.backend) } : {}) });
      const before = (await store.getMetrics(id)).filter((r) => r.iteration < checkpoint.iteration);
      cancelSeeds();
      if (!(await boot({ checkpoint, rows: before }))) return;
      // Only once the worker took the checkpoint: rows past it are trained again (identically, for
      // synchronous runs); a refused checkpoint leaves the saved run as it was.
      const kept = await store.truncateRun(id, checkpoint.iteration);
      // The versions that scored the kept iterations keep their markers (boot knew only the code it resumed with).
      const keptVersions = rewardVersions(meta.config.reward.code, meta.liveEdits.filter((e) => e.iteration <= checkpoint.iteration));
      useRewardLab.setState({ versions: keptVersions.map((x) => ({ ...x, terms: [] })) });
      recorder = RunRecorder.resume(store, meta, kept.metrics, kept.trajectoryCount, { onProblem: (m) => get().notify('warning', m), onRecovered: (m) => get().notify('info', m) });
      recorderClosed = false;
      set({ recordId: recorder.id, status: 'running' });
      get().notify('info', `Resumed "${meta.name}" from its checkpoint at iteration ${checkpoint.iteration}.`);
      await loop();
    },

    resetRun: () => {
      cancelSeeds();
      runId++;
      closeRecorder('stopped');
      terminateTrainWorker();
      buffer = [];
      clearRecentBatches();
      stamps = [];
      latestPending = null;
      if (frame && typeof cancelAnimationFrame === 'function') cancelAnimationFrame(frame);
      frame = 0;
      set({ status: 'idle', running: null, pendingRestart: [], liveChanges: [], history: [], latest: null, inspect: null, info: null, warmStart: null, warmHistory: [], warmPaused: false, error: null, itPerS: 0, skippedUpdates: 0, recordId: null });
    },

    applyRewardCode: async () => {
      const lab = useRewardLab.getState();
      if (lab.applying) return;
      const code = lab.text;
      const s = get().status;
      const live = get().running !== null && s !== 'idle' && s !== 'error' && s !== 'starting';
      if (!live) {
        // No run to change: the next start uses it (and its own dry run reports any problem).
        setOwnCode(code);
        useRewardLab.setState({ error: null });
        get().notify('info', code.trim() ? 'Reward code saved: the next run starts with it.' : 'Reward code cleared: the next run uses the env reward and shaping only.');
        return;
      }
      const id = runId;
      const versions = lab.versions;
      const version = (versions[versions.length - 1]?.version ?? 0) + 1;
      useRewardLab.setState({ applying: true });
      try {
        const terms = await trainWorker(fail).setRewardCode(code, version);
        if (runId !== id) return;
        setOwnCode(code);
        // Scores from the next iteration on (the one after those already in the charts).
        useRewardLab.setState({ versions: [...versions, { version, iteration: trained, terms, code }], error: null });
        const running = get().running;
        if (running) set({ running: setPath(running, 'reward.code', code), draft: setPath(get().draft, 'reward.code', code) });
        recorder?.liveEdit([{ iteration: trained, path: 'reward.code', value: code }]);
      } catch (e) {
        const message = (e as Error).message.replace(/^Error: /, '');
        useRewardLab.setState({ error: { message, line: messageLine(message) } });
      } finally {
        useRewardLab.setState({ applying: false });
      }
    },

    setTab: (tab) => set({ tab }),
    setRenderLive: (on) => set({ renderLive: on }),

    inspectEpisode: (index, pinned = false) => {
      const batch = pinned ? (get().inspect?.batch ?? get().latest) : get().latest;
      if (!batch || !batch.episodes[index]) return;
      set({ inspect: { batch, index }, tab: 'trajectories' });
    },

    toggleWarmPause: () => {
      if (get().status !== 'starting' || !get().warmStart) return;
      if (get().warmPaused) {
        set({ warmPaused: false });
        releaseWarm?.();
        releaseWarm = null;
      } else set({ warmPaused: true });
    },

    measureAgain: async () => {
      const v = validate(get().draft);
      if (!v.ok) {
        get().notify('warning', 'Fix the highlighted settings first: the backends are timed on this run\'s model.');
        return;
      }
      if (get().measuringBackends || ['starting', 'running', 'pausing', 'stepping'].includes(get().status)) return;
      try {
        await withProbeWorker((w) => resolveBackend(w, v.config, 'auto', threadsFor(v.config), () => true, true, MEASURE_AGAIN_BUDGET_MS));
      } catch (e) {
        get().notify('error', `Timing the backends failed: ${(e as Error).message}`);
      }
    },

    adoptBackend: (kind) => {
      if (backendChosenByPerson) return;
      const { base, draft, running } = get();
      if (draft.backend === kind) return;
      const d = { ...draft, backend: kind };
      set({ base: { ...base, backend: kind }, draft: d, validation: validate(d), pendingRestart: running ? restartFields(running, d) : [] });
    },
  };
};

function restartFields(running: DraftConfig, draft: DraftConfig): string[] {
  return changedFields(running, draft).filter((p) => !isLiveChange(running, draft, p));
}
