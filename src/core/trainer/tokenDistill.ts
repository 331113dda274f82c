/**
 * A distill stage with a transformer student (ARCHITECTURE.md, 'Staged pipelines'): a new,
 * smaller token policy learns the teacher's next-token distributions on its own episodes
 * (on-policy distillation, GKD with the reverse KL). It is the one Trainer with the lockstep
 * collector (kind 'token-distill') and the distill objective below in place of the policy
 * gradient. Each iteration:
 *
 *   collect   `episodes` student episodes from distinct seeds, lockstep on a KV-cached decoder
 *             (lockstepCollector.ts over rollout/tokenLockstep.ts), sampled at temperature 1
 *   teacher   per minibatch, the teacher's log-probs over the whole vocabulary at every position
 *             of the student's sequences [B, L, V] (one policy runner per length bucket L)
 *   update    the ONNX train step with the 'distill' loss (update/distillLoss.ts): klCoef × the
 *             token-mean of KL(π_s‖π_t) over the minibatch's policy tokens; one pass
 *   sync      the learner's weights become the decoder's, version + 1
 *   metrics   episode metrics of the sampled batch, `distill/kl` (exact, per token, before the
 *             update), `distill/teacher_prob` and `actor/kl_ref` (k3 on the sampled tokens)
 *
 * The env's reward (and shaping) is reported but not trained on: the KL is the whole objective.
 */
import { GROUP_ALGOS } from '../algos/config.ts';
import { referenceStats } from '../metrics/iterationMetrics.ts';
import { algoDescriptor } from '../algos/registry/index.ts';
import type { Engine, Learner, PolicyRunner } from '../engine/types.ts';
import { makeTextEnv } from '../envs/grid/textAdapter.ts';
import { makeTokenModel, type TransformerModelConfig, type TransformerPolicy } from '../models/transformer.ts';
import { initWeights, type Weights } from '../models/types.ts';
import type { RunConfig } from '../presets/schema.ts';
import type { RewardLab } from '../reward/userTerms.ts';
import type { TokenEpisode } from '../rollout/tokenEpisode.ts';
import { PAD } from '../text/codec.ts';
import type { RolloutBatch, SequenceFeed } from '../update/batch.ts';
import { TEACHER_LOGPROBS } from '../update/distillLoss.ts';
import { bucketFor, lengthBuckets, neededLengths } from '../update/sequenceScorer.ts';
import { mixSeed } from '../util/rng.ts';
import type { Collected, Objective } from './collector.ts';
import { makeScheduler } from './scheduler.ts';
import { LockstepCollector } from './lockstepCollector.ts';
import { RewardScoring } from './rewards.ts';
import { DEFAULT_TOKEN_TRAINER, type TokenTrainerConfig } from './tokenConfig.ts';
import { Trainer } from './trainer.ts';
import { allOrRelease } from '../util/allOrRelease.ts';

/** The policy a token distill stage imitates: the previous stage's transformer and its weights. */
export interface TokenTeacher {
  model: TransformerModelConfig;
  /** Whether its weights include a value head (a PPO teacher's do; the head is not used). */
  valueHead: boolean;
  weights: Weights;
}

/**
 * A distill stage's trainer from its stage config (the student model; klCoef in algo weights
 * the KL). The student plays as many episodes per iteration as the stage's algorithm would
 * sample, each from its own seed (no groups: distillation has no group baseline).
 */
export async function createTokenDistillTrainer(config: RunConfig, teacher: TokenTeacher, engine: Engine, rewardLab?: RewardLab): Promise<Trainer<TokenEpisode, LockstepCollector>> {
  if (config.model.kind !== 'transformer') throw new Error(`token distillation: the student must be a transformer (got ${config.model.kind})`);
  const { rollout, algo } = config;
  const tc: TokenTrainerConfig = {
    ...DEFAULT_TOKEN_TRAINER,
    env: config.env,
    model: config.model,
    // The collector samples distinct seeds for a non-group algorithm; the stage's own algorithm only sizes the batch and sets the optimizer.
    algo: { ...algo, algo: 'reinforce' },
    shaping: config.shaping,
    episodes: GROUP_ALGOS.includes(algo.algo) ? rollout.groups * algo.groupSize : rollout.episodes,
    learnerBatch: rollout.learnerBatch,
    maxActionTokens: rollout.maxActionTokens,
    temperature: 1,
    seed: config.seed,
    schedule: null,
  };
  makeTextEnv(tc.env.id, tc.env.kwargs); // throws, naming the env, when it has no text form
  // A PPO run's student keeps a value head (untrained: the loss has no value term) so its
  // checkpoint and exported policy have the shape every other stage of the run has.
  const model = makeTokenModel(tc.model, algoDescriptor(algo.algo).critic);
  const teacherModel = makeTokenModel(teacher.model, teacher.valueHead);
  if (model.config.context > teacherModel.config.context) {
    throw new Error(`token distillation: the student's context (${model.config.context}) must not exceed the teacher's (${teacherModel.config.context}), which scores every position of its episodes`);
  }
  for (const p of teacherModel.params) {
    const n = p.shape.reduce((a, b) => a * b, 1);
    if (teacher.weights[p.name]?.length !== n) throw new Error(`token distillation: the teacher's weights do not fit its model (${p.name})`);
  }
  const weights = initWeights(model, mixSeed(tc.seed, 0x1e1));
  const envs = Array.from({ length: tc.episodes }, () => makeTextEnv(tc.env.id, tc.env.kwargs));
  const adam = { lr: algo.lr, beta1: algo.adamBeta1, beta2: algo.adamBeta2, eps: algo.adamEps, weightDecay: algo.weightDecay, maxGradNorm: algo.maxGradNorm ?? 0 };
  const lens = lengthBuckets(model.config.context);
  const [decoder, learner] = await allOrRelease([
    engine.createDecoder(model, envs.length, weights, tc.prefillStep),
    engine.createLearner(model, { batch: tc.learnerBatch, loss: { kind: 'distill', klCoef: algo.klCoef }, adam }, weights, lens),
  ]);
  // Token episodes record no potentials Φ, so the potential weight stays 0; the rewards are reported, not trained on.
  const rewards = new RewardScoring(tc.shaping, null, false);
  const collector = new LockstepCollector(tc, model, envs, decoder, null, null, rewards, 'token-distill');
  const objective = new DistillObjective(engine, teacherModel, teacher.weights, tc.learnerBatch, lens);
  const trainer = new Trainer<TokenEpisode, LockstepCollector>({ algo, collector, scheduler: makeScheduler(0), learner, rewards, objective });
  if (rewardLab) trainer.setRewardLab(rewardLab);
  return trainer;
}

