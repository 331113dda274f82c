/**
 * The training worker (a module Web Worker): owns one trainer and its ONNX sessions, and runs
 * it through core's `runTraining`, the CLI's loop (skip counting and stopAtSuccess included),
 * with a RunControl the page commands (play, pause, step, stop, a new budget). Commands act between
 * two iterations, so pausing never interrupts an update half-way and a single step is exactly
 * one rollout plus one update. The page only renders the events `run` reports and sends commands.
 *
 * Main thread: `import type { TrainWorkerApi } from '.../trainWorker/worker.ts'` and
 * `wrap<TrainWorkerApi>(new Worker(new URL(...), { type: 'module' }))`.
 */
import { expose, transfer } from 'comlink';
import '../../core/envs/index.ts';
import { countParams } from '../../core/models/types.ts';
import type { RunConfig } from '../../core/presets/schema.ts';
import { createTrainer } from '../../core/trainer/createTrainer.ts';
import { resolvePlan } from '../../core/presets/plan.ts';
import { ensureCodeEnvs } from '../codeEnv/index.ts';
import type { RunTrainer } from '../../core/trainer/api.ts';
import type { LiveHyper } from '../../core/update/hyper.ts';
import { loadWebEngine, measureWebBackends, type WebBackend, type WebMeasureOptions } from '../engine/web.ts';
import type { EngineDecision } from '../../core/engine/choose.ts';
import { probeShapeFor } from '../../core/engine/shape.ts';
import { createBrowserWorkerPool } from '../pool/browser.ts';
import { browserTokenWorker } from '../tokenWorker/browser.ts';
import type { Engine, PolicyRunner } from '../../core/engine/types.ts';
import { serializeEngine } from '../../core/engine/serialize.ts';
import { assembleOverlay, overlayInputs, runRows } from './overlay.ts';
import type { Checkpoint } from '../../core/runs/checkpoint.ts';
import { rewardLabFor, warmRewardSandbox } from '../rewardSandbox/index.ts';
import { RunStore, writeCheckpoint, type CheckpointWrite } from '../storage/runStore.ts';
import type { RewardLab } from '../../core/reward/userTerms.ts';
import { progressBeacon, type ProgressMessage } from '../liveness.ts';
import { progressEngine, progressLab } from './progress.ts';
import type { EpisodeView, GridOverlay, GridOverlayRequest, IterationView, PhaseReport, RunEvent, RunOptions, StartInfo, WarmStartProgress } from './types.ts';
import { runTraining, TrainerEvents, type IterationBatch, type StopReason } from '../../core/trainer/events.ts';
import { RunControl, type RunCommand } from '../../core/trainer/runControl.ts';
import { mark } from '../marks.ts';

mark('worker-ready');

/**
 * This worker's run state, in one record made as the worker starts (each worker runs its own
 * instance of this module): the run, its engine and sessions, its reward terms and store, and
 * the bookkeeping of starts, stops and reports. release() clears the run's part.
 */
interface WorkerState {
  trainer: RunTrainer | null;
  runConfig: RunConfig | null;
  runEngine: Engine | null;
  /** Policy session for grid overlays (built on first use per run; rows per call). */
  overlayPolicy: Promise<PolicyRunner> | null;
  /** The run's user reward terms (QuickJS sandbox in this worker), null without reward code. */
  rewardLab: RewardLab | null;
  /** The run database, opened on the first checkpoint this worker saves. */
  runStore: RunStore | null;
  /** Reward-term problems (skipped non-finite values) since the last step report. */
  rewardProblems: string[];
  /** Rollout-worker restarts (and other notes on the run's workers) since the last step report. */
  workerNotes: string[];
  /** Bumped by every start/stop, so a step that was in flight when the run changed is discarded. */
  generation: number;
  /** A backend timing made before Start (premeasure), for the model and options named by `key`. */
  premeasured: { key: string; decision: Promise<EngineDecision> } | null;
  /** Steps of this run that left timing marks so far (up to MARKED_STEPS). */
  markedSteps: number;
  /** This start's trainer finished a step (the first rollout's progress is no longer reported). */
  firstStepDone: boolean;
  /** The running loop's commands (null between runs). */
  control: RunControl | null;
  /** The running loop (run()), settled once it has stopped: release waits for it before freeing the trainer's sessions. */
  looping: Promise<unknown> | null;
}

