/**
 * The step-env (grid + MLP) trainer. Synchronous training is the bounded-staleness trainer
 * (asyncStepTrainer.ts) with staleness 0 on an in-thread pool: collect a batch with the current
 * version, train on it, sync, repeat. One implementation, so sync and async cannot drift apart.
 */
import type { Weights } from '../models/types.ts';
import type { Engine } from './engine.ts';
import { AsyncStepTrainer, serialPoolFactory, type PoolFactory } from './asyncStepTrainer.ts';
import type { StepTrainerConfig } from './common.ts';

export { DEFAULT_STEP_TRAINER, distinctRatio, mixSeed } from './common.ts';
export type { IterationReport, LiveHyper, MlpModelConfig, StepTrainerConfig } from './common.ts';

export type StepTrainer = AsyncStepTrainer;

export const StepTrainer = {
  /** A synchronous trainer (staleness 0); `maxStaleness` > 0 overlaps rollouts with updates. */
  create(config: StepTrainerConfig, engine: Engine, options: { maxStaleness?: number; pool?: PoolFactory; initial?: Weights } = {}): Promise<StepTrainer> {
    return AsyncStepTrainer.create({ ...config, scheduling: { maxStaleness: options.maxStaleness ?? 0 } }, engine, options.pool ?? serialPoolFactory, options.initial);
  },
};
