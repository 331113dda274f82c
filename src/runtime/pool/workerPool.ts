/**
 * The worker rollout pool: W workers, each a SerialRolloutPool with its own envs and its own
 * PolicyRunner (ORT web WASM, one thread), running batched inference for its share of the
 * slots. Platform-free: `spawn` supplies the worker (node.ts: worker_threads; browser.ts: Web
 * Worker). A request's slots are split into W contiguous chunks; each slot keeps its global
 * index for its sampling RNG, so the episodes equal the serial pool's (pool.test.ts).
 *
 * Failure: every call is guarded by the worker's death signal and a deadline (guardCall), so an
 * uncaught error, an exit or a hang rejects the caller with the cause instead of leaving it
 * pending forever. While a call is in flight a watchdog pings the worker every second (a rollout
 * worker yields to its event loop between lockstep steps, so a live one answers in
 * milliseconds); one that leaves a ping unanswered for `stallMs` (it closed itself, which fires
 * no event in a browser, or spins in a loop) counts as dead and is terminated. A worker that
 * dies is restarted (`restarts` times per slot, default once) and its part of the batch
 * collected again on the new worker (same seeds and slot indices, so the same episodes); the
 * other workers' parts are kept. Past that the run stops with the worker's own message.
 */
import { wrap, type Endpoint, type Remote } from 'comlink';
import { DeathSignal, guardCall } from '../workerDeath.ts';
import { seconds, Watchdog } from '../liveness.ts';
import type { Weights } from '../../core/models/types.ts';
import type { CollectRequest, CollectResult, PoolModelSpec, RolloutPool } from '../../core/rollout/stepPool.ts';
import type { RolloutWorkerApi } from './workerApi.ts';
import { unpackInfos, type WireResult } from './wire.ts';

export interface WorkerHandle {
  endpoint: Endpoint;
  /** Fails when the worker dies (uncaught error, exit, termination). */
  death: DeathSignal;
  /** For messages, e.g. 'rollout worker 3' (a Node thread id is read at spawn: it reads −1 after exit). */
  name: string;
  terminate(): Promise<void>;
}

/** Default for WorkerPoolOptions.callDeadlineMs: far above any batch (a grid batch takes ≲ 1 s). */
export const DEFAULT_CALL_DEADLINE_MS = 120_000;
/**
 * Default for WorkerPoolOptions.stallMs: a busy rollout worker answers a ping between two
 * lockstep steps (one inference call and one env step per slot: milliseconds, a few hundred at
 * 6× CPU throttling), so 15 s of silence is a closed or stuck worker, not a slow one.
 */
export const DEFAULT_STALL_MS = 15_000;

export interface WorkerPoolOptions {
  /** Number of workers (≥ 1); on a machine with C cores, C − 1 leaves one for the learner. */
  size: number;
  spawn: () => WorkerHandle;
  model: PoolModelSpec;
  weights: Weights;
  /** Version of `weights` (default 0). */
  version?: number;
  /** Ms a worker may take to answer one call before it counts as hung and is replaced (default 120 000). */
  callDeadlineMs?: number;
  /**
   * Ms a new worker may take to start and load the runtime and model (its first call), at least
   * `callDeadlineMs` (default: the larger of that and 60 000). Loading onnxruntime's WASM takes
   * seconds on a busy machine, far longer than a batch, so a tight batch deadline must not
   * condemn a worker that is still starting.
   */
  initDeadlineMs?: number;
  /** Restarts per worker slot before a failure stops the run (default 1). */
  restarts?: number;
  /** Ms a worker with a call in flight may leave a ping unanswered before it counts as dead (default DEFAULT_STALL_MS). */
  stallMs?: number;
  /** Ms between pings while a call is in flight (default 1000). */
  pingEveryMs?: number;
  /** Hears each replacement of a failed worker (the run goes on), e.g. to tell the person. */
  onRestart?: (message: string) => void;
}

interface Slot {
  handle: WorkerHandle;
  api: Remote<RolloutWorkerApi>;
  /** Times this slot's worker was replaced. */
  restarts: number;
  /** Calls in flight that the watchdog watches. */
  busy: number;
  /** Pings the worker while `busy` > 0. */
  dog: Watchdog | null;
}

export class WorkerRolloutPool implements RolloutPool {
  private closed = false;
  private currentVersion: number;
  private weights: Weights;
  private readonly deadlineMs: number;
  private readonly initDeadlineMs: number;
  private readonly maxRestarts: number;

  private constructor(
    private readonly workers: Slot[],
    private readonly o: WorkerPoolOptions,
  ) {
    this.currentVersion = o.version ?? 0;
    this.weights = o.weights;
    this.deadlineMs = o.callDeadlineMs ?? DEFAULT_CALL_DEADLINE_MS;
    this.initDeadlineMs = Math.max(this.deadlineMs, o.initDeadlineMs ?? 60_000);
    this.maxRestarts = o.restarts ?? 1;
  }

