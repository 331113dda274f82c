/**
 * The worker rollout pool: W workers, each a SerialRolloutPool with its own envs and its own
 * PolicyRunner (ORT web WASM, one thread), running batched inference for its share of the
 * slots. Platform-free: `spawn` supplies the worker (node.ts: worker_threads; browser.ts: Web
 * Worker). A request's slots are split into W contiguous chunks; each slot keeps its global
 * index for its sampling RNG, so the episodes equal the serial pool's (pool.test.ts).
 *
 * Failure: every call races the worker's death, so an uncaught error or an exit in a worker
 * rejects the caller's promise with the cause instead of leaving it pending forever.
 */
import { wrap, type Endpoint, type Remote } from 'comlink';
import type { Weights } from '../../core/models/types.ts';
import type { CollectRequest, CollectResult, PoolModelSpec, RolloutPool } from '../../core/trainer/pool.ts';
import type { RolloutWorkerApi } from './workerApi.ts';
import { unpackInfos, type WireResult } from './wire.ts';

export interface WorkerHandle {
  endpoint: Endpoint;
  /** Rejects when the worker dies (uncaught error, exit); never resolves. */
  died: Promise<never>;
  terminate(): Promise<void>;
}

export interface WorkerPoolOptions {
  /** Number of workers (≥ 1); on a machine with C cores, C − 1 leaves one for the learner. */
  size: number;
  spawn: () => WorkerHandle;
  model: PoolModelSpec;
  weights: Weights;
  /** Version of `weights` (default 0). */
  version?: number;
}

interface Slot {
  handle: WorkerHandle;
  api: Remote<RolloutWorkerApi>;
}

export class WorkerRolloutPool implements RolloutPool {
  private closed = false;
  private currentVersion: number;

  private constructor(
    private readonly workers: Slot[],
    version: number,
  ) {
    this.currentVersion = version;
  }

  static async create(o: WorkerPoolOptions): Promise<WorkerRolloutPool> {
    if (!(Number.isInteger(o.size) && o.size >= 1)) throw new RangeError(`worker pool: size must be an integer ≥ 1, got ${o.size}`);
    const workers: Slot[] = [];
    for (let i = 0; i < o.size; i++) {
      const handle = o.spawn();
      // The race below observes `died`; this keeps an unobserved death from being "unhandled".
      handle.died.catch(() => undefined);
      workers.push({ handle, api: wrap<RolloutWorkerApi>(handle.endpoint) });
    }
    const pool = new WorkerRolloutPool(workers, o.version ?? 0);
    try {
      await Promise.all(workers.map((w) => pool.call(w, (api) => api.init({ model: o.model, weights: o.weights, version: o.version ?? 0 }))));
    } catch (e) {
      await pool.close();
      throw e;
    }
    return pool;
  }

  get size(): number {
    return this.workers.length;
  }

  get version(): number {
    return this.currentVersion;
  }

  private call<T>(w: Slot, f: (api: Remote<RolloutWorkerApi>) => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new Error('rollout pool is closed'));
    return Promise.race([f(w.api), w.handle.died]);
  }

  async setWeights(weights: Weights, version: number): Promise<void> {
    if (this.closed) throw new Error('rollout pool is closed');
    if (version === this.currentVersion) return;
    this.currentVersion = version;
    // Structured clone per worker (≈ 0.3 MB for a 64×64 MLP): cheap next to a batch.
    await Promise.all(this.workers.map((w) => this.call(w, (api) => api.setWeights(weights, version))));
  }

  async collect(req: CollectRequest): Promise<CollectResult> {
    const n = req.seeds.length;
    if (req.groups.length !== n) throw new RangeError(`collect: ${n} seeds but ${req.groups.length} groups`);
    const W = this.workers.length;
    const chunk = Math.ceil(n / W);
    const base = req.slotOffset ?? 0;
    const parts: Promise<WireResult>[] = [];
    for (let w = 0; w < W && w * chunk < n; w++) {
      const lo = w * chunk;
      const hi = Math.min(n, lo + chunk);
      const sub: CollectRequest = { ...req, seeds: req.seeds.slice(lo, hi), groups: req.groups.slice(lo, hi), slotOffset: base + lo };
      parts.push(this.call(this.workers[w], (api) => api.collect(sub)));
    }
    const results = await Promise.all(parts);
    return {
      episodes: results.flatMap((r) => r.episodes.map(unpackInfos)),
      envSteps: results.reduce((s, r) => s + r.envSteps, 0),
      inferenceCalls: results.reduce((s, r) => s + r.inferenceCalls, 0),
      busyS: Math.max(0, ...results.map((r) => r.busyS)),
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    // Release sessions politely (bounded wait: a wedged worker is terminated anyway).
    await Promise.all(
      this.workers.map((w) =>
        Promise.race([w.api.close(), w.handle.died, new Promise((r) => setTimeout(r, 2000))]).catch(() => undefined),
      ),
    );
    this.closed = true;
    await Promise.all(this.workers.map((w) => w.handle.terminate()));
  }
}