/**
 * The distill objective: per minibatch of the student's sequences, the teacher's log-probs over
 * the whole vocabulary at every position [B, L, V], fed to the train step's 'distill' loss.
 */
export class DistillObjective implements Objective<TokenEpisode> {
  /** The teacher's policy runners by sequence length (made on first use). */
  private readonly runners = new Map<number, Promise<PolicyRunner>>();

  constructor(
    private readonly engine: Engine,
    private readonly teacher: TransformerPolicy,
    private readonly teacherWeights: Weights,
    /** Sequences per train step (the learner's static batch). */
    private readonly batch: number,
    /** The learner's length buckets. */
    private readonly lens: number[],
  ) {}

  private teacherAt(L: number): Promise<PolicyRunner> {
    let r = this.runners.get(L);
    if (!r) {
      r = this.engine.createPolicy(this.teacher, this.batch, this.teacherWeights, L);
      this.runners.set(L, r);
    }
    return r;
  }

  /**
   * One pass of distill steps over the batch, `batch` sequences at a time, each at the shortest
   * length bucket that holds its sequences; weights are the token mean of each step. Reports
   * `distill/kl` (per policy token, before the update), `distill/teacher_prob` and `actor/kl_ref`
   * (k3 on the sampled tokens) beside the learner's own metrics.
   */
  async train(learner: Learner, c: Collected<TokenEpisode>): Promise<{ steps: number; allApplied: boolean; metrics: Record<string, number> }> {
    const b: RolloutBatch = c.batch;
    const { T, V, tokens, actions } = b.feed as SequenceFeed;
    const B = this.batch;
    const need = neededLengths(b.mask, b.n, T);
    const teacherLogp: number[] = [];
    const studentLogp: number[] = [];
    const sums: Record<string, number> = {};
    let steps = 0;
    let allApplied = true;
    let klTokens = 0;
    for (let o = 0; o < b.n; o += B) {
      const rows = Array.from({ length: Math.min(B, b.n - o) }, (_, j) => o + j);
      const L = bucketFor(this.lens, Math.max(...rows.map((s) => need[s])), T);
      const feed = { tokens: new Int32Array(B * L).fill(PAD), actions: new Int32Array(B * L), mask: new Float32Array(B * L), weights: new Float32Array(B * L) };
      rows.forEach((s, j) => {
        feed.tokens.set(tokens.subarray(s * T, s * T + L), j * L);
        feed.actions.set(actions.subarray(s * T, s * T + L), j * L);
        feed.mask.set(b.mask.subarray(s * T, s * T + L), j * L);
      });
      const count = feed.mask.reduce((a, x) => a + x, 0);
      if (count === 0) continue;
      feed.mask.forEach((m, i) => (feed.weights[i] = m / count));
      const teacher = (await (await this.teacherAt(L)).run({ tokens: feed.tokens })).logprobs; // [B, L, V]
      rows.forEach((s, j) => {
        for (let t = 0; t < L; t++) {
          if (!feed.mask[j * L + t]) continue;
          teacherLogp.push(teacher[(j * L + t) * V + feed.actions[j * L + t]]);
          studentLogp.push(b.mu[s * T + t]);
        }
      });
      const res = await learner.step({ ...feed, [TEACHER_LOGPROBS]: teacher }, L === T ? undefined : L);
      steps++;
      allApplied &&= res.applied;
      for (const [k, v] of Object.entries(res.metrics)) sums[k] = (sums[k] ?? 0) + (k === 'distill/kl' ? v * count : v);
      klTokens += count;
    }
    const metrics: Record<string, number> = {};
    for (const [k, v] of Object.entries(sums)) metrics[k] = k === 'distill/kl' ? v / Math.max(1, klTokens) : v / Math.max(1, steps);
    const ref = referenceStats(studentLogp, teacherLogp);
    metrics['actor/kl_ref'] = ref.klRef;
    metrics['distill/teacher_prob'] = ref.refProb;
    return { steps, allApplied, metrics };
  }

  async release(): Promise<void> {
    await Promise.all([...this.runners.values()].map(async (r) => (await r).release()));
  }
}