function newWorkerState(): WorkerState {
  return {
    trainer: null,
    runConfig: null,
    runEngine: null,
    overlayPolicy: null,
    rewardLab: null,
    runStore: null,
    rewardProblems: [],
    workerNotes: [],
    generation: 0,
    premeasured: null,
    markedSteps: 0,
    firstStepDone: false,
    control: null,
    looping: null,
  };
}

const st = newWorkerState();
const noteRewardProblem = (m: string) => {
  if (st.rewardProblems.length < 20) st.rewardProblems.push(m);
};
const OVERLAY_BATCH = 128;
/**
 * Progress for the page's watchdog, posted from inside long work (session builds, every inference
 * call and train step, reward scoring in slices): a worker's postMessage reaches the page at once
 * even while this thread never returns to its event loop, which a heartbeat ping needs.
 */
const progress = progressBeacon((m: ProgressMessage) => (globalThis as unknown as { postMessage(m: unknown): void }).postMessage(m));
const measureKey = (config: RunConfig, o: WebMeasureOptions) => JSON.stringify([probeShapeFor(config).key, o.backends, o.threads, o.budgetMs, o.softwareAdapter, o.timeSoftware ?? false]);
/** The first MARKED_STEPS steps of each run leave timing marks (bench/tab's breakdown). */
const MARKED_STEPS = 2;
/** Longest release() waits for a stopped loop's iteration in flight before freeing the trainer anyway, ms. */
const LOOP_STOP_WAIT_MS = 5000;

function need(): RunTrainer {
  if (!st.trainer) throw new Error('training worker: no run (call start first)');
  return st.trainer;
}

/**
 * Frees the run. A loop still running is told to stop and awaited (its iteration in flight ends
 * first), so no session is freed, or handed to the next run, while a step uses it. True when it
 * stopped in time; false when it did not within LOOP_STOP_WAIT_MS (the page then terminates
 * this worker instead of keeping it for the next run).
 */
async function release(): Promise<boolean> {
  st.control?.command('stop');
  st.control = null;
  // A batch of user reward terms being scored stops at its next slice (≤ ~250 ms) instead of
  // finishing: the iteration in flight is dropped, as the CLI drops it on Ctrl-C.
  st.rewardLab?.scorer.interrupt?.();
  const loop = st.looping;
  const clean = !loop || (await Promise.race([loop.then(() => true, () => true), new Promise<boolean>((r) => setTimeout(() => r(false), LOOP_STOP_WAIT_MS))]));
  const t = st.trainer;
  const p = st.overlayPolicy;
  st.trainer = null;
  st.runConfig = null;
  st.overlayPolicy = null;
  const lab = st.rewardLab;
  st.rewardLab = null;
  st.rewardProblems = [];
  st.workerNotes = [];
  await t?.release();
  lab?.scorer.close();
  await p?.then((x) => x.release()).catch(() => undefined);
  return clean;
}

/** A shipped warm start's JSON, or undefined when the host has none by that name (or it does not parse). */
async function fetchWarmStart(url: string): Promise<unknown> {
  try {
    const res = await fetch(url);
    if (!res.ok) return undefined;
    return await res.json();
  } catch {
    return undefined;
  }
}

