/**
 * What a run's rewards are, written once for every collector: the base shaping config with its
 * live weight edits (setHyper), the progressive schedule's stage over it, and the user reward
 * terms (reward lab) with their skip count. A collector shapes its episodes with `shaping` and
 * `weights` and scores user terms through `userTerms` (the step records are its own: grids replay
 * from the seed, text envs read them off the token episode); the Trainer swaps the lab, advances
 * the schedule and checkpoints both.
 */
import { SCHEDULE_START, stageWeights, stepSchedule, weightsOf, withShapingWeights, type ScheduleState, type ShapingConfig, type ShapingSchedule, type ShapingWeights } from '../reward/shaping.ts';
import { addEvalReward, addRewardLabMetrics, installRewardLab, scoreWithRewardLab, type RewardLab } from '../reward/userTerms.ts';
import type { ScoreEpisode } from '../reward/stepRecord.ts';
import type { Checkpoint } from '../runs/checkpoint.ts';

export class RewardScoring {
  /** The base shaping config: the run's, with live weight edits (setHyper) applied. */
  shaping: ShapingConfig;
  /** The shaping weights in force: the schedule's stage over `shaping`, or its own. */
  weights: ShapingWeights;
  /** User reward terms, if any (swapped between iterations). */
  lab: (RewardLab & { version: number }) | null = null;
  /** (episode, term) pairs skipped for a non-finite value in the iteration being scored. */
  termsSkipped = 0;
  /** Where the schedule stands (its stage, and how long in it). */
  private state: ScheduleState = SCHEDULE_START;

  constructor(
    shaping: ShapingConfig,
    /** The progressive reward schedule, null without one. */
    readonly schedule: ShapingSchedule | null,
    /**
     * Whether episodes record the potential Φ (grid step pools that shape with it); a weight edit
     * may then keep a non-zero potential weight, else it must stay 0.
     */
    private readonly potentialRecorded: boolean,
  ) {
    this.shaping = shaping;
    this.weights = this.scheduled();
  }

  private scheduled(): ShapingWeights {
    return this.schedule ? stageWeights(this.schedule, this.state.stage, this.shaping) : weightsOf(this.shaping);
  }

  /** Validates and installs live reward weights; throws, changing nothing, on a refused edit. */
  setWeights(w: Partial<ShapingWeights>): void {
    this.shaping = withShapingWeights(this.shaping, w, this.potentialRecorded);
    this.weights = this.scheduled();
  }

  /** Score with these user terms from the next batch scored on (null = none); the caller owns the scorer. */
  setLab(lab: RewardLab | null): void {
    this.lab = installRewardLab(lab);
  }

  /** Starts an iteration's scoring: its lab version (0 = none) and a fresh skip count. */
  begin(): number {
    this.termsSkipped = 0;
    return this.lab?.version ?? 0;
  }

  /**
   * The user terms' per-step values of each episode (its step records, in order), null without a
   * lab. Non-finite values are resolved by the lab's policy and counted in `termsSkipped`.
   */
  async userTerms(records: readonly ScoreEpisode[]): Promise<Record<string, Float64Array>[] | null> {
    if (!this.lab) return null;
    const r = await scoreWithRewardLab(this.lab, records);
    this.termsSkipped += r.skipped;
    return r.values;
  }

  /**
   * The metrics phase's schedule step: reports the stage this iteration was shaped by
   * (`schedule/stage`), then advances on its success rate. The next weights are the next stage's
   * over the shaping config as it is now, so a live weight edit made while the iteration ran
   * holds from the next iteration on (as a checkpoint taken now, which stores it, resumes).
   */
  advance(m: Record<string, number>): void {
    if (!this.schedule) return;
    m['schedule/stage'] = this.state.stage;
    const next = stepSchedule(this.schedule, this.state, { successRate: m['episode/success_rate'] ?? 0 }, this.shaping);
    this.state = next.state;
    this.weights = next.weights;
  }

  /** `reward/version` (the lab version that scored the iteration; 0 = none) and `reward/terms_skipped`. */
  labMetrics(m: Record<string, number>, labVersion: number): void {
    addRewardLabMetrics(m, labVersion, this.termsSkipped);
    addEvalReward(m, this.lab?.evalTerms);
  }

  /** What a checkpoint holds of the rewards. */
  checkpoint(): Pick<Checkpoint, 'schedule' | 'rewardWeights'> {
    return { schedule: this.schedule ? { ...this.state } : null, rewardWeights: weightsOf(this.shaping) };
  }

  /**
   * Checks `cp`'s reward state against this run (both or neither have a schedule, a stage it has;
   * weights this run can take) and returns the function that installs it, to call once every
   * other check has passed.
   */
  prepareRestore(cp: Checkpoint, who: string): () => void {
    const stages = this.schedule?.stages.length ?? 0;
    if ((cp.schedule === null) !== (stages === 0)) throw new Error(`${who}: schedule: the checkpoint ${cp.schedule ? 'has' : 'has no'} reward schedule state, this run ${stages ? 'has' : 'has no'} schedule`);
    if (cp.schedule && cp.schedule.stage >= stages) throw new Error(`${who}: schedule.stage ${cp.schedule.stage} does not exist (this run's schedule has ${stages} stages)`);
    const shaping = withShapingWeights(this.shaping, cp.rewardWeights, this.potentialRecorded);
    return () => {
      if (cp.schedule) this.state = { ...cp.schedule };
      this.shaping = shaping;
      this.weights = this.scheduled();
    };
  }
}
