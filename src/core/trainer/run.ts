/**
 * From a validated run configuration to a trainer: the one place that picks the trainer for an
 * env family, so the CLI and the browser worker start runs the same way.
 */
import { makeEnv } from '../envs/index.ts';
import type { RunConfig } from '../presets/schema.ts';
import type { Engine } from './engine.ts';
import { StepTrainer } from './stepTrainer.ts';

export type Trainer = StepTrainer;

export async function createTrainer(config: RunConfig, engine: Engine): Promise<Trainer> {
  const family = makeEnv(config.env.id, config.env.kwargs).spec.family;
  if (family === 'grid' && config.model.kind === 'mlp') {
    return StepTrainer.create(
      {
        env: config.env,
        model: config.model,
        algo: config.algo,
        shaping: config.shaping,
        schedule: config.schedule,
        groups: config.rollout.groups,
        episodes: config.rollout.episodes,
        learnerBatch: config.rollout.learnerBatch,
        seed: config.seed,
      },
      engine,
    );
  }
  throw new Error(`no trainer yet for ${family} envs with a ${config.model.kind} policy (env ${config.env.id})`);
}
