/**
 * From a validated run configuration to a trainer: the one place that picks the trainer for an
 * env family and the rollout scheduling, so the CLI and the browser worker start runs the same
 * way. Worker pools are platform-specific, so the caller passes a factory for them.
 *
 *   grid env + MLP          → StepTrainer (sync, or async with bounded staleness; pools)
 *   tool env + transformer  → [imitation warm start →] TokenTrainer (GRPO family; KV-cached rollouts)
 */
import { makeEnv } from '../envs/index.ts';
import { initWeights } from '../models/types.ts';
import type { RunConfig } from '../presets/schema.ts';
import type { PoolFactory } from './asyncStepTrainer.ts';
import { mixSeed } from './common.ts';
import type { Engine } from './engine.ts';
import { DEFAULT_IMITATION, trainImitation, type ImitationReport } from './imitation.ts';
import { StepTrainer } from './stepTrainer.ts';
import { DEFAULT_TOKEN_TRAINER, makeTokenModel, TokenTrainer } from './tokenTrainer.ts';

export type Trainer = StepTrainer | TokenTrainer;

export interface CreateTrainerOptions {
  /** Builds a worker pool of `size` workers (CLI: node worker_threads; browser: Web Workers). */
  workerPool?: (size: number) => PoolFactory;
  /** Progress of the imitation warm start, one call per step. */
  onWarmStart?: (r: ImitationReport, totalSteps: number) => void;
}

export async function createTrainer(config: RunConfig, engine: Engine, options: CreateTrainerOptions = {}): Promise<Trainer> {
  const family = makeEnv(config.env.id, config.env.kwargs).spec.family;
  const { rollout, model } = config;
  if (family === 'grid' && model.kind === 'mlp') {
    if (rollout.workers > 0 && !options.workerPool) throw new Error(`rollout.workers = ${rollout.workers}, but this runner has no worker pool; use 0`);
    if (config.warmStart) throw new Error('warmStart is for tool envs (imitation of the expert\'s tool calls); grid runs train from scratch');
    return StepTrainer.create(
      {
        env: config.env,
        model,
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
  if (family === 'tool' && model.kind === 'transformer') {
    if (config.algo.algo === 'ppo') throw new Error('token policies have no value head yet: use grpo, drgrpo, rloo or reinforce for tool envs');
    if (rollout.mode === 'async' || rollout.workers > 0) throw new Error('tool envs train synchronously in the training thread for now: set rollout.mode "sync" and rollout.workers 0');
    const policy = makeTokenModel(model);
    let weights = initWeights(policy, mixSeed(config.seed, 0x1e1));
    let reference;
    if (config.warmStart) {
      const ws = config.warmStart;
      const r = await trainImitation(
        engine,
        policy,
        weights,
        { ...DEFAULT_IMITATION, env: config.env, steps: ws.steps, batch: ws.batch, lr: ws.lr, seed: mixSeed(config.seed, 0x1a1) },
        options.onWarmStart ? (rep) => options.onWarmStart!(rep, ws.steps) : undefined,
      );
      weights = r.weights;
      reference = weights;
    }
    return TokenTrainer.create(
      {
        ...DEFAULT_TOKEN_TRAINER,
        env: config.env,
        model,
        algo: config.algo,
        shaping: config.shaping,
        groups: rollout.groups,
        episodes: rollout.episodes,
        learnerBatch: rollout.learnerBatch,
        maxActionTokens: rollout.maxActionTokens,
        seed: config.seed,
      },
      engine,
      weights,
      config.algo.klCoef > 0 ? reference : undefined,
    );
  }
  throw new Error(`no trainer for ${family} envs with a ${model.kind} policy (env ${config.env.id}): grid envs take an mlp, tool envs a transformer`);
}