  static async create(o: WorkerPoolOptions): Promise<WorkerRolloutPool> {
    if (!(Number.isInteger(o.size) && o.size >= 1)) throw new RangeError(`worker pool: size must be an integer ≥ 1, got ${o.size}`);
    const workers: Slot[] = [];
    for (let i = 0; i < o.size; i++) workers.push(WorkerRolloutPool.slot(o.spawn(), 0));
    const pool = new WorkerRolloutPool(workers, o);
    try {
      await Promise.all(workers.map((w) => pool.init(w)));
    } catch (e) {
      await pool.close();
      throw e;
    }
    return pool;
  }

  private static slot(handle: WorkerHandle, restarts: number): Slot {
    return { handle, api: wrap<RolloutWorkerApi>(handle.endpoint), restarts, busy: 0, dog: null };
  }

  private init(w: Slot): Promise<void> {
    // Not watched: loading the runtime and building the session is one long synchronous stretch; its deadline covers it.
    return this.call(w, 'init', (api) => api.init({ model: this.o.model, weights: this.weights, version: this.currentVersion }), this.initDeadlineMs, false);
  }

  /** Worker replacements so far, over all slots. */
  get restartCount(): number {
    return this.workers.reduce((s, w) => s + w.restarts, 0);
  }

  /** Replaces slot `i`'s dead worker with a fresh one holding the current weights. */
  private async restart(i: number, cause: Error): Promise<void> {
    const old = this.workers[i];
    if (old.restarts >= this.maxRestarts) {
      throw new Error(`${cause.message} (it had been restarted ${old.restarts} time${old.restarts === 1 ? '' : 's'}; the run stops)`, { cause });
    }
    old.dog?.stop();
    await old.handle.terminate().catch(() => undefined);
    const fresh = WorkerRolloutPool.slot(this.o.spawn(), old.restarts + 1);
    this.workers[i] = fresh;
    await this.init(fresh);
    this.o.onRestart?.(`${cause.message}; ${fresh.handle.name} took its place and collects its part again`);
  }

  get size(): number {
    return this.workers.length;
  }

  get version(): number {
    return this.currentVersion;
  }

  private call<T>(w: Slot, what: string, f: (api: Remote<RolloutWorkerApi>) => Promise<T>, deadlineMs = this.deadlineMs, watch = true): Promise<T> {
    if (this.closed) return Promise.reject(new Error('rollout pool is closed'));
    const guarded = guardCall(f(w.api), w.handle.death, {
      deadlineMs,
      what: `${w.handle.name}: ${what}`,
      onTimeout: (e) => {
        w.handle.death.fail(e);
        void w.handle.terminate();
      },
    });
    if (!watch || w.handle.death.reason) return guarded;
    this.watch(w, what);
    return guarded.finally(() => {
      if (--w.busy === 0) {
        w.dog?.stop();
        w.dog = null;
      }
    });
  }

  /** Starts pinging `w` (if not yet) for a call in flight. */
  private watch(w: Slot, what: string): void {
    w.busy++;
    if (w.dog) return;
    const limit = this.o.stallMs ?? DEFAULT_STALL_MS;
    w.dog = new Watchdog({
      everyMs: this.o.pingEveryMs ?? 1000,
      limitMs: () => limit,
      probe: () => w.api.ping(),
      onSilent: (silentMs) => {
        w.dog = null;
        if (w.handle.death.reason || this.closed) return;
        w.handle.death.fail(new Error(`${w.handle.name} stopped answering for ${seconds(silentMs)} during ${what} (closed, stuck in a loop or out of memory)`));
        void w.handle.terminate();
      },
    });
  }

  async setWeights(weights: Weights, version: number): Promise<void> {
    if (this.closed) throw new Error('rollout pool is closed');
    if (version === this.currentVersion) return;
    this.currentVersion = version;
    this.weights = weights;
    // Structured clone per worker (≈ 0.3 MB for a 64×64 MLP): cheap next to a batch. A dead
    // worker is skipped: its replacement starts from these weights at the next collect.
    await Promise.all(
      this.workers.map((w) =>
        w.handle.death.reason
          ? undefined
          : this.call(w, 'setWeights', (api) => api.setWeights(weights, version)).catch((e: unknown) => {
              if (!w.handle.death.reason) throw e;
            }),
      ),
    );
  }

  /** Slot `i`'s part of a batch; a worker that dies meanwhile is replaced and the part collected again. */
  private async collectPart(i: number, sub: CollectRequest): Promise<WireResult> {
    for (;;) {
      const w = this.workers[i];
      try {
        if (w.handle.death.reason) throw w.handle.death.reason;
        return await this.call(w, 'collect', (api) => api.collect(sub));
      } catch (e) {
        // An error the worker reported (an env that threw) is the batch's, not the worker's: a
        // new worker would hit it again.
        if (this.closed || !w.handle.death.reason) throw e;
        await this.restart(i, w.handle.death.reason);
      }
    }
  }

  async collect(req: CollectRequest): Promise<CollectResult> {
    if (this.closed) throw new Error('rollout pool is closed');
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
      parts.push(this.collectPart(w, sub));
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
    for (const w of this.workers) w.dog?.stop();
    // Release sessions politely (bounded wait: a wedged worker is terminated anyway).
    await Promise.all(this.workers.map((w) => guardCall(w.api.close(), w.handle.death, { deadlineMs: 2000 }).catch(() => undefined)));
    this.closed = true;
    await Promise.all(this.workers.map((w) => w.handle.terminate()));
  }
}
