/**
 * From a run's plan (presets/plan.ts) to a trainer: the one place that picks the collector for an
 * env family and the rollout scheduling, so the CLI and the browser worker start runs the same
 * way. Worker pools are platform-specific, so the caller passes a factory for them.
 *
 * Every run gets the one Trainer (trainer.ts); what differs is its collector:
 *
 *   grid env + MLP          → the step pool (sync, or async with bounded staleness; pools)
 *   tool env + transformer  → [imitation warm start →] the continuous token loop for group algorithms
 *                             (continuous batching; tool latency waited on `clock`; sync =
 *                             staleness 0), the lockstep token loop for the others
 *   grid env + transformer  → [imitation warm start →] the lockstep token loop on the grid played as text
 *                             (envs/grid/textAdapter.ts), any algorithm incl. PPO
 *   any, with `stages`      → StagedTrainer over one of the above per stage (stagedTrainer.ts)
 */
import { makeEnv } from '../envs/index.ts';
import { familyOf } from '../envs/families.ts';
import { initWeights, type Weights } from '../models/types.ts';
import { warmStartEnv, type RunConfig } from '../presets/schema.ts';
import { asPlan, isMlpPlan, isTransformerPlan, type RunPlan, type StagePlan } from '../presets/plan.ts';
import type { RewardLab } from '../reward/userTerms.ts';
import { createStepTrainer, type PoolFactory } from './stepCollector.ts';
import { buildPoolModel, gridMlpSpec, SerialRolloutPool, vectorBox } from '../rollout/stepPool.ts';
import { mixSeed } from '../util/rng.ts';
import type { RunTrainer } from './api.ts';
import type { Engine } from '../engine/types.ts';
import { DEFAULT_IMITATION, trainImitation, type ImitationConfig, type ImitationReport } from './imitation.ts';
import { HeldOutEvalTrainer } from './heldOutEval.ts';
import { warmStartFileName, warmStartFromJson, warmStartKey } from './warmStartCache.ts';
import { createLockstepTrainer } from './lockstepCollector.ts';
import { makeTokenModel } from '../models/transformer.ts';
import { createContinuousTrainer } from './continuousCollector.ts';
import { needs } from './collect.ts';
import type { TokenSourceFactory } from '../rollout/tokenSource.ts';
import { GROUP_ALGOS } from '../algos/config.ts';
import { algoDescriptor } from '../algos/registry/index.ts';
import { RealClock, type Clock } from '../envs/clock.ts';
import type { Checkpoint } from '../runs/checkpoint.ts';
import { StagedTrainer, type StageStart } from './stagedTrainer.ts';
import { trainGridImitation } from './gridImitation.ts';
import { createTokenDistillTrainer } from './tokenDistill.ts';


export interface CreateTrainerOptions {
  /** Builds a worker pool of `size` workers (CLI: node worker_threads; browser: Web Workers). */
  workerPool?: (size: number) => PoolFactory;
  /** Progress of the imitation warm start, one call per step. */
  /** May return a promise: the warm start waits for it before its next step (pause). */
  onWarmStart?: (r: ImitationReport, totalSteps: number) => void | Promise<void>;
  /** Builds a token rollout worker (CLI: node worker_threads; browser: a Web Worker) for tool runs with rollout.workers 1. */
  tokenWorker?: TokenSourceFactory;
  /** Where async token runs wait for simulated tool latency (default: real time). */
  clock?: Clock;
  /**
   * User reward terms (the sandboxed scorer of `config.reward.code`, made by the runtime layer):
   * grid runs score replayed grid steps, token runs (tool envs, grids as text) one record per
   * env step (each tool call or answer turn).
   */
  rewardLab?: RewardLab;
  /**
   * The checkpoint the caller will restore() into this trainer. Token runs then skip the
   * imitation warm start (its result is replaced by the checkpoint's weights, and the KL
   * reference it would give comes from the checkpoint too), so a resume takes seconds, not the
   * warm start's minutes. Ignored for grid runs (they have no warm start).
   */
  resume?: Checkpoint;
  /**
   * Each sampled episode's end, `done` of `total` in its collect: how far a rollout is (the tab
   * shows the first one's). Reported by grid runs that play in this thread (rollout.workers 0);
   * other collectors report nothing yet.
   */
  onEpisode?: (done: number, total: number) => void;
  /**
   * Shipped warm starts (warmStartCache.ts): `read` returns the parsed JSON of a file by name, or
   * undefined when there is none; a token run whose warm start has a matching file loads it
   * instead of training. `onResult` hears whether a file was used (or why one found was not).
   */
  warmStartCache?: WarmStartCache;
}

