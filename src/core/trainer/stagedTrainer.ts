/**
 * A staged pipeline (ARCHITECTURE.md, 'Staged pipelines'): the run's stages in order, each a
 * trainer of its own (the plan's stage: the stage's fields merged over the run's, resolved once
 * when the plan was made; presets/plan.ts), every stage starting from the weights the one before
 * it ended with. GLM's recipe in the seeds has this
 * shape: warm start → RL stage 1 → RL stage 2 with another env mix or reward → distillation.
 *
 *   iteration   global: stage k's iteration i is offset_k + i (the charts' x axis runs on)
 *   hand-over   lazily, at the first step() past a stage's iterations: the finished stage's
 *               weights go to the next (an RL stage continues them with a fresh Adam state; a
 *               distill stage makes them its teacher and trains a new student from its seed)
 *   metrics     every iteration also reports `pipeline/stage` (1-based)
 *   checkpoint  the running stage's own checkpoint, its iteration made global, plus
 *               `pipeline` (stage, offsets) and, in a distill stage, the teacher as `reference`
 *
 * A stage's own trainer is made by the caller's factory (createTrainer's single-stage path), so
 * this file knows nothing of env families or policies.
 */
import { algoDescriptor } from '../algos/registry/index.ts';
import type { Weights } from '../models/types.ts';
import type { RunConfig } from '../presets/schema.ts';
import type { RunPlan, StagePlan } from '../presets/plan.ts';
import type { Checkpoint } from '../runs/checkpoint.ts';
import type { LiveHyper } from '../update/hyper.ts';
import type { RewardLab } from '../reward/userTerms.ts';
import type { TeacherPolicy } from './stepConfig.ts';
import type { TokenTeacher } from './tokenDistill.ts';
import type { IterationReport, RunTrainer as Trainer } from './api.ts';

/** Where a stage's trainer starts: the previous stage's weights, or (distill) its teacher. */
export interface StageStart {
  /** The weights to continue from (RL stages after the first); undefined = the config's own start. */
  initial?: Weights;
  /** Distill stages with an mlp student: the policy to imitate. */
  teacher?: TeacherPolicy;
  /** Distill stages with a transformer student: the token policy to imitate (trainer/tokenDistill.ts). */
  tokenTeacher?: TokenTeacher;
}

/** Makes the trainer of one stage of the plan (its config has no stages) with the run's current reward lab. */
export type StageFactory = (stage: StagePlan, start: StageStart, rewardLab: RewardLab | null) => Promise<Trainer>;

/**
 * Where a resumed staged run picks up: the stage and the weights it started from (a distill
 * stage's teacher; an RL stage's KL reference), which its checkpoint keeps as `reference`.
 */
function resumePoint(cp: Checkpoint | undefined, run: RunConfig): { stage: number; anchor?: Weights } {
  if (!cp) return { stage: 0 };
  const p = cp.pipeline;
  if (!p) throw new Error('this checkpoint was written by a run without stages; it cannot resume a staged run');
  if (p.stage >= run.stages.length) throw new Error(`the checkpoint is in stage ${p.stage + 1}, but this run has ${run.stages.length} stages`);
  const distill = run.stages[p.stage].distill !== undefined;
  if (distill && !cp.reference) throw new Error(`the checkpoint is in the distill stage '${run.stages[p.stage].name}' but holds no teacher weights (reference)`);
  return { stage: p.stage, anchor: p.stage > 0 ? cp.reference : undefined };
}

export class StagedTrainer implements Trainer {
  /** Iterations and policy versions of the stages before the running one. */
  private offset: number;
  private versionOffset = 0;
  private rewardLab: RewardLab | null;
  /**
   * The weights the running stage started from (stages after the first): a distill stage's
   * teacher, an RL stage's KL reference. Checkpoints keep them when the stage needs them again.
   */
  private anchor: Weights | null;

  private constructor(
    private readonly run: RunConfig,
    /** Each stage of the plan, resolved once (the stage's fields over the run's, parsed). */
    private readonly stages: readonly StagePlan[],
    private readonly makeStage: StageFactory,
    private stage: number,
    private inner: Trainer,
    anchor: Weights | null,
    rewardLab: RewardLab | null,
  ) {
    this.offset = run.stages.slice(0, stage).reduce((n, st) => n + st.iterations, 0);
    this.anchor = anchor;
    this.rewardLab = rewardLab;
  }

  /**
   * The pipeline's trainer, in its first stage, or in the stage `resume` was written in (its
   * stage's trainer is made directly: a resumed run in stage 3 never trains stages 1 and 2 again;
   * restore() then loads the checkpoint into it).
   */
  static async create(plan: RunPlan, makeStage: StageFactory, rewardLab: RewardLab | null = null, resume?: Checkpoint): Promise<StagedTrainer> {
    const run = plan.config;
    if (!plan.staged) throw new Error('StagedTrainer: the run has no stages');
    const at = resumePoint(resume, run);
    const { stages } = plan;
    const start = at.anchor ? startOf(run, at.stage, stages[at.stage - 1].config, at.anchor) : {};
    const inner = await makeStage(stages[at.stage], start, rewardLab);
    return new StagedTrainer(run, stages, makeStage, at.stage, inner, at.anchor ?? null, rewardLab);
  }

