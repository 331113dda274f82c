/**
 * A distill stage with a transformer student (ARCHITECTURE.md, 'Staged pipelines'): a new,
 * smaller token policy learns the teacher's next-token distributions on its own episodes
 * (on-policy distillation, GKD with the reverse KL). Each step():
 *
 *   collect   `episodes` student episodes from distinct seeds, lockstep on a KV-cached decoder
 *             (rollout/tokenLockstep.ts), sampled at temperature 1
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
import { GROUP_ALGOS, type AlgoConfig } from '../algos/config.ts';
import { buildIterationMetrics, referenceStats } from '../algos/metrics.ts';
import { algoDescriptor } from '../algos/registry/index.ts';
import { mean } from '../algos/stats.ts';
import type { Engine, Learner, PolicyRunner, TokenDecoder } from '../engine/types.ts';
import type { EnvKwargs } from '../envs/index.ts';
import { makeTextEnv } from '../envs/grid/textAdapter.ts';
import type { ToolEnv } from '../envs/types.ts';
import { keepApplicable } from '../metrics/lookup.ts';
import { makeTokenModel, type TransformerModelConfig, type TransformerPolicy } from '../models/transformer.ts';
import { initWeights, type Weights } from '../models/types.ts';
import type { RunConfig } from '../presets/schema.ts';
import { weightsOf, withShapingWeights, type ShapingConfig, type ShapingWeights } from '../reward/shaping.ts';
import type { RewardLab } from '../reward/userTerms.ts';
import { collectTokenEpisodes } from '../rollout/tokenLockstep.ts';
import { sampledTokenEpisode, shapeTokenEpisode, type TokenEpisode } from '../rollout/tokenEpisode.ts';
import type { Checkpoint } from '../runs/checkpoint.ts';
import { PAD } from '../text/codec.ts';
import { tokenRolloutBatch, type RolloutBatch, type SequenceFeed } from '../update/batch.ts';
import { TEACHER_LOGPROBS } from '../update/distillLoss.ts';
import { bucketFor, lengthBuckets, neededLengths } from '../update/sequenceScorer.ts';
import { mixSeed, Rng } from '../util/rng.ts';
import { TrainerBase } from './base.ts';
import { checkTokenCheckpoint } from './tokenCheckpoint.ts';
import type { IterationReport } from './trainer.ts';

/** The policy a token distill stage imitates: the previous stage's transformer and its weights. */
export interface TokenTeacher {
  model: TransformerModelConfig;
  /** Whether its weights include a value head (a PPO teacher's do; the head is not used). */
  valueHead: boolean;
  weights: Weights;
}

export interface TokenDistillConfig {
  /** Env registry id (a tool env, or a grid env played as text) and its kwargs. */
  env: { id: string; kwargs?: EnvKwargs };
  /** The student: a transformer over the same vocabulary, context ≤ the teacher's. */
  model: TransformerModelConfig;
  /** The learner's optimizer settings (lr, Adam, grad clip) and klCoef, the KL term's weight. */
  algo: AlgoConfig;
  /** Shaping for the reported rewards (not trained on). */
  shaping: ShapingConfig;
  /** Student episodes per iteration (distinct seeds; also the decoder's rows). */
  episodes: number;
  /** Sequences per train step (static graph batch); an iteration takes ⌈episodes / batch⌉ steps. */
  learnerBatch: number;
  /** Most tokens per action (<eoa> included) before a forced end. */
  maxActionTokens: number;
  /** Tokens per row in a prefill call (1 = off). */
  prefillStep: number;
  /** Master seed: the student's init, env seeds and sampling derive from it. */
  seed: number;
}

/** A distill stage's trainer from its stage config (stageConfig: the student model, klCoef in algo). */
export function createTokenDistillTrainer(config: RunConfig, teacher: TokenTeacher, engine: Engine, rewardLab?: RewardLab): Promise<TokenDistillTrainer> {
  if (config.model.kind !== 'transformer') throw new Error(`token distillation: the student must be a transformer (got ${config.model.kind})`);
  const { rollout, algo } = config;
  return TokenDistillTrainer.create(
    {
      env: config.env,
      model: config.model,
      algo,
      shaping: config.shaping,
      // As many episodes as the stage's algorithm would sample per iteration, from distinct seeds.
      episodes: GROUP_ALGOS.includes(algo.algo) ? rollout.groups * algo.groupSize : rollout.episodes,
      learnerBatch: rollout.learnerBatch,
      maxActionTokens: rollout.maxActionTokens,
      prefillStep: 8,
      seed: config.seed,
    },
    teacher,
    engine,
    rewardLab,
  );
}

/** What one pass of distill steps over a batch reports. */
interface DistillUpdate {
  steps: number;
  allApplied: boolean;
  /** Learner metrics, averaged over steps (`distill/kl` over policy tokens). */
  metrics: Record<string, number>;
  /** The teacher's log-prob of each sampled policy token, in batch order. */
  teacherLogp: number[];
  /** The behaviour (student) log-prob of the same tokens. */
  studentLogp: number[];
}