export interface WarmStartCache {
  read: (fileName: string) => Promise<unknown>;
  onResult?: (r: { loaded: true; savedS: number } | { loaded: false; reason: string }) => void;
}

/**
 * The trainer of a run. `plan`: the run's plan (presets/plan.ts), every stage resolved once; a run
 * config is resolved into its plan first (tests and benches hold configs). Nothing here parses a
 * config again, and the collectors read their stage's rollout plan as it stands.
 */
export async function createTrainer(plan: RunPlan | RunConfig, engine: Engine, options: CreateTrainerOptions = {}): Promise<RunTrainer> {
  const p = asPlan(plan);
  const t = p.staged
    ? // Each stage is a single-stage run of its own plan; a resume starts in the checkpoint's stage.
      await StagedTrainer.create(p, (stage, start, lab) => createStageTrainer(stage, engine, { ...options, rewardLab: lab ?? undefined }, start), options.rewardLab ?? null, options.resume)
    : await createStageTrainer(p.stages[0], engine, options, {});
  // Held-out pass@1 / pass@k every heldOut.every iterations (before that iteration's update).
  return p.config.heldOut.every > 0 ? new HeldOutEvalTrainer(t, p.config.heldOut) : t;
}

/** The trainer of a run without stages (or of one stage), from `start`'s weights when given. */
async function createStageTrainer(stage: StagePlan, engine: Engine, options: CreateTrainerOptions, start: StageStart): Promise<RunTrainer> {
  const { config, rollout: plan } = stage;
  const probeSpec = makeEnv(config.env.id, config.env.kwargs).spec;
  const family = familyOf(probeSpec);
  const play = family.plays[config.model.kind];
  const { rollout, model } = config;
  // A vector observation has no text form for a token policy to read.
  if (model.kind !== 'mlp' && vectorBox(probeSpec)) throw new Error(`${config.env.id} has vector observations (a Box of floats): train it with an mlp policy (model.kind "mlp"), not a ${model.kind}`);
  if (play?.data === 'steps' && isMlpPlan(plan)) {
    if (rollout.workers > 0 && !options.workerPool) throw new Error(`rollout.workers = ${rollout.workers}, but this runner has no worker pool; use 0`);
    // The warm start is deterministic (expert episodes from the run's seed), so a resumed run
    // plays it again: its result is the KL reference the checkpoint does not carry for grids.
    const initial = start.initial ?? (config.warmStart ? await gridWarmStart(config, engine, options.onWarmStart) : undefined);
    return createStepTrainer(
      start.teacher ? { ...plan, teacher: start.teacher } : plan,
      engine,
      rollout.workers > 0 ? options.workerPool!(rollout.workers) : options.onEpisode ? async (m, w, e) => new SerialRolloutPool({ engine: e, model: m, weights: w, onEpisode: options.onEpisode }) : undefined,
      initial,
      options.rewardLab,
    );
  }
  if (play?.data === 'tokens' && isTransformerPlan(plan)) {
    if (play.workers.max === 0 && rollout.workers > 0) throw new Error('grid envs played as text decode in the training thread: set rollout.workers 0');
    if (rollout.workers > 0 && !options.tokenWorker) throw new Error(`rollout.workers = ${rollout.workers}, but this runner has no token rollout worker; use 0`);
    if (play.syncOnly !== null && rollout.mode === 'async') throw new Error('grid envs played as text train synchronously: set rollout.mode "sync"');
    // A token checkpoint carries every weight the warm start would give (learner, reference).
    const skipWarmStart = options.resume !== undefined && options.resume.trainer !== 'step';
    if (start.tokenTeacher) return createTokenDistillTrainer(config, start.tokenTeacher, engine, options.rewardLab);
    // A later stage continues the stage before it: those weights are also its KL reference.
    const { weights, reference } = start.initial
      ? { weights: start.initial, reference: start.initial }
      : await initialTokenWeights(skipWarmStart ? { ...config, warmStart: null } : config, engine, options.onWarmStart, options.warmStartCache);
    const ref = config.algo.klCoef > 0 ? reference : undefined;
    // Group algorithms run on continuous batching, sync being staleness 0 (as for grids): both
    // modes then wait for tool latency the same way, so a sync/async comparison is fair. ReMax
    // plays its greedy baseline episodes by the version that sampled the batch: lockstep.
    // Tree rollouts replay a prefix and branch in the lockstep loop.
    if (play.continuous && GROUP_ALGOS.includes(config.algo.algo) && !needs(config.algo.algo, 'greedy-baseline') && !rollout.tree.enabled) {
      const worker = rollout.workers > 0 ? options.tokenWorker : undefined;
      return createContinuousTrainer(plan, engine, options.clock ?? new RealClock(), weights, ref, worker, options.rewardLab);
    }
    return createLockstepTrainer(plan, engine, weights, ref, options.rewardLab);
  }
  throw new Error(`no trainer for ${family.name} envs with a ${model.kind} policy (env ${config.env.id}): grid envs take an mlp or a transformer, tool envs a transformer`);
}

