/**
 * What every trainer is beyond its rollout source, written once: the learner, its live
 * hyperparameters and weights, the user reward terms (reward lab), the EMA baseline, the
 * iteration and version counters, the common part of checkpoint/restore, and release. A trainer
 * is this skeleton plus a rollout source and its timing: the step pool with bounded staleness
 * (StepTrainer), the lockstep token loop (TokenTrainer), the continuous token loop
 * (AsyncTokenTrainer); everything after collect runs through trainer/phases.ts.
 */
import { EMA_BASELINE_INIT, type EmaBaselineState } from '../algos/advantages.ts';
import type { Learner } from '../engine/types.ts';
import type { PolicyModel, Weights } from '../models/types.ts';
import { SCHEDULE_START, stageWeights, stepSchedule, weightsOf, type ScheduleState, type ShapingConfig, type ShapingSchedule, type ShapingWeights } from '../reward/shaping.ts';
import { installRewardLab, type RewardLab } from '../reward/userTerms.ts';
import type { StepEpisode } from '../rollout/stepEpisode.ts';
import type { TokenEpisode } from '../rollout/tokenEpisode.ts';
import { CHECKPOINT_FORMAT, CHECKPOINT_VERSION, type Checkpoint, type CheckpointTrainer } from '../runs/checkpoint.ts';
import type { PositionScorer } from '../update/offPolicy.ts';
import { applyLiveHyper, type LiveHyper } from '../update/hyper.ts';
import type { IterationReport, RunTrainer } from './api.ts';

export abstract class TrainerBase<E extends StepEpisode | TokenEpisode> implements RunTrainer<E> {
  /** Iterations trained so far. */
  iteration = 0;
  /** The learner's policy version (updates applied). */
  version = 0;
  readonly canCheckpoint = true;
  /** The REINFORCE EMA baseline (advantages of 'ema' estimators). */
  protected ema: EmaBaselineState = EMA_BASELINE_INIT;
  /** User reward terms, if any (setRewardLab swaps them between iterations). */
  protected rewardLab: (RewardLab & { version: number }) | null = null;
  /** (episode, term) pairs skipped for a non-finite value in the iteration being scored. */
  protected termsSkipped = 0;
  /** The progressive reward schedule (config.schedule), null without one. */
  protected schedule: ShapingSchedule | null = null;
  /** Where the schedule stands (its stage, and how long in it). */
  protected scheduleState: ScheduleState = SCHEDULE_START;

  abstract readonly model: PolicyModel;
  protected abstract readonly learner: Learner;
  /** π at the learner's version for stale positions' π_old (null: none, or the learner serves as it). */
  protected abstract readonly proximal: PositionScorer | null;
  /** The KL reference policy (klCoef > 0), else null. */
  protected abstract readonly reference: PositionScorer | null;
  /** Names the trainer in checkpoints and messages. */
  protected abstract readonly kind: CheckpointTrainer;
  protected abstract readonly label: string;

  abstract step(): Promise<IterationReport<E>>;
  abstract evaluate(seeds: readonly number[], temperature?: number): Promise<E[]>;
  abstract checkpoint(): Promise<Checkpoint>;
  abstract restore(checkpoint: Checkpoint): Promise<void>;
  /** Validates and installs live reward weights; throws, changing nothing, on a refused edit. */
  protected abstract setRewardWeights(w: Partial<ShapingWeights>): void;
  /** Frees what the rollout source holds (pool, decoder, episode source). */
  protected abstract releaseRollout(): Promise<void>;

  /**
   * Score with these user reward terms from the next batch scored on (null = none). The caller
   * owns the scorer: it closes the one it replaces. Batches already scored keep their values.
   */
  setRewardLab(lab: RewardLab | null): void {
    this.rewardLab = installRewardLab(lab);
  }

  /** Live hyperparameters (lr, entropy_coef, clip_low, clip_high, kl_coef) as the learner sees them. */
  get hyper(): Record<string, number> {
    return this.learner.hyper;
  }

