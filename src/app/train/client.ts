/**
 * The one training worker, seen from the main thread: created on first use (or adopted from the
 * spare), retired when its run ends (Reset, a new Start): the worker stops and frees the run but
 * keeps its engine and, idle, its sessions, and waits as the spare for the next Start with the
 * same WASM threads, which then builds no worker, loads no runtime and compiles no session it
 * had. A worker that does not stop within RETIRE_MS, or whose run failed, is terminated
 * (instant, and it frees every ONNX session, even mid-step on a slow GPU).
 */
import { wrap, type Remote } from 'comlink';
import type { TrainWorkerApi } from '../../runtime/trainWorker/worker.ts';
import { isProgressMessage, seconds, Watchdog } from '../../runtime/liveness.ts';
import type { SweepWorker } from './sweepRunner.ts';

/** Longest a retiring worker may take to stop its run before it is terminated instead, ms. */
const RETIRE_MS = 8000;
/** How often the page checks on the training worker (and pings it), ms. */
const HEARTBEAT_EVERY_MS = 2000;
/**
 * How long the training worker may go without a sign of life before it counts as dead, ms. Signs
 * are an answered ping, or a progress message the worker posts from inside long work (every
 * session run, reward scoring in slices; see runtime/liveness.ts), so a worker busy in one long
 * synchronous stretch is not taken for dead. A worker that runs out of memory or closes dies
 * without an 'error' event: this is how it is noticed.
 */
export const HEARTBEAT_TIMEOUT_MS = 30_000;
/**
 * The same while the worker builds a run (timing backends, compiling sessions): a session build
 * is one synchronous WASM call, with no progress inside it, that took 12 s on a 2-core machine at
 * load 13, and a busy laptop may take longer.
 */
export const STARTING_HEARTBEAT_TIMEOUT_MS = 120_000;
/** The message for a worker silent for `silentMs` whose last report was `stage`. */
export function silentWorkerMessage(limitMs: number, silentMs: number, stage: string | null): string {
  const last = stage ? `; its last progress: ${stage}, ${seconds(silentMs)} ago` : '';
  return `the training worker stopped answering for ${seconds(limitMs)} and made no progress${last} (it may have run out of memory, or closed)`;
}

const newWorker = () => new Worker(new URL('../../runtime/trainWorker/worker.ts', import.meta.url), { type: 'module', name: 'trainer' });

/** The tab's training-worker client: its current worker, spare and retirement, held per client (not per module). */
export interface TrainWorkerClient {
  workerStarting<T>(work: Promise<T>): Promise<T>;
  prewarmTrainWorker(threads: number): Remote<TrainWorkerApi> | null;
  trainWorker(onCrash: (message: string) => void, threads?: number): Remote<TrainWorkerApi>;
  terminateTrainWorker(): void;
  retireTrainWorker(): Promise<void>;
  currentTrainWorker(): Remote<TrainWorkerApi> | null;
}

