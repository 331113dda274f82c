/** StagedTrainer's bookkeeping with scripted stage trainers: hand-over, numbering, failures, checkpoints. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runConfigSchema, stageConfig, type RunConfig } from '../presets/schema.ts';
import { parseRunPlan, type RunPlan, type StagePlan } from '../presets/plan.ts';
import type { Weights } from '../models/types.ts';
import type { Checkpoint } from '../runs/checkpoint.ts';
import { StagedTrainer, type StageFactory, type StageStart } from './stagedTrainer.ts';
import type { RunTrainer as Trainer } from './api.ts';

/** A staged run as written: three stages, the second on another env, the last a distill stage. */
const RUN = {
  env: { id: 'grid/empty-5x5' },
  model: { kind: 'mlp', hidden: [32, 32] },
  algo: { algo: 'grpo' },
  stages: [
    { name: 'one', iterations: 2 },
    { name: 'two', iterations: 1, env: { id: 'grid/empty-8x8' } },
    { name: 'student', iterations: 2, distill: { student: { kind: 'mlp', hidden: [4] } } },
  ],
};

function run(): RunPlan {
  const r = parseRunPlan(RUN);
  if (!r.ok) throw new Error(r.messages.join('\n'));
  return r.plan;
}

/** A stand-in trainer: its weights are one number, the stage's tag plus its iteration. */
function fake(tag: number, made: { config: RunConfig; start: StageStart }[], config: RunConfig, start: StageStart): Trainer {
  made.push({ config, start });
  let iteration = 0;
  let released = false;
  const t = {
    model: { kind: 'mlp' },
    get iteration() {
      return iteration;
    },
    get version() {
      return iteration;
    },
    canCheckpoint: true,
    async step() {
      if (released) throw new Error('stepped after release');
      const i = iteration++;
      return { iteration: i, metrics: { 'train/policy_version': iteration, tag } as never, episodes: [], episodeRewards: new Float64Array(0), episodeAdvantages: new Float64Array(0), allApplied: true };
    },
    evaluate: async () => [],
    setHyper: () => undefined,
    setRewardLab: () => undefined,
    getWeights: async (): Promise<Weights> => ({ w: Float32Array.of(tag * 100 + iteration) }),
    async checkpoint(): Promise<Checkpoint> {
      return { iteration, policyVersion: iteration, learner: { updates: iteration, tensors: { w: Float32Array.of(tag) } } } as unknown as Checkpoint;
    },
    async restore(cp: Checkpoint) {
      iteration = cp.iteration;
    },
    async release() {
      released = true;
    },
  };
  return t as unknown as Trainer;
}