const api = {
  /** Heartbeat: the page asks every few seconds; a worker that stops answering is treated as dead. */
  ping(): true {
    return true;
  },

  /**
   * Loads the WASM runtime with `threads` threads before any run (the page calls it while idle,
   * before Start): the backend timing and the run then find it ready. `threads` must be what the
   * run will use (ORT fixes the count when it loads).
   */
  async warm(threads: number): Promise<void> {
    mark('warm-begin');
    await loadWebEngine('wasm', { threads });
    mark('warm-end');
  },

  /** The workload `config` puts on its engine, named (the key of a remembered backend choice). */
  async shapeOf(config: RunConfig): Promise<{ key: string; label: string }> {
    // The shape is read off an env instance: a code env needs its sandbox in this worker first.
    await ensureCodeEnvs(config.env.id);
    const s = probeShapeFor(config);
    return { key: s.key, label: s.label };
  },

  /**
   * Times `config`'s model on each backend and picks the faster (see measureWebBackends). Call
   * before `start` in the same worker: the WASM runtime it loads, with `options.threads`, is the
   * one the run then uses (ORT fixes its thread count when it first loads).
   */
  async measureBackends(config: RunConfig, options: WebMeasureOptions): Promise<EngineDecision> {
    await ensureCodeEnvs(config.env.id);
    const key = measureKey(config, options);
    const early = st.premeasured;
    st.premeasured = null;
    // Timed already, before Start, for this model and these options: that result is this start's.
    if (early && early.key === key) return early.decision;
    // A different one is still running: the runtime runs one session call at a time.
    await early?.decision.catch(() => undefined);
    mark('measure-begin');
    const d = await measureWebBackends(config, options);
    mark('measure-end');
    return d;
  },

  /**
   * Times `config`'s model as measureBackends would, now (the page calls it while idle, before
   * Start, after `warm`); a later measureBackends with the same model and options returns this
   * result instead of timing again.
   */
  async premeasure(config: RunConfig, options: WebMeasureOptions): Promise<void> {
    if (st.premeasured || st.trainer) return;
    await ensureCodeEnvs(config.env.id);
    // A start or another timing may have begun while the sandbox loaded.
    if (st.premeasured || st.trainer) return;
    const decision = (async () => {
      mark('premeasure-begin');
      const d = await measureWebBackends(config, options);
      mark('premeasure-end');
      return d;
    })();
    decision.catch(() => undefined);
    st.premeasured = { key: measureKey(config, options), decision };
  },

  /**
   * Builds a fresh trainer for `config` (a config already validated by parseRunConfig).
   * `threads`: WASM threads, fixed for this worker's life by its first WASM use. `resumeFrom`:
   * a checkpoint of this config to continue from (Resume); a refused one fails the start.
   */
  async start(
    config: RunConfig,
    backend: WebBackend,
    onWarmStart?: (p: WarmStartProgress) => void | Promise<void>,
    threads = 1,
    resumeFrom?: Checkpoint,
    onPhase?: (p: PhaseReport) => void,
    warmStartBase?: string,
  ): Promise<StartInfo> {
    const gen = ++st.generation;
    await release();
    // Sessions of an early timing still in flight finish first (one session call at a time).
    const early = st.premeasured;
    st.premeasured = null;
    await early?.decision.catch(() => undefined);
    const t0 = performance.now();
    mark('start-begin');
    st.markedSteps = 0;
    st.firstStepDone = false;
    // A code env's sandbox (QuickJS) loads in this worker before anything makes the env.
    await ensureCodeEnvs(config.env.id);
    // User reward terms load (and get a dry run) before any session is built: a broken module fails the start at once.
    const lab = progressLab(await rewardLabFor(config, noteRewardProblem), progress);
    onPhase?.({ phase: 'engine' });
    const engine = progressEngine(await loadWebEngine(backend, backend === 'wasm' ? { threads } : {}), progress);
    mark('start-engine');
    onPhase?.({ phase: 'session' });
    // rollout.workers > 0: rollout workers spawned from this worker (WASM, one thread each).
    // Tool envs may begin with an imitation warm start: report its progress (a comlink proxy).
    let warmStartLoaded = false;
    // The page validated the config; its plan (each stage resolved once) is made here, where it trains.
    const t = await createTrainer(resolvePlan(config), engine, {
      // Shipped warm starts (public/warm-start/, absolute URL from the page): a matching one replaces the warm start's training.
      warmStartCache: warmStartBase
        ? {
            read: (name) => fetchWarmStart(new URL(name, warmStartBase).href),
            onResult: (r) => {
              warmStartLoaded = r.loaded;
              mark(r.loaded ? 'warm-start-loaded' : 'warm-start-refused');
            },
          }
        : undefined,
      rewardLab: lab,
      workerPool: (size) => (model, weights) => createBrowserWorkerPool({ size, model, weights, onRestart: (m) => st.workerNotes.length < 20 && st.workerNotes.push(m) }),
      // Tool runs with rollout.workers 1 decode in a token rollout worker beside this one.
      tokenWorker: browserTokenWorker,
      // A token run's checkpoint replaces the imitation warm start's result: a resume skips it.
      resume: resumeFrom,
      onWarmStart: (r, total) => {
        // Marks at the warm start's first and last step: bench/tab's time to the warm start's end.
        if (r.step === 0) mark('warm-start-first-step');
        if (r.step + 1 === total) mark('warm-start-end');
        return onWarmStart?.({ step: r.step + 1, total, ceLoss: r.ceLoss, targetProb: r.targetProb });
      },
      onEpisode: onPhase ? firstRolloutProgress(gen, onPhase) : undefined,
    });
    if (gen !== st.generation) {
      await t.release();
      lab?.scorer.close();
      throw new Error('superseded by a newer start');
    }
    if (resumeFrom) {
      try {
        await t.restore(resumeFrom);
      } catch (e) {
        await t.release();
        throw e;
      }
    }
    st.trainer = t;
    st.rewardLab = lab ?? null;
    st.runConfig = config;
    st.runEngine = engine;
    mark('start-end');
    return { engine: engine.name, setupS: (performance.now() - t0) / 1000, params: countParams(t.model), canCheckpoint: t.canCheckpoint, iteration: t.iteration, warmStartLoaded };
  },

  /**
   * Builds the trainer's checkpoint and saves it for run `runId` in the page's run database
   * (IndexedDB is open to workers), so the structured clone of its tensors runs on this thread,
   * not the page's; null for trainers without checkpoints. Call between steps only.
   */
  async saveCheckpoint(runId: string): Promise<CheckpointWrite | null> {
    const t = need();
    if (!t.canCheckpoint) return null;
    st.runStore ??= new RunStore();
    return writeCheckpoint(st.runStore, runId, await t.checkpoint());
  },

  /**
   * Trains the started run with core's `runTraining` until `command('stop')`, a new start or an
   * error; resolves with why it ended. Where the CLI would end (the budget, stopAtSuccess) the
   * loop holds instead (a `held` event), so a step or "train N more" goes on with this trainer.
   * Each iteration's report is awaited before the next step: the page records it, and saves a
   * checkpoint through `saveCheckpoint` when one is due, with the trainer between steps.
   */
  async run(o: RunOptions, onEvent: (e: RunEvent) => void | Promise<void>): Promise<StopReason> {
    const t = need();
    const gen = st.generation;
    st.control?.command('stop');
    const c = new RunControl(o.iterations, { steps: o.mode === 'step' ? 1 : 0 });
    st.control = c;
    const events = new TrainerEvents();
    /** The page's answer to the latest iteration report (awaited before the next step). */
    let answered: Promise<void> | void = undefined;
    const live = () => gen === st.generation && st.control === c;
    events.on('iteration', (e) => {
      if (live()) answered = onEvent(iterationEvent(e.iteration, e.metrics, e.allApplied, e.wallS, e.batch));
    });
    events.on('error', (e) => {
      if (live()) void onEvent({ type: 'error', iteration: e.iteration, message: e.message });
    });
    // Marks around the first steps of each run: bench/tab's breakdown of the first iteration.
    const marked = {
      async step() {
        const k = st.markedSteps;
        if (k < MARKED_STEPS) mark(`step-begin:${k}`);
        const r = await t.step();
        st.firstStepDone = true;
        // After the first iteration, not before it: the first Apply of reward code then finds the sandbox loaded.
        if (k === 0) void warmRewardSandbox();
        if (k < MARKED_STEPS) {
          st.markedSteps++;
          const m = r.metrics;
          mark(`step-end:${k}`, { rolloutS: m['perf/rollout_s'], trainS: m['perf/train_s'], updateS: m['perf/update_s'], iterationS: m['perf/iteration_s'] });
        }
        return r;
      },
    };
    const loop = runTraining(marked, events, {
      iterations: o.iterations,
      control: c,
      stopAtSuccess: o.stopAtSuccess,
      // Every episode goes to the page with its iteration (the group view, the inspector, the recorder's sample).
      trajectories: 0,
      shouldStop: () => !live(),
      afterIteration: async () => {
        await answered;
      },
      onHold: async (reason) => {
        if (live()) await onEvent({ type: 'held', reason, iteration: t.iteration });
      },
    });
    st.looping = loop;
    const stopped = await loop.finally(() => {
      if (st.looping === loop) st.looping = null;
    });
    if (st.control === c) st.control = null;
    return stopped.reason;
  },

  /** Pause, step, play, stop or re-budget the running loop (ignored without one). */
  command(c: RunCommand): void {
    st.control?.command(c);
  },

  /**
   * Policy (and value) at every standable cell of a grid run's world, as replayed to `req.step`
   * of an episode, with the learner's current weights; null for runs without a grid policy.
   * Sessions share the trainer's engine lock (serializeEngine is memoized per engine), so this
   * may interleave with a step in flight without two WASM runs overlapping.
   */
  async gridOverlay(req: GridOverlayRequest): Promise<GridOverlay | null> {
    const t = st.trainer;
    const config = st.runConfig;
    const engine = st.runEngine;
    if (!t || !config || !engine || t.model.kind !== 'mlp') return null;
    const inp = overlayInputs(config.env.id, config.env.kwargs, req.seed, req.actions, req.step);
    st.overlayPolicy ??= t.getWeights().then((w) => serializeEngine(engine).createPolicy(t.model, OVERLAY_BATCH, w));
    const policy = await st.overlayPolicy;
    if (t !== st.trainer) return null; // the run changed meanwhile
    const version = t.version;
    policy.setWeights(await t.getWeights(), version);
    const A = t.model.numActions;
    const out = await runRows((obs) => policy.run({ obs }), OVERLAY_BATCH, inp.features, inp.dim, A);
    const view = assembleOverlay(inp, out, A, version, req.step);
    const buffers = [view.cells.buffer, view.probs.buffer, ...(view.values ? [view.values.buffer] : [])] as ArrayBuffer[];
    return transfer(view, buffers);
  },

  /**
   * New reward code for the running trainer, scoring from the next batch on as `version` (the
   * reward lab's Apply). The code is loaded in a fresh sandbox and dry-run first: a module that
   * does not load, or a term that throws or loops, is refused with its message and the run keeps
   * its current terms. '' removes the user terms. Returns the new terms' names.
   */
  async setRewardCode(code: string, version: number): Promise<string[]> {
    const t = need();
    if (!st.runConfig) throw new Error('no run config: the run has not started');
    const lab = progressLab(await rewardLabFor({ ...st.runConfig, reward: { ...st.runConfig.reward, code } }, noteRewardProblem, version), progress) ?? null;
    if (t !== st.trainer) {
      lab?.scorer.close();
      throw new Error('the run changed meanwhile');
    }
    const old = st.rewardLab;
    t.setRewardLab(lab);
    st.rewardLab = lab;
    st.runConfig = { ...st.runConfig, reward: { ...st.runConfig.reward, code } };
    old?.scorer.close();
    return lab ? [...lab.scorer.terms] : [];
  },

  /** Live hyperparameters: applied from the next train step, the run keeps going. */
  setHyper(h: LiveHyper): void {
    need().setHyper(h);
  },

  /**
   * Ends the run and frees it, keeping the engine and the sessions (idle, for the next run's
   * graphs): the page keeps this worker for its next Start. False when the loop's iteration in
   * flight did not end in time: the page should terminate the worker.
   */
  async stop(): Promise<boolean> {
    st.generation++;
    return release();
  },
};