/** A client with no worker yet; `spawn` makes a training worker (the real script by default). */
export function createTrainWorkerClient(spawn: () => Worker = newWorker): TrainWorkerClient {
  let worker: Worker | null = null;
  let remote: Remote<TrainWorkerApi> | null = null;
  /** The WASM threads the current worker's runtime was loaded with (null: not known). */
  let workerThreads: number | null = null;
  /** A retirement in progress: the next run waits for it, so the worker it frees can be adopted. */
  let retiring: Promise<void> | null = null;
  let crashed: ((message: string) => void) | null = null;
  let watchdog: Watchdog | null = null;

  let starting = false;


  /** While `busy`, the worker is building a run and may stay silent up to STARTING_HEARTBEAT_TIMEOUT_MS. */
  function workerStarting<T>(work: Promise<T>): Promise<T> {
    starting = true;
    return work.finally(() => (starting = false));
  }

  /**
   * A training worker started ahead of Start (prewarmTrainWorker), its WASM runtime loading or
   * loaded with `threads` threads (ORT fixes the count at load), waiting to be adopted.
   */
  let spare: { worker: Worker; remote: Remote<TrainWorkerApi>; threads: number } | null = null;

  /**
   * Starts a training worker and its WASM runtime (download, compile, thread workers) now, while
   * the page is idle, so the next Start skips that part: the next trainWorker() with the same
   * thread count adopts it. Does nothing (null) while a training worker exists or a spare with
   * these threads waits; a spare with other threads is replaced. Returns the new spare's API.
   */
  function prewarmTrainWorker(threads: number): Remote<TrainWorkerApi> | null {
    // A worker being retired becomes the spare: warming another meanwhile would replace it.
    if (remote || retiring || spare?.threads === threads) return null;
    spare?.worker.terminate();
    const w = spawn();
    const r = wrap<TrainWorkerApi>(w);
    spare = { worker: w, remote: r, threads };
    // A spare that fails to warm is dropped: the run then starts a worker of its own, as without one.
    r.warm(threads).catch(() => {
      if (spare?.worker !== w) return;
      w.terminate();
      spare = null;
    });
    return r;
  }

  /**
   * The worker's API; `onCrash` hears about a worker that died (a script error, or silence past
   * the heartbeat timeout). `threads`: the WASM threads the run will use; a prewarmed worker with
   * the same count is adopted (with another count, or none given, it is replaced by a fresh one).
   */
  function trainWorker(onCrash: (message: string) => void, threads?: number): Remote<TrainWorkerApi> {
    crashed = onCrash;
    if (!remote) {
      const adopt = spare && threads !== undefined && spare.threads === threads ? spare : null;
      if (spare && !adopt) spare.worker.terminate();
      spare = null;
      const w = adopt?.worker ?? spawn();
      worker = w;
      workerThreads = adopt?.threads ?? threads ?? null;
      const r = adopt?.remote ?? wrap<TrainWorkerApi>(w);
      remote = r;
      const limit = () => (starting ? STARTING_HEARTBEAT_TIMEOUT_MS : HEARTBEAT_TIMEOUT_MS);
      const dog = new Watchdog({
        everyMs: HEARTBEAT_EVERY_MS,
        limitMs: limit,
        probe: () => r.ping(),
        onSilent: (silentMs, stage) => {
          if (worker === w) crashed?.(silentWorkerMessage(limit(), silentMs, stage));
        },
      });
      watchdog = dog;
      listen(w);
    }
    return remote;
  }

  /** Workers whose events are already listened to (a retired worker adopted again keeps its listeners). */
  const listened = new WeakSet<Worker>();

  /** Progress and crash reports of `w`, acted on only while it is the current worker. */
  function listen(w: Worker): void {
    if (listened.has(w)) return;
    listened.add(w);
    w.addEventListener('message', (e: MessageEvent) => {
      if (worker === w && isProgressMessage(e.data)) watchdog?.progress(e.data.stage);
    });
    w.addEventListener('error', (e) => {
      if (worker !== w) return;
      watchdog?.stop();
      crashed?.(`the training worker crashed: ${e.message || 'script error (see the console)'}`);
    });
    w.addEventListener('messageerror', () => {
      if (worker !== w) return;
      watchdog?.stop();
      crashed?.('a message from the training worker could not be read (messageerror): the worker is stopped');
    });
  }

  /** Lets go of the current worker (no more heartbeat or crash reports from it); returns it. */
  function detach(): { w: Worker; r: Remote<TrainWorkerApi>; threads: number | null } | null {
    watchdog?.stop();
    watchdog = null;
    const out = worker && remote ? { w: worker, r: remote, threads: workerThreads } : null;
    worker = null;
    remote = null;
    workerThreads = null;
    return out;
  }

  /** Ends the worker at once (a failed run: its state is unknown). */
  function terminateTrainWorker(): void {
    detach()?.w.terminate();
  }

  /**
   * Ends the current run and keeps its worker as the spare for the next Start (see the top of this
   * file); resolves once that is settled. A worker that does not stop cleanly within RETIRE_MS, or
   * whose thread count is unknown, is terminated; so is the retired one when a spare already waits.
   */
  function retireTrainWorker(): Promise<void> {
    const cur = detach();
    const prev = retiring ?? Promise.resolve();
    if (!cur) return prev;
    const done = prev.then(async () => {
      const clean = await Promise.race([cur.r.stop().catch(() => false), new Promise<boolean>((res) => setTimeout(() => res(false), RETIRE_MS))]);
      if (!clean || cur.threads === null || spare) {
        cur.w.terminate();
        return;
      }
      spare = { worker: cur.w, remote: cur.r, threads: cur.threads };
    });
    const settled: Promise<void> = done.finally(() => {
      if (retiring === settled) retiring = null;
    });
    retiring = settled;
    return settled;
  }

  /** The worker if one exists (for optional requests such as overlays: they never create one). */
  function currentTrainWorker(): Remote<TrainWorkerApi> | null {
    return remote;
  }

  return { workerStarting, prewarmTrainWorker, trainWorker, terminateTrainWorker, retireTrainWorker, currentTrainWorker };
}

/** The tab's one client. */
const tab = createTrainWorkerClient();

/** The tab's client's methods (see each inside createTrainWorkerClient). */
export const { workerStarting, prewarmTrainWorker, trainWorker, terminateTrainWorker, retireTrainWorker, currentTrainWorker } = tab;

/**
 * Runs `fn` against a throwaway worker of the same script (e.g. to time the backends while the
 * training worker holds a finished run), then terminates it.
 */
export async function withProbeWorker<T>(fn: (w: Remote<TrainWorkerApi>) => Promise<T>): Promise<T> {
  const w = new Worker(new URL('../../runtime/trainWorker/worker.ts', import.meta.url), { type: 'module', name: 'backend-probe' });
  try {
    return await fn(wrap<TrainWorkerApi>(w));
  } finally {
    w.terminate();
  }
}

/**
 * A training worker of its own for one run of a sweep (app/train/sweepRunner.ts): not the tab's
 * training worker, never a spare. Watched like it: a script error, an unreadable message, or
 * silence past the heartbeat timeout (longer while it builds its run) rejects `died`.
 */
export function sweepWorker(name: string): SweepWorker {
  const w = new Worker(new URL('../../runtime/trainWorker/worker.ts', import.meta.url), { type: 'module', name });
  const r = wrap<TrainWorkerApi>(w);
  let building = false;
  let die: (e: Error) => void = () => undefined;
  const died = new Promise<never>((_, reject) => (die = reject));
  died.catch(() => undefined);
  const limit = () => (building ? STARTING_HEARTBEAT_TIMEOUT_MS : HEARTBEAT_TIMEOUT_MS);
  const dog = new Watchdog({ everyMs: HEARTBEAT_EVERY_MS, limitMs: limit, probe: () => r.ping(), onSilent: (silentMs, stage) => die(new Error(silentWorkerMessage(limit(), silentMs, stage))) });
  w.addEventListener('message', (e: MessageEvent) => {
    if (isProgressMessage(e.data)) dog.progress(e.data.stage);
  });
  w.addEventListener('error', (e) => die(new Error(`the training worker crashed: ${e.message || 'script error (see the console)'}`)));
  w.addEventListener('messageerror', () => die(new Error('a message from the training worker could not be read (messageerror)')));
  return {
    api: r,
    died,
    setStarting: (on) => (building = on),
    terminate: () => {
      dog.stop();
      w.terminate();
    },
  };
}
