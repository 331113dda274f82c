/** The grid (step-env + MLP) trainer's view of the rollout plan, and its defaults for tests and benches. */
import type { Weights } from '../models/types.ts';
import { DEFAULT_SHAPING, type ShapingSchedule } from '../reward/shaping.ts';
import type { RolloutPlan, SchedulingPlan } from '../presets/plan.ts';

export interface MlpModelConfig {
  kind: 'mlp';
  /** Hidden layer widths, input side first. */
  hidden: number[];
  /** Hidden nonlinearity: tanh is smoother for small policy nets (CleanRL's choice). */
  activation: 'tanh' | 'relu';
  /** Multi-agent envs: one network for every agent ('shared', default) or one per agent ('separate', two towers). */
  agents?: 'shared' | 'separate';
}

/**
 * What the grid step collector reads of its stage's rollout plan (presets/plan.ts): a view of the
 * one plan type, not a config of its own; createTrainer passes the plan's rollout as it stands.
 */
export type StepTrainerConfig = Pick<RolloutPlan<MlpModelConfig>, 'env' | 'model' | 'algo' | 'shaping' | 'groups' | 'episodes' | 'learnerBatch' | 'seed'> & {
  /** Progressive shaping: stages with their own weights (dense shaping early, outcome late); absent/null = fixed weights. */
  schedule?: ShapingSchedule | null;
  /** Rollout scheduling (the staleness bound); absent = synchronous. */
  scheduling?: Pick<SchedulingPlan, 'maxStaleness'>;
  /**
   * Distillation: the KL reference is this policy (another MLP over the same observations, e.g.
   * a larger one trained by the stages before) instead of the initial weights. With klMode
   * 'reward' and the k1 estimator each step's reward gets klCoef × (log π_teacher − log π), so RL
   * on it is on-policy distillation. Requires klCoef > 0.
   */
  teacher?: TeacherPolicy;
};

/** A fixed policy to distill from (StepTrainerConfig.teacher). */
export interface TeacherPolicy {
  model: MlpModelConfig;
  /** Whether its weights include a value head (a PPO teacher's do). */
  valueHead: boolean;
  weights: Weights;
}

export const DEFAULT_STEP_TRAINER: Omit<StepTrainerConfig, 'env' | 'algo'> = {
  model: { kind: 'mlp', hidden: [64, 64], activation: 'tanh' },
  shaping: DEFAULT_SHAPING,
  groups: 8,
  episodes: 32,
  learnerBatch: 512,
  seed: 0,
};