export class TokenDistillTrainer extends TrainerBase<TokenEpisode> {
  protected readonly kind = 'token-distill';
  protected readonly label = 'TokenDistillTrainer';
  protected readonly proximal = null;
  protected readonly reference = null;
  private readonly rng: Rng;
  /** The teacher's policy runners by sequence length (made on first use). */
  private readonly teacherRunners = new Map<number, Promise<PolicyRunner>>();
  private readonly lens: number[];

  private constructor(
    readonly config: TokenDistillConfig,
    readonly model: TransformerPolicy,
    private readonly teacherModel: TransformerPolicy,
    private readonly teacherWeights: Weights,
    private readonly engine: Engine,
    private readonly envs: ToolEnv[],
    private readonly decoder: TokenDecoder,
    protected readonly learner: Learner,
  ) {
    super();
    this.rng = new Rng(mixSeed(config.seed, 0xd157));
    this.lens = lengthBuckets(model.config.context);
  }

  static async create(config: TokenDistillConfig, teacher: TokenTeacher, engine: Engine, rewardLab?: RewardLab): Promise<TokenDistillTrainer> {
    makeTextEnv(config.env.id, config.env.kwargs); // throws, naming the env, when it has no text form
    // A PPO run's student keeps a value head (untrained: the loss has no value term) so its
    // checkpoint and exported policy have the shape every other stage of the run has.
    const model = makeTokenModel(config.model, algoDescriptor(config.algo.algo).critic);
    const teacherModel = makeTokenModel(teacher.model, teacher.valueHead);
    if (model.config.context > teacherModel.config.context) {
      throw new Error(`token distillation: the student's context (${model.config.context}) must not exceed the teacher's (${teacherModel.config.context}), which scores every position of its episodes`);
    }
    for (const p of teacherModel.params) {
      const n = p.shape.reduce((a, b) => a * b, 1);
      if (teacher.weights[p.name]?.length !== n) throw new Error(`token distillation: the teacher's weights do not fit its model (${p.name})`);
    }
    const weights = initWeights(model, mixSeed(config.seed, 0x1e1));
    const envs = Array.from({ length: config.episodes }, () => makeTextEnv(config.env.id, config.env.kwargs));
    const { algo } = config;
    const adam = { lr: algo.lr, beta1: algo.adamBeta1, beta2: algo.adamBeta2, eps: algo.adamEps, weightDecay: algo.weightDecay, maxGradNorm: algo.maxGradNorm ?? 0 };
    const [decoder, learner] = await Promise.all([
      engine.createDecoder(model, envs.length, weights, config.prefillStep),
      engine.createLearner(model, { batch: config.learnerBatch, loss: { kind: 'distill', klCoef: algo.klCoef }, adam }, weights, lengthBuckets(model.config.context)),
    ]);
    const t = new TokenDistillTrainer(config, model, teacherModel, teacher.weights, engine, envs, decoder, learner);
    if (rewardLab) t.setRewardLab(rewardLab);
    return t;
  }

  private teacherAt(L: number): Promise<PolicyRunner> {
    let r = this.teacherRunners.get(L);
    if (!r) {
      r = this.engine.createPolicy(this.teacherModel, this.config.learnerBatch, this.teacherWeights, L);
      this.teacherRunners.set(L, r);
    }
    return r;
  }

  /** Plays `seeds` with the student without training (temperature 0 = greedy). */
  async evaluate(seeds: readonly number[], temperature = 0): Promise<TokenEpisode[]> {
    const out: TokenEpisode[] = [];
    const n = this.envs.length;
    for (let i = 0; i < seeds.length; i += n) {
      const chunk = seeds.slice(i, i + n);
      const padded = [...chunk, ...Array<number>(n - chunk.length).fill(chunk[0])];
      const rng = new Rng(mixSeed(this.config.seed, 0xe7a1, i));
      const r = await collectTokenEpisodes({ envs: this.envs, seeds: padded, groups: padded.map(() => -1), decoder: this.decoder, rng, temperature, maxActionTokens: this.config.maxActionTokens });
      out.push(...r.episodes.slice(0, chunk.length));
    }
    return out;
  }