/**
 * A grid MLP's warm start: behaviour cloning of the env's expert (trainer/gridImitation.ts) from
 * the weights the step trainer would start from; they become its initial weights and KL reference.
 */
async function gridWarmStart(config: RunConfig, engine: Engine, onWarmStart?: CreateTrainerOptions['onWarmStart']): Promise<Weights> {
  const ws = config.warmStart!;
  if (config.model.kind !== 'mlp') throw new Error('gridWarmStart: an mlp policy');
  const model = buildPoolModel(gridMlpSpec(config.env, { hidden: config.model.hidden, activation: config.model.activation, valueHead: algoDescriptor(config.algo.algo).critic }, config.model.agents ?? 'shared'));
  const r = await trainGridImitation(
    engine,
    model,
    initWeights(model, mixSeed(config.seed, 0x1e1)),
    { env: warmStartEnv(config), steps: ws.steps, batch: ws.batch, rows: config.rollout.learnerBatch, lr: ws.lr, seed: mixSeed(config.seed, 0x1a1) },
    onWarmStart ? (rep) => onWarmStart(rep, ws.steps) : undefined,
  );
  return r.weights;
}

/**
 * The imitation warm start a token run's config asks for (null without one): the expert plays
 * the run's env with `warmStart.envKwargs` merged over its kwargs, from a seed stream of the run's seed.
 */
export function tokenImitationConfig(config: RunConfig): ImitationConfig | null {
  const ws = config.warmStart;
  if (!ws) return null;
  return { ...DEFAULT_IMITATION, env: warmStartEnv(config), steps: ws.steps, batch: ws.batch, lr: ws.lr, observationWeight: ws.observationWeight, seed: mixSeed(config.seed, 0x1a1) };
}

/**
 * A token policy's starting weights: a fresh init, or the imitation warm start when the config
 * asks for one (then also the KL reference; undefined without a warm start = the initial weights).
 */
export async function initialTokenWeights(
  config: RunConfig,
  engine: Engine,
  onWarmStart?: (r: ImitationReport, totalSteps: number) => void | Promise<void>,
  cache?: WarmStartCache,
): Promise<{ weights: Weights; reference: Weights | undefined }> {
  if (config.model.kind !== 'transformer') throw new Error(`initialTokenWeights: a token policy needs a transformer model (got ${config.model.kind})`);
  const policy = makeTokenModel(config.model);
  const weights = initWeights(policy, mixSeed(config.seed, 0x1e1));
  if (!config.warmStart) return { weights, reference: undefined };
  const ws = config.warmStart;
  const key = cache ? warmStartKey(config) : null;
  if (cache && key !== null) {
    const value = await cache.read(warmStartFileName(key));
    if (value !== undefined) {
      const r = warmStartFromJson(value, key, policy);
      if (r.ok) {
        cache.onResult?.({ loaded: true, savedS: r.file.wallS });
        // One report at the last step: the page shows the warm start done, with its final loss.
        await onWarmStart?.({ step: ws.steps - 1, ceLoss: r.file.ceLoss, targetProb: r.file.targetProb, wallS: 0 }, ws.steps);
        return { weights: r.weights, reference: r.weights };
      }
      cache.onResult?.({ loaded: false, reason: r.reason });
    }
  }
  const r = await trainImitation(engine, policy, weights, tokenImitationConfig(config)!, onWarmStart ? (rep) => onWarmStart(rep, ws.steps) : undefined);
  return { weights: r.weights, reference: r.weights };
}
