/** The grid (step-env + MLP) trainer's configuration. */
import type { AlgoConfig } from '../algos/config.ts';
import type { Weights } from '../models/types.ts';
import type { EnvKwargs } from '../envs/index.ts';
import { DEFAULT_SHAPING, type ShapingConfig, type ShapingSchedule } from '../reward/shaping.ts';

export interface MlpModelConfig {
  kind: 'mlp';
  /** Hidden layer widths, input side first. */
  hidden: number[];
  /** Hidden nonlinearity: tanh is smoother for small policy nets (CleanRL's choice). */
  activation: 'tanh' | 'relu';
  /** Multi-agent envs: one network for every agent ('shared', default) or one per agent ('separate', two towers). */
  agents?: 'shared' | 'separate';
}

export interface StepTrainerConfig {
  /** Env registry id and its kwargs. */
  env: { id: string; kwargs?: EnvKwargs };
  model: MlpModelConfig;
  algo: AlgoConfig;
  shaping: ShapingConfig;
  /** Progressive shaping: stages with their own weights (dense shaping early, outcome late); null = fixed weights. */
  schedule?: ShapingSchedule | null;
  /** Groups per iteration for group algorithms (each groupSize episodes from one seed). */
  groups: number;
  /** Episodes per iteration for REINFORCE and PPO (distinct seeds). */
  episodes: number;
  /** Rows per train step (static graph batch); an iteration uses ⌈steps / batch⌉ steps per epoch. */
  learnerBatch: number;
  /** Master seed: weights, env seeds and sampling all derive from it. */
  seed: number;
  /** Rollout scheduling (staleness bound); absent = synchronous. The shaping schedule is `schedule`. */
  scheduling?: AsyncScheduleConfig;
  /**
   * Distillation: the KL reference is this policy (another MLP over the same observations, e.g.
   * a larger one trained by the stages before) instead of the initial weights. With klMode
   * 'reward' and the k1 estimator each step's reward gets klCoef × (log π_teacher − log π), so RL
   * on it is on-policy distillation. Requires klCoef > 0.
   */
  teacher?: TeacherPolicy;
}

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

export interface AsyncScheduleConfig {
  /**
   * Most policy versions a trained step may lag the learner (s). 0 = synchronous (collect,
   * then train, strictly alternating); 1 = the next batch plays while this one trains.
   */
  maxStaleness: number;
}

export const DEFAULT_ASYNC_SCHEDULE: AsyncScheduleConfig = { maxStaleness: 1 };