  /** The running stage (0-based) and its name. */
  get current(): { index: number; name: string } {
    return { index: this.stage, name: this.run.stages[this.stage].name };
  }

  get model() {
    return this.inner.model;
  }

  get iteration(): number {
    return this.offset + this.inner.iteration;
  }

  get version(): number {
    return this.versionOffset + this.inner.version;
  }

  get canCheckpoint(): boolean {
    return this.inner.canCheckpoint;
  }

  /** Moves to the next stage once the running one has trained its iterations (between steps). */
  private async advance(): Promise<void> {
    const k = this.stage + 1;
    const weights = await this.inner.getWeights();
    const start = startOf(this.run, k, this.stages[this.stage].config, weights);
    // Made before the finished stage is released: a stage that cannot start leaves the run in the
    // last stage it finished (its weights kept), and the error ends the run.
    const trainer = await this.makeStage(this.stages[k], start, this.rewardLab);
    const done = this.inner;
    this.offset += this.run.stages[this.stage].iterations;
    this.versionOffset += done.version;
    this.inner = trainer;
    this.stage = k;
    this.anchor = weights;
    await done.release();
  }

  async step(): Promise<IterationReport> {
    while (this.inner.iteration >= this.run.stages[this.stage].iterations && this.stage + 1 < this.run.stages.length) await this.advance();
    const r = await this.inner.step();
    const metrics = r.metrics;
    metrics['pipeline/stage'] = this.stage + 1;
    const version = metrics['train/policy_version'];
    if (version !== undefined) metrics['train/policy_version'] = version + this.versionOffset;
    return { ...r, iteration: this.offset + r.iteration, metrics };
  }

  evaluate(seeds: readonly number[], temperature?: number) {
    return this.inner.evaluate(seeds, temperature);
  }

  /** Live edits apply to the running stage; the next stage starts from its own config. */
  setHyper(h: LiveHyper): void {
    this.inner.setHyper(h);
  }

  setRewardLab(lab: RewardLab | null): void {
    this.rewardLab = lab;
    this.inner.setRewardLab(lab);
  }

  getWeights(): Promise<Weights> {
    return this.inner.getWeights();
  }

  async checkpoint(): Promise<Checkpoint> {
    const cp = await this.inner.checkpoint();
    return {
      ...cp,
      iteration: this.offset + cp.iteration,
      pipeline: { stage: this.stage, offset: this.offset, versionOffset: this.versionOffset },
      // A distill stage's teacher always; an RL stage's start when it is the KL reference.
      ...(this.anchor && (this.run.stages[this.stage].distill || this.stages[this.stage].config.algo.klCoef > 0) ? { reference: this.anchor } : {}),
    };
  }

  async restore(cp: Checkpoint): Promise<void> {
    const p = cp.pipeline;
    if (!p) throw new Error('StagedTrainer.restore: the checkpoint was written by a run without stages');
    if (p.stage !== this.stage) throw new Error(`StagedTrainer.restore: the checkpoint is in stage ${p.stage + 1}, this trainer was made for stage ${this.stage + 1} (create it with the checkpoint)`);
    const expected = this.run.stages.slice(0, p.stage).reduce((n, st) => n + st.iterations, 0);
    if (p.offset !== expected) throw new Error(`StagedTrainer.restore: stage ${p.stage + 1} begins after ${expected} iterations in this run, the checkpoint says ${p.offset} (another pipeline?)`);
    const own: Checkpoint = { ...cp, iteration: cp.iteration - p.offset };
    delete own.pipeline;
    // A distill stage's `reference` is its teacher, which the stage was made with, not trainer state.
    if (this.run.stages[p.stage].distill) delete own.reference;
    await this.inner.restore(own);
    this.versionOffset = p.versionOffset;
  }

  release(): Promise<void> {
    return this.inner.release();
  }
}

/** A distill stage's student in a few words: 'an MLP of 16×16', 'a transformer of 1 layer, d 32'. */
export function studentLabel(s: { kind?: 'mlp'; hidden: readonly number[] } | { kind: 'transformer'; nLayers: number; dModel: number }): string {
  return 'hidden' in s ? `an MLP of ${s.hidden.join('×')}` : `a transformer of ${s.nLayers} layer${s.nLayers === 1 ? '' : 's'}, d ${s.dModel}`;
}

/** How stage `k` starts from the weights `prev` (the config of the stage before it) ended with. */
function startOf(run: RunConfig, k: number, prev: RunConfig, weights: Weights): StageStart {
  if (!run.stages[k].distill) return { initial: weights };
  const valueHead = algoDescriptor(prev.algo.algo).critic;
  if (prev.model.kind === 'transformer') return { tokenTeacher: { model: prev.model, valueHead, weights } };
  return { teacher: { model: { kind: 'mlp', hidden: prev.model.hidden, activation: prev.model.activation, agents: prev.model.agents }, valueHead, weights } };
}
