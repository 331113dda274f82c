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

/**
 * A training-worker client: its current worker, spare and retirement are its own fields (the
 * tab has one, below; a test may make another). `spawn` makes a training worker.
 */
export class TrainWorkerClient {
  private worker: Worker | null = null;
  private remote: Remote<TrainWorkerApi> | null = null;
  /** The WASM threads the current worker's runtime was loaded with (null: not known). */
  private workerThreads: number | null = null;
  /** A retirement in progress: the next run waits for it, so the worker it frees can be adopted. */
  private retiring: Promise<void> | null = null;
  private crashed: ((message: string) => void) | null = null;
  private watchdog: Watchdog | null = null;
  private starting = false;
  /**
   * A training worker started ahead of Start (prewarmTrainWorker), its WASM runtime loading or
   * loaded with `threads` threads (ORT fixes the count at load), waiting to be adopted.
   */
  private spare: { worker: Worker; remote: Remote<TrainWorkerApi>; threads: number } | null = null;

  /** Workers whose events are already listened to (a retired worker adopted again keeps its listeners). */
  private readonly listened = new WeakSet<Worker>();

  constructor(private readonly spawn: () => Worker = newWorker) {}

  /** While `busy`, the worker is building a run and may stay silent up to STARTING_HEARTBEAT_TIMEOUT_MS. */
  workerStarting<T>(work: Promise<T>): Promise<T> {
    this.starting = true;
    return work.finally(() => (this.starting = false));
  }

  /**
   * Starts a training worker and its WASM runtime (download, compile, thread workers) now, while
   * the page is idle, so the next Start skips that part: the next trainWorker() with the same
   * thread count adopts it. Does nothing (null) while a training worker exists or a spare with
   * these threads waits; a spare with other threads is replaced. Returns the new spare's API.
   */
  prewarmTrainWorker(threads: number): Remote<TrainWorkerApi> | null {
    // A worker being retired becomes the spare: warming another meanwhile would replace it.
    if (this.remote || this.retiring || this.spare?.threads === threads) return null;
    this.spare?.worker.terminate();
    const w = this.spawn();
    const r = wrap<TrainWorkerApi>(w);
    this.spare = { worker: w, remote: r, threads };
    // A spare that fails to warm is dropped: the run then starts a worker of its own, as without one.
    r.warm(threads).catch(() => {
      if (this.spare?.worker !== w) return;
      w.terminate();
      this.spare = null;
    });
    return r;
  }

  /**
   * The worker's API; `onCrash` hears about a worker that died (a script error, or silence past
   * the heartbeat timeout). `threads`: the WASM threads the run will use; a prewarmed worker with
   * the same count is adopted (with another count, or none given, it is replaced by a fresh one).
   */
  trainWorker(onCrash: (message: string) => void, threads?: number): Remote<TrainWorkerApi> {
    this.crashed = onCrash;
    if (!this.remote) {
      const adopt = this.spare && threads !== undefined && this.spare.threads === threads ? this.spare : null;
      if (this.spare && !adopt) this.spare.worker.terminate();
      this.spare = null;
      const w = adopt?.worker ?? this.spawn();
      this.worker = w;
      this.workerThreads = adopt?.threads ?? threads ?? null;
      const r = adopt?.remote ?? wrap<TrainWorkerApi>(w);
      this.remote = r;
      const limit = () => (this.starting ? STARTING_HEARTBEAT_TIMEOUT_MS : HEARTBEAT_TIMEOUT_MS);
      const dog = new Watchdog({
        everyMs: HEARTBEAT_EVERY_MS,
        limitMs: limit,
        probe: () => r.ping(),
        onSilent: (silentMs, stage) => {
          if (this.worker === w) this.crashed?.(silentWorkerMessage(limit(), silentMs, stage));
        },
      });
      this.watchdog = dog;
      this.listen(w);
    }
    return this.remote;
  }

  /** Progress and crash reports of `w`, acted on only while it is the current worker. */
  private listen(w: Worker): void {
    if (this.listened.has(w)) return;
    this.listened.add(w);
    w.addEventListener('message', (e: MessageEvent) => {
      if (this.worker === w && isProgressMessage(e.data)) this.watchdog?.progress(e.data.stage);
    });
    w.addEventListener('error', (e) => {
      if (this.worker !== w) return;
      this.watchdog?.stop();
      this.crashed?.(`the training worker crashed: ${e.message || 'script error (see the console)'}`);
    });
    w.addEventListener('messageerror', () => {
      if (this.worker !== w) return;
      this.watchdog?.stop();
      this.crashed?.('a message from the training worker could not be read (messageerror): the worker is stopped');
    });
  }

  /** Lets go of the current worker (no more heartbeat or crash reports from it); returns it. */
  private detach(): { w: Worker; r: Remote<TrainWorkerApi>; threads: number | null } | null {
    this.watchdog?.stop();
    this.watchdog = null;
    const out = this.worker && this.remote ? { w: this.worker, r: this.remote, threads: this.workerThreads } : null;
    this.worker = null;
    this.remote = null;
    this.workerThreads = null;
    return out;
  }

  /** Ends the worker at once (a failed run: its state is unknown). */
  terminateTrainWorker(): void {
    this.detach()?.w.terminate();
  }

  /**
   * Ends the current run and keeps its worker as the spare for the next Start (see the top of this
   * file); resolves once that is settled. A worker that does not stop cleanly within RETIRE_MS, or
   * whose thread count is unknown, is terminated; so is the retired one when a spare already waits.
   */
  retireTrainWorker(): Promise<void> {
    const cur = this.detach();
    const prev = this.retiring ?? Promise.resolve();
    if (!cur) return prev;
    const done = prev.then(async () => {
      const clean = await Promise.race([cur.r.stop().catch(() => false), new Promise<boolean>((res) => setTimeout(() => res(false), RETIRE_MS))]);
      if (!clean || cur.threads === null || this.spare) {
        cur.w.terminate();
        return;
      }
      this.spare = { worker: cur.w, remote: cur.r, threads: cur.threads };
    });
    const settled: Promise<void> = done.finally(() => {
      if (this.retiring === settled) this.retiring = null;
    });
    this.retiring = settled;
    return settled;
  }

  /** The worker if one exists (for optional requests such as overlays: they never create one). */
  currentTrainWorker(): Remote<TrainWorkerApi> | null {
    return this.remote;
  }
}

/** The tab's one client. */
const tab = new TrainWorkerClient();

/** The tab's client's methods (see each in TrainWorkerClient). */
export const workerStarting = tab.workerStarting.bind(tab);
export const prewarmTrainWorker = tab.prewarmTrainWorker.bind(tab);
export const trainWorker = tab.trainWorker.bind(tab);
export const terminateTrainWorker = tab.terminateTrainWorker.bind(tab);
export const retireTrainWorker = tab.retireTrainWorker.bind(tab);
export const currentTrainWorker = tab.currentTrainWorker.bind(tab);

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
