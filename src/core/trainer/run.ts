/**
 * From a validated run configuration to a trainer: the one place that picks the trainer for an
 * env family and the rollout scheduling, so the CLI and the browser worker start runs the same
 * way. Worker pools are platform-specific, so the caller passes a factory for them.
 */
import { makeEnv } from '../envs/index.ts';
import type { RunConfig } from '../presets/schema.ts';
import type { PoolFactory } from './asyncStepTrainer.ts';
import type { Engine } from './engine.ts';
import { StepTrainer } from './stepTrainer.ts';

export type Trainer = StepTrainer;

export interface CreateTrainerOptions {
  /** Builds a worker pool of `size` workers (CLI: node worker_threads; browser: Web Workers). */
  workerPool?: (size: number) => PoolFactory;
}

export async function createTrainer(config: RunConfig, engine: Engine, options: CreateTrainerOptions = {}): Promise<Trainer> {
  const family = makeEnv(config.env.id, config.env.kwargs).spec.family;
  const { rollout } = config;
  if (family === 'grid' && config.model.kind === 'mlp') {
    if (rollout.workers > 0 && !options.workerPool) throw new Error(`rollout.workers = ${rollout.workers}, but this runner has no worker pool; use 0`);
    return StepTrainer.create(
      {
        env: config.env,
        model: config.model,
        algo: config.algo,
        shaping: config.shaping,
        schedule: config.schedule,
        groups: rollout.groups,
        episodes: rollout.episodes,
        learnerBatch: rollout.learnerBatch,
        seed: config.seed,
      },
      engine,
      {
        maxStaleness: rollout.mode === 'async' ? rollout.maxStaleness : 0,
        pool: rollout.workers > 0 ? options.workerPool!(rollout.workers) : undefined,
      },
    );
  }
  throw new Error(`no trainer yet for ${family} envs with a ${config.model.kind} policy (env ${config.env.id})`);
}
