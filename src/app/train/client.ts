/**
 * The one training worker, seen from the main thread: created on first use, terminated on reset
 * (terminating is instant and frees every ONNX session, even mid-step on a slow GPU).
 */
import { wrap, type Remote } from 'comlink';
import type { TrainWorkerApi } from '../../runtime/trainWorker/worker.ts';
import { isProgressMessage, seconds, Watchdog } from '../../runtime/liveness.ts';

let worker: Worker | null = null;
let remote: Remote<TrainWorkerApi> | null = null;
let crashed: ((message: string) => void) | null = null;
let watchdog: Watchdog | null = null;

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
let starting = false;

/** While `busy`, the worker is building a run and may stay silent up to STARTING_HEARTBEAT_TIMEOUT_MS. */
export function workerStarting<T>(work: Promise<T>): Promise<T> {
  starting = true;
  return work.finally(() => (starting = false));
}

/** The message for a worker silent for `silentMs` whose last report was `stage`. */
export function silentWorkerMessage(limitMs: number, silentMs: number, stage: string | null): string {
  const last = stage ? `; its last progress: ${stage}, ${seconds(silentMs)} ago` : '';
  return `the training worker stopped answering for ${seconds(limitMs)} and made no progress${last} (it may have run out of memory, or closed)`;
}

/**
 * A training worker started ahead of Start (prewarmTrainWorker), its WASM runtime loading or
 * loaded with `threads` threads (ORT fixes the count at load), waiting to be adopted.
 */
let spare: { worker: Worker; remote: Remote<TrainWorkerApi>; threads: number } | null = null;

const newWorker = () => new Worker(new URL('../../runtime/trainWorker/worker.ts', import.meta.url), { type: 'module', name: 'trainer' });

/**
 * Starts a training worker and its WASM runtime (download, compile, thread workers) now, while
 * the page is idle, so the next Start skips that part: the next trainWorker() with the same
 * thread count adopts it. Does nothing (null) while a training worker exists or a spare with
 * these threads waits; a spare with other threads is replaced. Returns the new spare's API.
 */
export function prewarmTrainWorker(threads: number): Remote<TrainWorkerApi> | null {
  if (remote || spare?.threads === threads) return null;
  spare?.worker.terminate();
  const w = newWorker();
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
export function trainWorker(onCrash: (message: string) => void, threads?: number): Remote<TrainWorkerApi> {
  crashed = onCrash;
  if (!remote) {
    const adopt = spare && threads !== undefined && spare.threads === threads ? spare : null;
    if (spare && !adopt) spare.worker.terminate();
    spare = null;
    const w = adopt?.worker ?? newWorker();
    worker = w;
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
    w.addEventListener('message', (e: MessageEvent) => {
      if (isProgressMessage(e.data)) dog.progress(e.data.stage);
    });
    w.addEventListener('error', (e) => {
      dog.stop();
      if (worker === w) crashed?.(`the training worker crashed: ${e.message || 'script error (see the console)'}`);
    });
    w.addEventListener('messageerror', () => {
      dog.stop();
      if (worker === w) crashed?.('a message from the training worker could not be read (messageerror): the worker is stopped');
    });
  }
  return remote;
}

export function terminateTrainWorker(): void {
  watchdog?.stop();
  watchdog = null;
  worker?.terminate();
  worker = null;
  remote = null;
}

/** The worker if one exists (for optional requests such as overlays: they never create one). */
export function currentTrainWorker(): Remote<TrainWorkerApi> | null {
  return remote;
}

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