  /** Change live hyperparameters (from the next train step) and reward weights (from the next episodes scored). */
  setHyper(h: LiveHyper): void {
    // Validate before touching anything: a refused edit leaves the run as it was.
    if (h.rewardWeights) this.setRewardWeights(h.rewardWeights);
    applyLiveHyper(this.learner.hyper, h);
  }

  getWeights(): Promise<Weights> {
    return this.learner.getWeights();
  }

  /** The shaping weights in force: the schedule's stage over `base`'s, or `base`'s own. */
  protected scheduledWeights(base: ShapingConfig): ShapingWeights {
    return this.schedule ? stageWeights(this.schedule, this.scheduleState.stage, base) : weightsOf(base);
  }

  /**
   * The metrics phase's schedule step: reports the stage this iteration was shaped by
   * (`schedule/stage`), then advances on its success rate; returns the weights for the next one.
   */
  protected advanceSchedule(metrics: Record<string, number>, base: ShapingConfig): ShapingWeights {
    if (!this.schedule) return weightsOf(base);
    metrics['schedule/stage'] = this.scheduleState.stage;
    const next = stepSchedule(this.schedule, this.scheduleState, { successRate: metrics['episode/success_rate'] ?? 0 }, base);
    this.scheduleState = next.state;
    return next.weights;
  }

  /** Throws unless `cp`'s schedule state fits this run's schedule (both or neither, a stage it has). */
  protected checkSchedule(cp: Checkpoint): void {
    const stages = this.schedule?.stages.length ?? 0;
    if ((cp.schedule === null) !== (stages === 0)) throw new Error(`${this.label}.restore: schedule: the checkpoint ${cp.schedule ? 'has' : 'has no'} reward schedule state, this run ${stages ? 'has' : 'has no'} schedule`);
    if (cp.schedule && cp.schedule.stage >= stages) throw new Error(`${this.label}.restore: schedule.stage ${cp.schedule.stage} does not exist (this run's schedule has ${stages} stages)`);
  }

  /** The schedule's state as a checkpoint holds it (null without a schedule). */
  protected scheduleCheckpoint(): ScheduleState | null {
    return this.schedule ? { ...this.scheduleState } : null;
  }

  /** The fields every trainer's checkpoint holds, plus the trainer's own (`own`). */
  protected async checkpointWith(own: Pick<Checkpoint, 'rng' | 'schedule' | 'rewardWeights'> & Partial<Checkpoint>): Promise<Checkpoint> {
    if (!this.learner.exportState) throw new Error(`${this.label}.checkpoint: this engine's learner cannot export its optimizer state`);
    const learner = await this.learner.exportState();
    return {
      format: CHECKPOINT_FORMAT,
      version: CHECKPOINT_VERSION,
      trainer: this.kind,
      iteration: this.iteration,
      policyVersion: this.version,
      learner,
      hyper: { ...this.learner.hyper },
      ema: { ...this.ema },
      ...own,
    };
  }

  /** Throws unless this learner can take a checkpoint's optimizer state. */
  protected checkImportable(): void {
    if (!this.learner.importState) throw new Error(`${this.label}.restore: this engine's learner cannot import optimizer state`);
  }

  /**
   * The common part of restore, after every check passed: the learner's parameters and Adam
   * state (it checks every tensor's name and size before it replaces any), live hyper, the EMA
   * baseline and the counters.
   */
  protected importCommon(cp: Checkpoint): void {
    this.learner.importState!(cp.learner);
    for (const [k, v] of Object.entries(cp.hyper)) this.learner.hyper[k] = v;
    this.ema = { ...cp.ema };
    if (cp.schedule) this.scheduleState = { ...cp.schedule };
    this.iteration = cp.iteration;
    this.version = cp.policyVersion;
  }

  /** Frees the rollout source first (it may wait for collects in flight), then the learner and scorers. */
  async release(): Promise<void> {
    await this.releaseRollout();
    await Promise.all([this.learner.release(), this.proximal?.release(), this.reference?.release()]);
  }
}