  /**
   * One pass of distill steps over the batch, `learnerBatch` sequences at a time, each at the
   * shortest length bucket that holds its sequences; weights are the token mean of each step.
   */
  private async update(b: RolloutBatch): Promise<DistillUpdate> {
    const { T, V, tokens, actions } = b.feed as SequenceFeed;
    const B = this.config.learnerBatch;
    const need = neededLengths(b.mask, b.n, T);
    const u: DistillUpdate = { steps: 0, allApplied: true, metrics: {}, teacherLogp: [], studentLogp: [] };
    const sums: Record<string, number> = {};
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
          u.teacherLogp.push(teacher[(j * L + t) * V + feed.actions[j * L + t]]);
          u.studentLogp.push(b.mu[s * T + t]);
        }
      });
      const res = await this.learner.step({ ...feed, [TEACHER_LOGPROBS]: teacher }, L === T ? undefined : L);
      u.steps++;
      u.allApplied &&= res.applied;
      for (const [k, v] of Object.entries(res.metrics)) sums[k] = (sums[k] ?? 0) + (k === 'distill/kl' ? v * count : v);
      klTokens += count;
    }
    for (const [k, v] of Object.entries(sums)) u.metrics[k] = k === 'distill/kl' ? v / Math.max(1, klTokens) : v / Math.max(1, u.steps);
    return u;
  }

  /** One iteration: collect → teacher scores → distill update → sync → metrics. */
  async step(): Promise<IterationReport<TokenEpisode>> {
    const it = this.iteration;
    const t0 = performance.now();
    const seeds = this.envs.map((_, k) => mixSeed(this.config.seed, it, k));
    const ro = await collectTokenEpisodes({ envs: this.envs, seeds, groups: seeds.map(() => -1), decoder: this.decoder, rng: this.rng, temperature: 1, maxActionTokens: this.config.maxActionTokens });
    const episodes = ro.episodes;
    const t1 = performance.now();
    const batch = tokenRolloutBatch(episodes, this.model.config.context, this.model.numActions);
    const upd = await this.update(batch);
    if (upd.steps > 0) {
      this.version++;
      this.decoder.setWeights(await this.learner.getWeights(), this.version);
    }
    this.iteration++;
    const t2 = performance.now();
    const shaped = episodes.map((ep) => shapeTokenEpisode(ep, this.config.shaping));
    const sampled = episodes.map((ep, i) => sampledTokenEpisode(ep, shaped[i]));
    const ref = referenceStats(upd.studentLogp, upd.teacherLogp);
    const rolloutS = (t1 - t0) / 1000;
    const trainS = (t2 - t1) / 1000;
    const metrics = {
      ...buildIterationMetrics({
        episodes: sampled.map((e) => e.summary),
        perf: { envStepsPerS: ro.envSteps / Math.max(1e-9, rolloutS), tokensPerS: ro.policyTokens / Math.max(1e-9, rolloutS), rolloutS, trainS, kvCacheHitRate: ro.kvCacheHitRate },
      }),
      ...upd.metrics,
      'actor/lr': this.learner.hyper.lr,
      'actor/rollout_entropy': mean(sampled.flatMap((e) => Array.from(e.entropies))),
      'actor/kl_ref': ref.klRef,
      'distill/teacher_prob': ref.refProb,
      'episode/distinct_ratio': new Set(sampled.map((e) => e.actionKey)).size / Math.max(1, sampled.length),
      'episode/forced_end_ratio': sampled.filter((e) => e.forcedEnd).length / Math.max(1, sampled.length),
      'episode/context_limited_ratio': sampled.filter((e) => e.contextLimited).length / Math.max(1, sampled.length),
      'train/updates': upd.steps,
      'train/policy_version': this.version,
      'perf/iteration_s': (performance.now() - t0) / 1000,
    } as IterationReport<TokenEpisode>['metrics'];
    keepApplicable(metrics, { family: this.envs[0].spec.family, policy: 'token' });
    return { iteration: it, metrics, episodes, episodeRewards: Float64Array.from(shaped, (s) => s.total), episodeAdvantages: new Float64Array(episodes.length), allApplied: upd.allApplied };
  }

  /** Reward weights change only what is reported (the KL is the objective); potentials stay 0, as for every token run. */
  protected setRewardWeights(w: Partial<ShapingWeights>): void {
    this.config.shaping = withShapingWeights(this.config.shaping, w, false);
  }

  /**
   * The state after the last finished iteration: the learner (student and Adam), counters, the
   * sampling stream and live hyper. Episode seeds are a function of (seed, iteration, row), and
   * the teacher is the stage's start, which the staged trainer keeps as the checkpoint's
   * `reference`, so a resumed stage computes what an uninterrupted one would.
   */
  checkpoint(): Promise<Checkpoint> {
    return this.checkpointWith({ rng: { sampling: this.rng.getState() }, schedule: null, rewardWeights: weightsOf(this.config.shaping) });
  }

  /** Continues from `cp` on this fresh trainer; every check runs first, so a refused checkpoint leaves it fresh. */
  async restore(cp: Checkpoint): Promise<void> {
    checkTokenCheckpoint(cp, {
      who: 'TokenDistillTrainer.restore',
      trainer: 'token-distill',
      iteration: this.iteration,
      version: this.version,
      hyper: this.learner.hyper,
      rng: ['sampling'],
      model: this.model,
      hasReference: false,
    });
    this.checkImportable();
    const shaping = withShapingWeights(this.config.shaping, cp.rewardWeights, false);
    this.importCommon(cp);
    this.rng.setState(cp.rng.sampling);
    this.config.shaping = shaping;
    this.decoder.setWeights(await this.learner.getWeights(), this.version);
  }

  protected async releaseRollout(): Promise<void> {
    await this.decoder.release();
    await Promise.all([...this.teacherRunners.values()].map(async (r) => (await r).release()));
  }
}
