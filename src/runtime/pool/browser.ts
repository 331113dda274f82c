/** Rollout workers as module Web Workers (Vite bundles the entry from this `new URL` pattern). */
import type { Weights } from '../../core/models/types.ts';
import type { PoolModelSpec } from '../../core/trainer/pool.ts';
import { WorkerRolloutPool, type WorkerHandle } from './workerPool.ts';

export function spawnBrowserWorker(): WorkerHandle {
  const worker = new Worker(new URL('./worker.browser.ts', import.meta.url), { type: 'module', name: 'rollout' });
  let terminating = false;
  let fail: (e: Error) => void = () => undefined;
  const died = new Promise<never>((_, reject) => (fail = reject));
  worker.addEventListener('error', (e) => fail(new Error(`rollout worker crashed: ${e.message || 'script error (see the console)'}`)));
  worker.addEventListener('messageerror', () => fail(new Error('rollout worker: a message could not be deserialized')));
  return {
    endpoint: worker,
    died,
    async terminate() {
      if (terminating) return;
      terminating = true;
      worker.terminate();
      fail(new Error('rollout worker was terminated (pool closed)'));
    },
  };
}

/** Default size: one worker per core but one (the learner and the UI need a thread). */
export function defaultBrowserPoolSize(): number {
  return Math.max(1, (navigator.hardwareConcurrency || 2) - 1);
}

export function createBrowserWorkerPool(o: { size?: number; model: PoolModelSpec; weights: Weights; version?: number }): Promise<WorkerRolloutPool> {
  return WorkerRolloutPool.create({ ...o, size: o.size ?? defaultBrowserPoolSize(), spawn: spawnBrowserWorker });
}
