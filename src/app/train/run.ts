/**
 * The run state of the training slice: starting a run in the training worker, the commands the
 * person gives it (start, pause, step, reset, resume) and what its events change
 * on the page. The loop itself runs in the worker (core's runTraining, as in the CLI): this file
 * sends commands and renders the worker's reports.
 */
import { nextWarmEta, resumeWarmEta } from './warmEta.ts';
import { proxy, transfer } from 'comlink';
import type { StoreApi } from 'zustand';
import type { HoldReason, RunCommand } from '../../core/trainer/runControl.ts';
import type { IterationView, PhaseReport, RunEvent, WarmStartProgress } from '../../runtime/trainWorker/types.ts';
import type { WebBackend } from '../../runtime/engine/web.ts';
import { browserRunStore } from '../../runtime/storage/browser.ts';
import { resumable } from './resumable.ts';
import { checkpointTransferables, type Checkpoint } from '../../core/runs/checkpoint.ts';
import type { MetricRow } from '../../core/runs/format.ts';
import { rewardVersions } from '../../core/reward/versions.ts';
import type { Store } from '../storeTypes.ts';
import { messageLine, setAppliedCode, setOwnCode, useRewardLab } from '../rewardLab/rewardLab.ts';
import { clearRecentBatches, noteBatch } from '../rewardLab/recentBatches.ts';
import { retireTrainWorker, terminateTrainWorker, trainWorker, withProbeWorker, workerStarting } from './client.ts';
import { blockingFields, draftFromPreset, liveHyper, validate } from './config.ts';
import { FIELD_BY_PATH, getPath, setPath, type DraftConfig } from './fields.ts';
import { createChartFeed } from './chartFeed.ts';
import { recording, type RecordLabel } from './recording.ts';
import { MEASURE_AGAIN_BUDGET_MS, resolveBackend, threadsFor } from './backendChoice.ts';
import type { TrainSlice } from './trainState.ts';
import { WARM_START_DIR } from '../../core/trainer/warmStartCache.ts';

/**
 * Where the page's shipped warm starts are fetched from (beside the app, under `base`); undefined
 * without a document (the store's tests run this slice in Node), so the warm start trains.
 */
const shippedWarmStartBase = (): string | undefined => (typeof document === 'undefined' ? undefined : new URL(`${WARM_START_DIR}/`, document.baseURI).href);

type Get = StoreApi<Store>['getState'];
type Set = StoreApi<Store>['setState'];

export type RunPart = Omit<TrainSlice, 'presets' | 'presetId' | 'base' | 'draft' | 'validation' | 'openTrain' | 'choosePreset' | 'editField' | 'revertDraft' | 'adoptBackend'>;

