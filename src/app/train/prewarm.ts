/**
 * The work of a first Start done while the page is idle on the Train view, before Start:
 *
 * - the training worker starts and loads its WASM runtime (client.ts, prewarmTrainWorker), with
 *   the threads the run will use, so the run skips the worker start and the runtime's download
 *   and compile;
 * - for Auto, when this device and model have no remembered choice yet, that worker times the
 *   backends on the draft's model (the worker's premeasure), so Start finds the decision made.
 *
 * Only while no run holds a worker, and for a run that will use WASM (forced, or Auto, whose
 * timing loads WASM first). The timing's options and the remembered choice's key mirror the
 * train slice's resolveBackend: were they to differ, the early timing would only go unused (the
 * worker answers it for the same model and options alone) and Start would time as before.
 */
import type { Remote } from 'comlink';
import { learnerThreads } from '../../core/engine/threads.ts';
import { deviceKey } from '../../runtime/backend.ts';
import type { WebMeasureOptions } from '../../runtime/engine/web.ts';
import type { TrainWorkerApi } from '../../runtime/trainWorker/worker.ts';
import { recallChoice } from '../state/engineCache.ts';
import type { Store } from '../storeTypes.ts';
import { currentTrainWorker, prewarmTrainWorker } from './client.ts';
import { validate } from './config.ts';

/** As the train slice's MEASURE_BUDGET_MS: the backend timing's budget at a first start, ms. */
const MEASURE_BUDGET_MS = 1500;

/** The WASM threads a run of `workers` rollout workers gets (as the train slice's threadsFor). */
export function threadsForDraft(s: Pick<Store, 'backend'>, workers: number): number | null {
  const b = s.backend;
  if (b.status !== 'ready') return null;
  if (b.threads !== null) return b.threads;
  return learnerThreads({ cores: b.report.hardwareConcurrency, isolated: b.report.wasm.crossOriginIsolated, rolloutWorkers: workers });
}

/** Whether to warm an engine for the store's state now, and with how many threads. */
export function prewarmThreads(s: Pick<Store, 'backend' | 'view' | 'status' | 'draft'>): number | null {
  if (s.view !== 'train' || s.status !== 'idle' || s.draft.backend === 'webgpu') return null;
  return threadsForDraft(s, s.draft.rollout.workers);
}

/** Asks the warmed worker to time the backends for the draft (Auto, nothing remembered yet). */
async function premeasure(remote: Remote<TrainWorkerApi>, s: Store, threads: number): Promise<void> {
  const b = s.backend;
  if (s.draft.backend !== 'auto' || b.status !== 'ready') return;
  const v = validate(s.draft);
  if (!v.ok) return;
  const report = b.report;
  const shape = await remote.shapeOf(v.config);
  if (recallChoice(`${deviceKey(report, navigator.userAgent)} | ${threads} threads | ${shape.key}`)) return;
  const options: WebMeasureOptions = {
    backends: report.webgpu.adapter ? ['wasm', 'webgpu'] : ['wasm'],
    threads,
    budgetMs: MEASURE_BUDGET_MS,
    softwareAdapter: report.webgpu.isFallbackAdapter,
  };
  await remote.premeasure(v.config, options);
}

/** Watches the store and warms an engine when the page is idle and one would help. */
export function startPrewarm(store: { getState(): Store; subscribe(fn: (s: Store) => void): () => void }): () => void {
  let scheduled = false;
  const check = () => {
    if (scheduled || currentTrainWorker()) return;
    if (prewarmThreads(store.getState()) === null) return;
    scheduled = true;
    const run = () => {
      scheduled = false;
      const s = store.getState();
      const threads = prewarmThreads(s);
      if (threads === null || currentTrainWorker()) return;
      const remote = prewarmTrainWorker(threads);
      // Best effort: a failure here leaves Start to time the backends itself.
      if (remote) premeasure(remote, s, threads).catch(() => undefined);
    };
    // After the page's own work (first render, backend detection): the worker competes for cores.
    if (typeof requestIdleCallback === 'function') requestIdleCallback(run, { timeout: 1000 });
    else setTimeout(run, 200);
  };
  check();
  return store.subscribe(check);
}
