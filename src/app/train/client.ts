/**
 * The one training worker, seen from the main thread: created on first use, terminated on reset
 * (terminating is instant and frees every ONNX session, even mid-step on a slow GPU).
 */
import { wrap, type Remote } from 'comlink';
import type { TrainWorkerApi } from '../../runtime/trainWorker/worker.ts';

let worker: Worker | null = null;
let remote: Remote<TrainWorkerApi> | null = null;
let crashed: ((message: string) => void) | null = null;

/** The worker's API; `onCrash` hears about a worker that died (a script error, not a thrown call). */
export function trainWorker(onCrash: (message: string) => void): Remote<TrainWorkerApi> {
  crashed = onCrash;
  if (!remote) {
    worker = new Worker(new URL('../../runtime/trainWorker/worker.ts', import.meta.url), { type: 'module', name: 'trainer' });
    worker.addEventListener('error', (e) => crashed?.(`the training worker crashed: ${e.message || 'script error (see the console)'}`));
    remote = wrap<TrainWorkerApi>(worker);
  }
  return remote;
}

export function terminateTrainWorker(): void {
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