export function runSlice(set: Set, get: Get): { part: RunPart; applyLive: (running: DraftConfig, paths: string[]) => void } {
  /** What this tab's current run holds that React never reads. */
  const run = {
    /** Bumped by every boot and reset, so late reports of an old run are dropped. */
    id: 0,
    /** Iterations the current trainer has done in all (a resumed run starts at its checkpoint's). */
    trained: 0,
    /** The current trainer saves checkpoints (StartInfo.canCheckpoint). */
    canCheckpoint: false,
    /** Resumes a paused warm start (the promise its last progress report waits on). */
    releaseWarm: null as (() => void) | null,
    /** The trainer's iterations when the worker's loop started: the loop's budget counts from there. */
    base: 0,
    /** Callers waiting for the run to come to rest (held, failed, reset): what an awaited startRun waits on. */
    resting: [] as (() => void)[],
  };
  const feed = createChartFeed((s) => set(s));

  const rested = () => {
    for (const r of run.resting.splice(0)) r();
  };
  const untilRest = () => new Promise<void>((resolve) => run.resting.push(resolve));

  const fail = (message: string) => {
    recording.close('error', message);
    terminateTrainWorker();
    set({ status: 'error', error: message, running: null, warmStart: null, phase: null });
    get().notify('error', `Training stopped: ${message}. The charts keep what was learnt so far.`);
    rested();
  };

  /** The worker builds the checkpoint and writes it into IndexedDB itself (no tensor is cloned on this thread); null once the run changed. */
  const writer = (id: number) => (run.canCheckpoint ? (recordId: string) => (run.id === id ? trainWorker(fail).saveCheckpoint(recordId) : Promise.resolve(null)) : null);
  /** Best effort, between steps only: a failure is reported by the record and the run trains on. */
  const saveCheckpoint = async (id: number): Promise<void> => {
    const w = writer(id);
    if (w) await recording.saveCheckpoint(w);
  };

  /** How the run's record is named: after a lesson step, or the preset and seed. */
  const label = (): RecordLabel | null => {
    const r = get().running;
    const valid = r ? validate(r) : null;
    if (!valid?.ok) return null;
    const c = valid.config;
    const { armed, lessons } = get();
    const li = armed ? lessons.findIndex((l) => l.id === armed.lessonId) : -1;
    const step = li >= 0 ? lessons[li].steps[armed!.step] : undefined;
    const name = step ? `Lesson ${li + 1} · step ${armed!.step + 1} · ${step.title} · seed ${c.seed}` : `${c.id} · seed ${c.seed}`;
    const tags = step ? [`lesson ${li + 1}`] : [];
    return { config: c, name, tags };
  };
  const hooks = { onProblem: (m: string) => get().notify('warning', m), onRecovered: (m: string) => get().notify('info', m) };
  const reopenWith = () => {
    const r = get().running;
    const valid = r ? validate(r) : null;
    return valid?.ok ? valid.config : null;
  };

  const ingest = (v: IterationView) => {
    const started = recording.add(v, get().running?.env.id ?? '', label, hooks, reopenWith);
    if (started) set({ recordId: started });
    noteBatch(v);
    if (v.rewardProblems?.length) {
      useRewardLab.setState({ problems: v.rewardProblems.slice(0, 5) });
      get().notify('warning', v.rewardProblems[0]);
    }
    // A rollout worker died or stopped answering and a new one took its place: the run went on.
    for (const note of v.workerNotes ?? []) get().notify('warning', `${note}. Training goes on.`);
    run.trained = v.iteration + 1;
    feed.push(v);
    if (!v.allApplied) set({ skippedUpdates: get().skippedUpdates + 1 });
  };

  /** The worker's loop came to rest between iterations. */
  const held = async (reason: HoldReason, id: number) => {
    if (reason === 'paused') {
      // Paused: the run can resume from here after a reload.
      await saveCheckpoint(id);
      if (run.id !== id) return;
      const s = get().status;
      // Start pressed while the checkpoint was being saved: the loop trains on already.
      if (s === 'pausing' || s === 'stepping') set({ status: 'paused', phase: null });
    } else {
      // The run reached its iterations (or its success target): its record says finished, with
      // a checkpoint to train on from (it reopens on "Train N more").
      await recording.finish(writer(id));
      if (run.id !== id) return;
      set({ status: 'finished', phase: null });
      if (reason === 'success') get().notify('info', `Stopped at iteration ${run.trained}: success ≥ ${Math.round((get().running?.stopAtSuccess ?? 0) * 100)}% over the last 3 iterations (the config's stopAtSuccess), as the CLI stops.`);
    }
    rested();
  };

  /** Starts the worker's loop on the booted trainer (mode 'step': one iteration, then paused); resolves when it first rests. */
  const go = (mode: 'play' | 'step'): Promise<void> => {
    const id = run.id;
    const r = get().running;
    if (!r) return Promise.resolve();
    set({ phase: { name: 'rollout', since: performance.now() } });
    run.base = run.trained;
    const onEvent = proxy(async (e: RunEvent) => {
      if (run.id !== id) return;
      if (e.type === 'iteration') {
        ingest(e.view);
        if (recording.checkpointDue(e.view.iteration)) await saveCheckpoint(id);
      } else if (e.type === 'error') fail(e.message);
      else await held(e.reason, id);
    });
    const rest = untilRest();
    trainWorker(fail)
      .run({ iterations: r.iterations - run.trained, stopAtSuccess: r.stopAtSuccess ?? null, mode }, onEvent)
      .catch((e: unknown) => {
        if (run.id === id) fail((e as Error).message);
      });
    return rest;
  };

  /** The loop's budget for a run of `iterations` in all. */
  const budget = (iterations: number) => ({ budget: iterations - run.base });

  /** Sends a command to the running loop (a worker that died meanwhile is the watchdog's to report). */
  const send = (c: RunCommand): void => {
    void trainWorker(fail)
      .command(c)
      .catch(() => undefined);
  };

  /** Sends a command to the running loop; resolves when it next rests. */
  const command = (c: RunCommand): Promise<void> => {
    const rest = untilRest();
    send(c);
    return rest;
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
    // The previous run's worker stops and waits as the spare this run adopts (same threads).
    await retireTrainWorker();
    recording.close('stopped');
    rested();
    const history = feed.reset(resume?.rows);
    clearRecentBatches();
    run.trained = resume?.checkpoint.iteration ?? 0;
    run.canCheckpoint = false;
    run.releaseWarm = null;
    const id = ++run.id;
    const draft = get().draft;
    set({ status: 'starting', error: null, history, latest: null, inspect: null, info: null, running: draft, pendingRestart: [], liveChanges: [], skippedUpdates: 0, itPerS: 0, warmHistory: [], warmEta: null, warmPaused: false, recordId: null, phase: { name: 'engine', since: performance.now() } });
    let backend: WebBackend | null = null;
    try {
      const threads = threadsFor(get, v.config);
      backend = await workerStarting(resolveBackend(get, set, trainWorker(fail, threads), v.config, draft.backend, threads, () => run.id === id));
      if (backend === null || run.id !== id) return false;
      const onWarm = proxy((p: WarmStartProgress) => {
        if (run.id !== id) return;
        const warmHistory = [...get().warmHistory, { ...p, t: performance.now() }];
        set({ warmStart: p, warmHistory, warmEta: nextWarmEta(warmHistory, p.total, get().warmEta) });
        // Paused: the worker's warm start waits on this answer before its next step.
        if (get().warmPaused) return new Promise<void>((resolve) => (run.releaseWarm = resolve));
      });
      const onPhase = proxy((p: PhaseReport) => {
        if (run.id !== id) return;
        const cur = get().phase;
        if (p.phase === 'rollout') {
          if (get().history.length > 0 || cur?.name === 'update') return;
          // Every episode played: what remains of the first iteration is scoring and the update.
          if (p.done >= p.total) set({ phase: { name: 'update', since: performance.now() } });
          // Episodes of the first rollout: the phase keeps its start time.
          else set({ phase: { name: 'rollout', since: cur?.name === 'rollout' ? cur.since : performance.now(), done: p.done, total: p.total } });
        } else if (cur?.name !== p.phase) set({ phase: { name: p.phase, since: performance.now() } });
      });
      useRewardLab.setState({ versions: [], problems: [], error: null });
      const info = await workerStarting(trainWorker(fail).start(v.config, backend, onWarm, threads, resume && transfer(resume.checkpoint, checkpointTransferables(resume.checkpoint)), onPhase, shippedWarmStartBase()));
      if (run.id !== id) return false; // reset or restarted while starting
      run.canCheckpoint = info.canCheckpoint;
      run.trained = info.iteration;
      set({ info, warmStart: null });
      if ((v.config.reward?.code ?? '').trim() !== '') useRewardLab.setState({ versions: [{ version: 1, iteration: 0, terms: [], code: v.config.reward.code }] });
      return true;
    } catch (e) {
      const on = backend === 'webgpu' ? 'WebGPU' : backend === 'wasm' ? 'WASM' : 'the chosen backend';
      if (run.id === id) fail(`could not start on ${on}: ${(e as Error).message}`);
      return false;
    }
  };

  const applyLive = (r: DraftConfig, live: string[]) => {
    recording.liveEdit(live.map((p) => ({ iteration: run.trained, path: p, value: getPath(r, p) })));
    set({ liveChanges: [...get().liveChanges, ...live.map((p) => ({ iteration: run.trained, path: p }))] });
    // A new iteration count: the run in progress stops at it (or holds there at once, if past it).
    if (live.includes('iterations') && get().status !== 'starting') send(budget(r.iterations));
    void trainWorker(fail)
      .setHyper(liveHyper(r))
      .catch(() => undefined);
  };

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

    applyRestart: async () => {
      if (await boot()) {
        set({ status: 'running' });
        await go('play');
      }
    },

    startRun: async () => {
      const s = get().status;
      if (s === 'running' || s === 'starting' || s === 'stepping') return;
      if (blocked()) return;
      if (s === 'pausing') {
        // The loop has not rested yet: it trains on (the pause's checkpoint, if under way, first).
        set({ status: 'running' });
        send('play');
        return;
      }
      const r = get().running;
      if (r && s === 'paused') {
        set({ status: 'running' });
        return command('play');
      }
      // A finished run is extended only on its own settings: a draft that changed what needs a
      // fresh run (another map from "Train on this map", another algorithm) starts one, as the
      // button says (before, "Train 200 more" ran the old map's run on to 360 iterations).
      if (r && s === 'finished' && get().pendingRestart.length === 0) {
        // Continue past the configured end: a finished run can be extended by its length again.
        const more = get().draft.iterations;
        set({ running: { ...r, iterations: r.iterations + more }, status: 'running' });
        send(budget(r.iterations + more));
        return command('play');
      }
      if (!(await boot())) return;
      set({ status: 'running' });
      await go('play');
    },

    pauseRun: () => {
      if (get().status !== 'running') return;
      set({ status: 'pausing' });
      send('pause');
    },

    stepOnce: async () => {
      const s = get().status;
      if (s !== 'idle' && s !== 'paused' && s !== 'finished' && s !== 'error') return;
      if (blocked()) return;
      const r = get().running;
      if (!r || s === 'error' || s === 'idle' || (s === 'finished' && get().pendingRestart.length > 0)) {
          if (!(await boot())) return;
        set({ status: 'stepping' });
        return go('step');
      }
      set({ status: 'stepping' });
      if (s === 'finished') {
        // One iteration past the end, as the run's length says.
        set({ running: { ...r, iterations: r.iterations + 1 } });
        send(budget(r.iterations + 1));
      }
      return command('step');
    },

    resumeSavedRun: async (id) => {
      const store = browserRunStore();
      if (!store) return;
      const r = await resumable(store, id, recording.liveId, get().draft.backend);
      if (!r.ok) {
        get().notify(r.level, r.message);
        return;
      }
      const { meta, checkpoint, draft, validation } = r;
      const p = get().presets.find((x) => x.id === meta.config.id);
      set({ view: 'train', draft, validation, pendingRestart: [], ...(p ? { presetId: p.id, base: draftFromPreset(p, draft.backend) } : {}) });
      const before = (await store.getMetrics(id)).filter((r) => r.iteration < checkpoint.iteration);
      if (!(await boot({ checkpoint, rows: before }))) return;
      // Only once the worker took the checkpoint: rows past it are trained again (identically, for
      // synchronous runs); a refused checkpoint leaves the saved run as it was.
      const kept = await store.truncateRun(id, checkpoint.iteration);
      // The versions that scored the kept iterations keep their markers (boot knew only the code it resumed with).
      const keptVersions = rewardVersions(meta.config.reward.code, meta.liveEdits.filter((e) => e.iteration <= checkpoint.iteration));
      useRewardLab.setState({ versions: keptVersions.map((x) => ({ ...x, terms: [] })) });
      const recordId = recording.resume(store, meta, kept, hooks);
      set({ recordId, status: 'running' });
      get().notify('info', `Resumed "${meta.name}" from its checkpoint at iteration ${checkpoint.iteration}.`);
      await go('play');
    },

    resetRun: () => {
      run.id++;
      recording.close('stopped');
      void retireTrainWorker();
      feed.reset();
      clearRecentBatches();
      set({ status: 'idle', running: null, pendingRestart: [], liveChanges: [], history: [], latest: null, inspect: null, info: null, phase: null, warmStart: null, warmHistory: [], warmEta: null, warmPaused: false, error: null, itPerS: 0, skippedUpdates: 0, recordId: null });
      rested();
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
      const id = run.id;
      const versions = lab.versions;
      const version = (versions[versions.length - 1]?.version ?? 0) + 1;
      useRewardLab.setState({ applying: true });
      try {
        const terms = await trainWorker(fail).setRewardCode(code, version);
        if (run.id !== id) return;
        setOwnCode(code);
        // Scores from the next iteration on (the one after those already in the charts).
        useRewardLab.setState({ versions: [...versions, { version, iteration: run.trained, terms, code }], error: null });
        const r = get().running;
        if (r) set({ running: setPath(r, 'reward.code', code), draft: setPath(get().draft, 'reward.code', code) });
        recording.liveEdit([{ iteration: run.trained, path: 'reward.code', value: code }]);
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
        set({ warmPaused: false, warmEta: resumeWarmEta(get().warmEta, performance.now()) });
        run.releaseWarm?.();
        run.releaseWarm = null;
      } else set({ warmPaused: true });
    },

    measureAgain: async () => {
      const v = validate(get().draft);
      if (!v.ok) {
        get().notify('warning', "Fix the highlighted settings first: the backends are timed on this run's model.");
        return;
      }
      if (get().measuringBackends || ['starting', 'running', 'pausing', 'stepping'].includes(get().status)) return;
      try {
        await withProbeWorker((w) => resolveBackend(get, set, w, v.config, 'auto', threadsFor(get, v.config), () => true, true, MEASURE_AGAIN_BUDGET_MS));
      } catch (e) {
        get().notify('error', `Timing the backends failed: ${(e as Error).message}`);
      }
    },
  };
  return { part, applyLive };
}
