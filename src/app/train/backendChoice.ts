/**
 * Which backend a run starts on, and with how many WASM threads: the forced one, or for 'auto'
 * the remembered choice for this device and model, else a fresh timing in the run's own worker.
 */
import type { Remote } from 'comlink';
import type { StoreApi } from 'zustand';
import type { TrainWorkerApi } from '../../runtime/trainWorker/worker.ts';
import type { RunConfig } from '../../core/presets/schema.ts';
import { learnerThreads } from '../../core/engine/threads.ts';
import { deviceKey } from '../../runtime/backend.ts';
import type { WebBackend } from '../../runtime/engine/web.ts';
import { recallChoice, rememberChoice } from '../state/engineCache.ts';
import type { Store } from '../storeTypes.ts';
import type { DraftConfig } from './fields.ts';

/** Wall-clock budget for timing the backends at a run's first start on a device, ms. */
export const MEASURE_BUDGET_MS = 1500;
/**
 * Budget when the person asks to measure again, ms: nobody is waiting to train, so a GPU whose
 * first shader compiles outlast the start budget still gets timed.
 */
export const MEASURE_AGAIN_BUDGET_MS = 10_000;

type Get = StoreApi<Store>['getState'];
type Set = StoreApi<Store>['setState'];

/** WASM threads for a run (fixed for its worker's life). */
export function threadsFor(get: Get, config: RunConfig): number {
  const b = get().backend;
  if (b.status !== 'ready') return 1;
  if (b.threads !== null) return b.threads;
  return learnerThreads({ cores: b.report.hardwareConcurrency, isolated: b.report.wasm.crossOriginIsolated, rolloutWorkers: config.rollout.workers });
}

/**
 * The backend a run starts on (≤ 1.5 s of timing for 'auto' on a new device and model, see
 * measureWebBackends). Null when the run was reset or restarted meanwhile (`isCurrent`).
 */
export async function resolveBackend(
  get: Get,
  set: Set,
  worker: Remote<TrainWorkerApi>,
  config: RunConfig,
  requested: DraftConfig['backend'],
  threads: number,
  isCurrent: () => boolean,
  fresh = false,
  budgetMs = MEASURE_BUDGET_MS,
): Promise<WebBackend | null> {
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
}
