/**
 * Rollout workers on node:worker_threads (CLI, tests, benchmarks). The entry is TypeScript, so
 * a small .mjs bootstrap registers tsx's loader in the worker thread first; this works from the
 * CLI (tsx), from plain node and under vitest alike.
 */
import { Worker } from 'node:worker_threads';
import type { Weights } from '../../core/models/types.ts';
import type { PoolModelSpec } from '../../core/rollout/stepPool.ts';
import { nodeEndpoint } from './nodeEndpoint.ts';
import { WorkerRolloutPool, type WorkerHandle } from './workerPool.ts';
import { DeathSignal } from '../workerDeath.ts';

export function spawnNodeWorker(): WorkerHandle {
  return spawnNodeThread(new URL('./worker.node.mjs', import.meta.url), 'rollout worker');
}

/** A worker thread on `entry` (an .mjs bootstrap) as a comlink endpoint that reports its death. */
export function spawnNodeThread(entry: URL, label: string, workerData?: unknown): WorkerHandle {
  const worker = new Worker(entry, { workerData });
  // Read now: after the thread exits, threadId reads −1.
  const name = `${label} ${worker.threadId}`;
  let terminating = false;
  const death = new DeathSignal();
  worker.once('error', (e) => death.fail(new Error(`${name} crashed: ${e instanceof Error ? e.message : String(e)}`, { cause: e })));
  worker.once('exit', (code) => death.fail(new Error(terminating ? `${name} was terminated` : `${name} exited with code ${code}`)));
  return {
    endpoint: nodeEndpoint(worker),
    death,
    name,
    async terminate() {
      terminating = true;
      await worker.terminate();
    },
  };
}

export function createNodeWorkerPool(o: { size: number; model: PoolModelSpec; weights: Weights; version?: number }): Promise<WorkerRolloutPool> {
  return WorkerRolloutPool.create({ ...o, spawn: spawnNodeWorker });
}
