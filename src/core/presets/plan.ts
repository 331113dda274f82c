/**
 * The plan of a run: what a run config resolves into, once, before anything trains. createTrainer
 * takes it (the CLI and the tab's worker build it; the server trains nothing), and every collector
 * reads its stage's `rollout` as it stands: no part of the trainer re-derives a config of its own.
 *
 *   stages    one per stage of a staged run, each the stage's fields merged over the run's and
 *             parsed once (parseRunStages keeps what validation resolved); a run without stages
 *             is one stage, the run itself
 *   rollout   per stage, the one typed rollout plan: the run's rollout fields flattened, the
 *             scheduling resolved (rollout.mode → maxStaleness; kvRows; the prompt budget) and
 *             the decoder's fixed settings filled in
 *
 * The shapes people write (JSON configs, URLs, presets) stay RunConfigInput; the plan is never
 * stored or sent: it is rebuilt from the config wherever a run starts.
 */
import type { RolloutBudgetConfig } from '../algos/budget.ts';
import type { AlgoConfig } from '../algos/config.ts';
import type { EnvKwargs } from '../envs/index.ts';
import type { ShapingConfig, ShapingSchedule } from '../reward/shaping.ts';
import type { TreeRolloutConfig } from '../rollout/treeRollout.ts';
import type { RunConfig } from './fields.ts';
import { parseRunStages, stageConfig } from './schema.ts';

/** Tokens per row in a token decoder's prefill call (observations are fed in chunks of this size; 1 = off). */
export const TOKEN_PREFILL_STEP = 8;
/** Sampling temperature of token rollouts: 1 = on-policy (the rollout/learner mismatch check needs 1). */
export const TOKEN_TEMPERATURE = 1;

/** When batches may be played relative to the learner, and which prompts they start from (the Scheduler's inputs). */
export interface SchedulingPlan {
  /** Most policy versions between sampling a position and training on it: 0 = sync, rollout.maxStaleness when async. */
  maxStaleness: number;
  /** Continuous token loop: decoder rows, the KV-cache budget in episodes (0 = one per episode of a batch). */
  kvRows: number;
  /** How an iteration's episodes are split over prompts (a prompt pool when `pool` > 0). */
  budget: RolloutBudgetConfig;
}

/** What a collector plays and trains with, for one stage: the one config every way of playing reads. */
export interface RolloutPlan<M = RunConfig['model']> {
  /** Env registry id and its kwargs. */
  env: { id: string; kwargs?: EnvKwargs };
  /** The policy: an mlp (grid step pool) or a transformer (token decoders). */
  model: M;
  algo: AlgoConfig;
  shaping: ShapingConfig;
  /** A progressive reward schedule (stages of shaping weights); null = the shaping's own weights throughout. */
  schedule: ShapingSchedule | null;
  /** Groups per iteration for group algorithms (each `algo.groupSize` episodes from one seed). */
  groups: number;
  /** Episodes per iteration for algorithms without groups (distinct seeds). */
  episodes: number;
  /** Rows (mlp) or sequences (transformer) per train step: the train graph's static batch. */
  learnerBatch: number;
  /** Master seed: weights, env seeds and sampling all derive from it. */
  seed: number;
  /** Token policies: most tokens per action (end-of-action included) before a forced end. */
  maxActionTokens: number;
  /** Token policies: tokens per row in a prefill call (TOKEN_PREFILL_STEP). */
  prefillStep: number;
  /** Token policies: sampling temperature of the rollouts (TOKEN_TEMPERATURE). */
  temperature: number;
  /** Token policies on tool envs: sample (and train) the policy masked to the env's action grammar. */
  constrained: boolean;
  /** Tree rollouts (the lockstep token loop; off by default). */
  tree: TreeRolloutConfig;
  scheduling: SchedulingPlan;
}

/** One stage of the plan: its run config, resolved once, and the rollout plan its collector reads. */
export interface StagePlan {
  /** The stage's name (a run without stages: its id). */
  name: string;
  /** Iterations this stage trains. */
  iterations: number;
  /** The stage's run config (no stages of its own): the stage's fields over the run's, parsed. */
  config: RunConfig;
  rollout: RolloutPlan;
}

/** A run config resolved once: what createTrainer builds a trainer from. */
export interface RunPlan {
  /** Tells a plan from a run config (createTrainer takes either; a config it resolves first). */
  readonly kind: 'plan';
  /** The run as parsed (its `stages` as written, merged in `stages` below). */
  config: RunConfig;
  /** Whether the run is a staged pipeline (config.stages non-empty). */
  staged: boolean;
  /** ≥ 1: each stage in order, or the run itself as its only stage. */
  stages: StagePlan[];
}

/** Whether `r` plays an mlp policy (the grid step pool). */
export function isMlpPlan(r: RolloutPlan): r is RolloutPlan<Extract<RunConfig['model'], { kind: 'mlp' }>> {
  return r.model.kind === 'mlp';
}

/** Whether `r` plays a transformer policy (the token decoders). */
export function isTransformerPlan(r: RolloutPlan): r is RolloutPlan<Extract<RunConfig['model'], { kind: 'transformer' }>> {
  return r.model.kind === 'transformer';
}

/** A stage config's rollout plan: its rollout fields flattened, the scheduling resolved. */
export function rolloutPlan(c: RunConfig): RolloutPlan {
  const r = c.rollout;
  return {
    env: c.env,
    model: c.model,
    algo: c.algo,
    shaping: c.shaping,
    schedule: c.schedule,
    groups: r.groups,
    episodes: r.episodes,
    learnerBatch: r.learnerBatch,
    seed: c.seed,
    maxActionTokens: r.maxActionTokens,
    prefillStep: TOKEN_PREFILL_STEP,
    temperature: TOKEN_TEMPERATURE,
    constrained: r.constrained,
    tree: r.tree,
    scheduling: { maxStaleness: r.mode === 'async' ? r.maxStaleness : 0, kvRows: r.kvRows, budget: r.budget },
  };
}

/** The plan of parsed run `config` whose stages resolved to `stageConfigs` (in order; [] without stages). */
export function planOf(config: RunConfig, stageConfigs: readonly RunConfig[]): RunPlan {
  if (stageConfigs.length !== config.stages.length) throw new Error(`planOf: the run has ${config.stages.length} stages, ${stageConfigs.length} resolved`);
  const stages = config.stages.length === 0 ? [{ name: config.id, iterations: config.iterations, config, rollout: rolloutPlan(config) }] : config.stages.map((st, k) => ({ name: st.name, iterations: st.iterations, config: stageConfigs[k], rollout: rolloutPlan(stageConfigs[k]) }));
  return { kind: 'plan', config, staged: config.stages.length > 0, stages };
}

/** Parses a run config as written into its plan: each stage is parsed once, by the validation itself. */
export function parseRunPlan(input: unknown): { ok: true; plan: RunPlan } | { ok: false; messages: string[] } {
  const r = parseRunStages(input);
  return r.ok ? { ok: true, plan: planOf(r.config, r.stages) } : r;
}

/**
 * The plan of a config parsed elsewhere (the tab validates in the page and sends the config to
 * its worker; tests and benches hold configs): each stage resolved here, once.
 */
export function resolvePlan(config: RunConfig): RunPlan {
  return planOf(config, config.stages.map((_, k) => stageConfig(config, k)));
}

/** `x` as a plan: a plan as it is, a run config resolved (once). */
export function asPlan(x: RunPlan | RunConfig): RunPlan {
  return 'kind' in x && x.kind === 'plan' ? x : resolvePlan(x as RunConfig);
}
