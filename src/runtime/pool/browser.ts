/** Rollout workers as module Web Workers (Vite bundles the entry from this `new URL` pattern). */
import type { Weights } from '../../core/models/types.ts';
import type { PoolModelSpec } from '../../core/rollout/stepPool.ts';
import { WorkerRolloutPool, type WorkerHandle } from './workerPool.ts';
import { DeathSignal } from '../workerDeath.ts';

let spawned = 0;

export function spawnBrowserWorker(): WorkerHandle {
  const name = `rollout worker ${++spawned}`;
  const worker = new Worker(new URL('./worker.browser.ts', import.meta.url), { type: 'module', name });
  let terminating = false;
  const death = new DeathSignal();
  worker.addEventListener('error', (e) => death.fail(new Error(`${name} crashed: ${e.message || 'script error (see the console)'}`)));
  worker.addEventListener('messageerror', () => death.fail(new Error(`${name}: a message could not be deserialized`)));
  return {
    endpoint: worker,
    death,
    name,
    async terminate() {
      if (terminating) return;
      terminating = true;
      worker.terminate();
      death.fail(new Error(`${name} was terminated`));
    },
  };
}

/** Default size: one worker per core but one (the learner and the UI need a thread). */
export function defaultBrowserPoolSize(): number {
  return Math.max(1, (navigator.hardwareConcurrency || 2) - 1);
}

export function createBrowserWorkerPool(o: { size?: number; model: PoolModelSpec; weights: Weights; version?: number; onRestart?: (message: string) => void }): Promise<WorkerRolloutPool> {
  return WorkerRolloutPool.create({ ...o, size: o.size ?? defaultBrowserPoolSize(), spawn: spawnBrowserWorker });
}