describe('StagedTrainer', () => {
  it('runs the stages in order, handing each the weights the previous ended with, on one iteration axis', async () => {
    const made: { config: RunConfig; start: StageStart }[] = [];
    const factory: StageFactory = async (stage, start) => fake(made.length + 1, made, stage.config, start);
    const t = await StagedTrainer.create(run(), factory);
    const seen = [];
    for (let i = 0; i < 5; i++) {
      const r = await t.step();
      seen.push([r.iteration, r.metrics['pipeline/stage'], r.metrics.tag, r.metrics['train/policy_version']]);
    }
    // [iteration, stage, which trainer, policy version counting across stages]
    expect(seen).toEqual([
      [0, 1, 1, 1],
      [1, 1, 1, 2],
      [2, 2, 2, 3],
      [3, 3, 3, 4],
      [4, 3, 3, 5],
    ]);
    expect(made.map((m) => m.config.env.id)).toEqual(['grid/empty-5x5', 'grid/empty-8x8', 'grid/empty-5x5']);
    expect(made[0].start).toEqual({});
    // Stage 2 continues stage 1's final weights (trainer 1 after 2 iterations: 102).
    expect(made[1].start.initial?.w[0]).toBe(102);
    // The distill stage gets stage 2's policy as its teacher, with stage 2's architecture, and a fresh student.
    expect(made[2].start.initial).toBeUndefined();
    expect(made[2].start.teacher?.weights.w[0]).toBe(201);
    expect(made[2].start.teacher?.model).toEqual({ kind: 'mlp', hidden: [32, 32], activation: 'tanh', agents: 'shared' });
    expect(made[2].config.model).toEqual({ kind: 'mlp', hidden: [4], activation: 'tanh', agents: 'shared' });
    expect(t.iteration).toBe(5);
    // The distill stage's checkpoint is the run's: its iteration, the stage, and the teacher.
    const cp = await t.checkpoint();
    expect(cp.iteration).toBe(5);
    expect(cp.pipeline).toEqual({ stage: 2, offset: 3, versionOffset: 3 });
    expect(cp.reference?.w[0]).toBe(201);
  });

  it('a stage that cannot start stops the step with its message and keeps the run in the finished stage', async () => {
    const made: { config: RunConfig; start: StageStart }[] = [];
    const factory: StageFactory = async (stage, start) => {
      if (made.length === 1) throw new Error('no room for stage two');
      return fake(1, made, stage.config, start);
    };
    const t = await StagedTrainer.create(run(), factory);
    await t.step();
    await t.step();
    await expect(t.step()).rejects.toThrow('no room for stage two');
    expect(t.current).toEqual({ index: 0, name: 'one' });
    expect((await t.getWeights()).w[0]).toBe(102);
  });

  it('resumes in the checkpoint stage without training the stages before it, and refuses checkpoints of other runs', async () => {
    const made: { config: RunConfig; start: StageStart }[] = [];
    const factory: StageFactory = async (stage, start) => fake(made.length + 1, made, stage.config, start);
    const cp = { iteration: 4, policyVersion: 1, learner: { updates: 1, tensors: {} }, pipeline: { stage: 2, offset: 3, versionOffset: 3 }, reference: { w: Float32Array.of(7) } } as unknown as Checkpoint;
    const t = await StagedTrainer.create(run(), factory, null, cp);
    expect(made).toHaveLength(1);
    expect(made[0].start.teacher?.weights.w[0]).toBe(7);
    await t.restore(cp);
    expect(t.iteration).toBe(4);
    expect((await t.step()).iteration).toBe(4);

    await expect(StagedTrainer.create(run(), factory, null, { ...cp, pipeline: undefined })).rejects.toThrow('written by a run without stages');
    await expect(StagedTrainer.create(run(), factory, null, { ...cp, pipeline: { stage: 5, offset: 0, versionOffset: 0 } })).rejects.toThrow('in stage 6, but this run has 3 stages');
    await expect(StagedTrainer.create(run(), factory, null, { ...cp, reference: undefined })).rejects.toThrow("distill stage 'student' but holds no teacher weights");
    const fresh = await StagedTrainer.create(run(), factory);
    await expect(fresh.restore(cp)).rejects.toThrow('the checkpoint is in stage 3, this trainer was made for stage 1');
    const wrong = await StagedTrainer.create(run(), factory, null, cp);
    await expect(wrong.restore({ ...cp, pipeline: { stage: 2, offset: 9, versionOffset: 3 } })).rejects.toThrow('stage 3 begins after 3 iterations in this run, the checkpoint says 9');
  });

  describe('the plan resolves each stage once', () => {
    afterEach(() => vi.restoreAllMocks());

    it('parseRunPlan parses the run and each stage once; the staged trainer then parses nothing and runs the plan\'s own stage objects', async () => {
      // Every parse of a run config (a stage's included) goes through the schema's safeParse once.
      const parses = vi.spyOn(runConfigSchema, 'safeParse');
      const plan = run();
      // 1 for the run + 1 per stage (3), the stages parsed by the validation itself; re-parsing
      // them to build the plan (the old stageConfig path) would make it 7.
      expect(parses).toHaveBeenCalledTimes(4);
      parses.mockClear();
      const made: StagePlan[] = [];
      const factory: StageFactory = async (stage, start) => {
        made.push(stage);
        return fake(made.length, [], stage.config, start);
      };
      const t = await StagedTrainer.create(plan, factory);
      for (let i = 0; i < 5; i++) await t.step();
      expect(parses).not.toHaveBeenCalled();
      // The very stage objects of the plan, in order (a trainer that re-derived them would pass copies).
      expect(made).toHaveLength(3);
      made.forEach((st, k) => expect(st).toBe(plan.stages[k]));
    });

    it('each resolved stage is the stage merged over the run, as stageConfig derives it on its own', () => {
      const plan = run();
      expect(plan.staged).toBe(true);
      plan.stages.forEach((st, k) => {
        expect(st.config).toEqual(stageConfig(plan.config, k));
        expect(st.name).toBe(RUN.stages[k].name);
        expect(st.iterations).toBe(RUN.stages[k].iterations);
      });
      // Stage 2's env and stage 3's student reach their rollout plans; the seeds differ from stage 2 on.
      expect(plan.stages[1].rollout.env.id).toBe('grid/empty-8x8');
      expect(plan.stages[2].rollout.model).toEqual({ kind: 'mlp', hidden: [4], activation: 'tanh', agents: 'shared' });
      expect(plan.stages[0].rollout.seed).toBe(plan.config.seed);
      expect(plan.stages[1].rollout.seed).not.toBe(plan.config.seed);
    });
  });
});
