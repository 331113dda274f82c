/**
 * What a rollout worker exposes over comlink (squoosh style: the worker entry calls
 * `expose(createWorkerApi(...))`, the main thread does `import type { RolloutWorkerApi }`).
 * The worker is a SerialRolloutPool in another thread: the same rollout code, so the worker
 * pool and the serial pool cannot drift apart.
 */
import { transfer } from 'comlink';
import '../../core/envs/index.ts';
import type { Weights } from '../../core/models/types.ts';
import type { Engine } from '../../core/engine/types.ts';
import { episodeBuffers, SerialRolloutPool, type CollectRequest, type PoolModelSpec } from '../../core/rollout/stepPool.ts';
import { packInfos, type WireResult } from './wire.ts';
import { yieldToEvents } from './yield.ts';
import { ensureCodeEnvs } from '../codeEnv/index.ts';

export interface WorkerInit {
  model: PoolModelSpec;
  weights: Weights;
  version: number;
}

export function createWorkerApi(loadEngine: () => Promise<Engine>) {
  let pool: SerialRolloutPool | null = null;
  const need = (): SerialRolloutPool => {
    if (!pool) throw new Error('rollout worker: init() was not called (or the worker was closed)');
    return pool;
  };
  return {
    /** The pool's watchdog pings while a call is in flight: answered between two lockstep steps. */
    ping(): true {
      return true;
    },
    async init(o: WorkerInit): Promise<void> {
      if (pool) throw new Error('rollout worker: init() called twice');
      pool = new SerialRolloutPool({ engine: await loadEngine(), model: o.model, weights: o.weights, version: o.version, betweenSteps: yieldToEvents });
    },
    /** Synchronous on purpose: it lands between two steps of a batch in flight. False = already had it. */
    setWeights(weights: Weights, version: number): boolean {
      return need().applyWeights(weights, version);
    },
    async collect(req: CollectRequest): Promise<WireResult> {
      // A code env's sandbox loads in this thread the first time one is asked for.
      await ensureCodeEnvs(req.env.id);
      const r = await need().collect(req);
      // Episode arrays move to the main thread (no second copy); see packInfos for the infos.
      return transfer({ ...r, episodes: r.episodes.map(packInfos) }, episodeBuffers(r.episodes));
    },
    async close(): Promise<void> {
      const p = pool;
      pool = null;
      await p?.close();
    },
  };
}

export type RolloutWorkerApi = ReturnType<typeof createWorkerApi>;