/** Reports of the first rollout's episodes, at most one per this many ms (and the last one). */
const ROLLOUT_REPORT_MS = 100;

/**
 * The first rollout's progress for the page (until this start's first iteration; later rollouts
 * report nothing): a person waiting on it sees episodes finish.
 */
function firstRolloutProgress(gen: number, onPhase: (p: PhaseReport) => void): (done: number, total: number) => void {
  let last = 0;
  return (done, total) => {
    if (gen !== st.generation || st.firstStepDone) return;
    const now = performance.now();
    if (done < total && now - last < ROLLOUT_REPORT_MS) return;
    last = now;
    onPhase({ phase: 'rollout', done, total });
  };
}

/**
 * One iteration as the page sees it: the metrics and every episode, reduced to what the views
 * draw, with their arrays transferred (not copied).
 */
function iterationEvent(iteration: number, m: Readonly<Record<string, number>>, allApplied: boolean, wallS: number, r: IterationBatch): RunEvent {
  const episodes = r.episodes.map((ep, i): EpisodeView => {
    const common = { seed: ep.seed, group: ep.group, reward: r.episodeRewards[i], advantage: r.episodeAdvantages[i], terminated: ep.terminated, truncated: ep.truncated, success: ep.success };
    if ('tokens' in ep) {
      const { tokens, lossMask, logprobs, entropies, versions, rewards, actions, infos, observations, transcript, contextLimited, forcedEnds } = ep;
      const turn = r.episodeTurnAdvantages?.[i];
      const link = r.branches?.find((l) => l.branch === i);
      const trunk = link ? r.episodes[link.trunk] : undefined;
      const branch = link && trunk && 'tokens' in trunk ? { trunk: link.trunk, at: link.at, turn: actionsBefore(trunk.lossMask, link.at) + 1 } : undefined;
      return { kind: 'tokens', ...common, tokens, lossMask, logprobs, entropies, versions, rewards, actions, infos, observations, transcript, contextLimited, forcedEnds, ...(turn ? { turnAdvantages: Float64Array.from(turn) } : {}), ...(branch ? { branch } : {}) };
    }
    const { actions, logprobs, entropies, values, versions, rewards } = ep;
    return { kind: 'grid', ...common, actions, logprobs, entropies, values, versions, rewards };
  });
  const view: IterationView = { iteration, metrics: { ...m }, allApplied, wallS, episodes, ...(r.lens ? { lens: r.lens } : {}), rewardProblems: st.rewardProblems.splice(0), ...(st.workerNotes.length ? { workerNotes: st.workerNotes.splice(0) } : {}) };
  // Arrays may share a buffer only if the rollout sliced them from one; transfer distinct ones.
  const buffers = new Set<ArrayBuffer>();
  for (const e of episodes) {
    const arrays = e.kind === 'grid' ? [e.actions, e.logprobs, e.entropies, e.values, e.versions, e.rewards] : [e.tokens, e.lossMask, e.logprobs, e.entropies, e.versions, e.rewards];
    for (const a of arrays) buffers.add(a.buffer as ArrayBuffer);
  }
  if (r.lens) for (const a of [r.lens.logRatio, r.lens.adv, r.lens.seq]) buffers.add(a.buffer as ArrayBuffer);
  return transfer({ type: 'iteration', view }, [...buffers]);
}

/** Actions of a token context that end before position `at` (a trunk's turns a branch from `at` replayed). */
function actionsBefore(lossMask: Uint8Array, at: number): number {
  let n = 0;
  for (let i = 1; i < at; i++) if (lossMask[i] === 1 && lossMask[i + 1] !== 1) n++;
  return n;
}

export type TrainWorkerApi = typeof api;
expose(api);
