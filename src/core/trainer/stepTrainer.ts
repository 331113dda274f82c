/**
 * The trainer for step environments (grid worlds, MLP policy) on any RolloutPool, with rollout
 * scheduling of bounded staleness s (0 = synchronous; see ARCHITECTURE.md). Iteration k (the
 * learner holds version k):
 *
 *   launch      collects for batches j ≤ k + s that are not yet running
 *   collect     wait for batch k (perf/learner_idle_ratio is this wait's share of the iteration);
 *               dynamic sampling collects refill rounds right away
 *   score       env reward + shaping; KL to the reference as a per-step reward penalty
 *   advantages  GAE (PPO) or per-episode estimators (update/advantages.ts, over the rollout batch)
 *   weights/TIS aggregation weights; stale steps' π_old recomputed at version k and, with TIS,
 *               their advantage weighted by min(π_old/μ, cap)
 *   update      epochs × minibatches of the ONNX train step (update/update.ts; rows: update/rowFeed.ts)
 *   sync        version k + 1 to the pool (episodes in flight continue under it: partial rollouts)
 *   metrics
 *
 * The bound: batch j is launched only once the pool holds version ≥ j − s, versions only grow
 * while it plays, and it is trained at version j, so every step in it is ≤ s versions old. With
 * s = 0, batch k is launched after version k is synced and trained before version k + 1 exists:
 * the synchronous trainer. Dynamic sampling's refill rounds queue behind batches in flight, so
 * they get weights at least as new and the bound holds; an empty batch skips the update without a
 * new version. Not here: `keepObservations` replays (call the pool directly).
 */
import { GROUP_ALGOS } from '../algos/config.ts';
import { algoDescriptor } from '../algos/registry/index.ts';
import { agentCreditMetrics } from '../algos/agentCredit.ts';
import { buildIterationMetrics, referenceStats, summarizeEpisode } from '../algos/metrics.ts';
import { groupStats, sampleWithDynamicSampling, samplingStats, type DynamicSamplingState } from '../algos/sampling.ts';
import { makeEnv } from '../envs/index.ts';
import { MlpPolicy } from '../models/mlp.ts';
import { initWeights, type Weights } from '../models/types.ts';
import { gridGoalDistance } from '../reward/potentials.ts';
import { shapeEpisode, weightsOf, withShapingWeights, type EpisodeRecord, type ShapedReward, type ShapingConfig, type ShapingWeights } from '../reward/shaping.ts';
import { mixSeed, Rng } from '../util/rng.ts';
import type { Engine, Learner } from '../engine/types.ts';
import { buildPoolModel, collectGreedyBaselines, gridMlpSpec, SerialRolloutPool, serializeEngine, type CollectRequest, type CollectResult, type PoolModelSpec, type RolloutPool } from '../rollout/stepPool.ts';
import { stepStateKeys, type StepEpisode } from '../rollout/stepEpisode.ts';
import { trainStepOptions } from '../update/hyper.ts';
import { stepRolloutBatch } from '../update/batch.ts';
import { RowScorer } from '../update/offPolicy.ts';
import { batchMetrics } from '../update/metrics.ts';
import { scoreBatch, trainBatch, type ScoredBatch, type TrainedBatch } from './phases.ts';
import type { StepTrainerConfig } from './stepConfig.ts';
import { addTermRewards } from '../reward/rewardTerms.ts';
import { keepApplicable, type MetricRun } from '../metrics/lookup.ts';
import { addRewardLabMetrics, scoreWithRewardLab, type RewardLab } from '../reward/userTerms.ts';
import { buildGridStepRecords } from '../reward/stepRecord.ts';
import type { GridEnv } from '../envs/types.ts';
import type { IterationReport } from './trainer.ts';
import type { Checkpoint } from '../runs/checkpoint.ts';
import { TrainerBase } from './base.ts';

/** Makes the rollout pool for a model and its initial weights (version 0). Default: in-thread serial pool. */
export type PoolFactory = (model: PoolModelSpec, weights: Weights, engine: Engine) => Promise<RolloutPool>;

/** User reward terms for a run (reward lab); defined beside the shared scoring helper. */
export type { RewardLab } from '../reward/userTerms.ts';

/** A grid env played by an MLP, one action per env step: what decides which metric keys apply. */
const GRID_STEP_RUN: MetricRun = { family: 'grid', policy: 'step' };

export const serialPoolFactory: PoolFactory = async (model, weights, engine) => new SerialRolloutPool({ engine, model, weights });

/** What the collect phase hands on: the batch to train on and what the metrics need of every round. */
interface Collected {
  /** The batch (after dynamic sampling; group ids renumbered in batch order). */
  episodes: StepEpisode[];
  /** Every episode sampled this iteration. */
  sampled: StepEpisode[];
  /** Dynamic-sampling state (group algorithms only). */
  ds: DynamicSamplingState<{ rewards: Float64Array; episodes: StepEpisode[] }> | null;
  envSteps: number;
  busyS: number;
}

/** What the shaper and the episode metrics read from a step episode. */
function recordOf(ep: StepEpisode): EpisodeRecord {
  return { rewards: ep.rewards, infos: ep.infos, terminated: ep.terminated, truncated: ep.truncated, policyTokens: ep.actions.length, potentials: ep.potentials };
}

export class StepTrainer extends TrainerBase<StepEpisode> {
  protected readonly kind = 'step';
  protected readonly label = 'StepTrainer';
  private shapingWeights: ShapingWeights;
  /** The base shaping config: `config.shaping` with live weight edits (setHyper) applied. */
  private shaping: ShapingConfig;
  private readonly needsPotential: boolean;
  /** Most policy versions a trained step may lag the learner (0 = synchronous). */
  private readonly maxStaleness: number;
  /** Minibatch shuffling (sampling randomness lives in the pool, per slot). */
  private readonly rng: Rng;
  /** Batches launched, by iteration; a batch leaves the map when trained. */
  private readonly inflight = new Map<number, Promise<CollectResult>>();
  private nextLaunch = 0;
  /** Pool activity: collects running, and the idle time accumulated while none ran (ms). */
  private running = 0;
  private idleMs = 0;
  private idleSince = performance.now();
  /** A fresh env for replaying episodes into step records (user terms only). */
  private replayEnv: GridEnv | null = null;

  private constructor(
    readonly config: StepTrainerConfig,
    readonly model: MlpPolicy,
    readonly pool: RolloutPool,
    protected readonly learner: Learner,
    /** π at the learner's current version, for stale steps' π_old (batch = learnerBatch). */
    protected readonly proximal: RowScorer,
    protected readonly reference: RowScorer | null,
    /** The env's time limit (steps), for 'constant' aggregation's default length. */
    private readonly maxSteps: number,
    /** Multi-agent envs: the agents' names (per-agent credit metrics); null for one agent. */
    private readonly agentNames: readonly string[] | null = null,
  ) {
    super();
    this.rng = new Rng(mixSeed(config.seed, 0x5a3));
    this.shaping = config.shaping;
    this.schedule = config.schedule ?? null;
    this.shapingWeights = this.scheduledWeights(config.shaping);
    this.needsPotential =
      weightsOf(config.shaping).potential !== 0 || (config.schedule?.stages.some((st) => (st.weights.potential ?? 0) !== 0) ?? false);
    this.maxStaleness = config.scheduling?.maxStaleness ?? 0;
    if (!(Number.isInteger(this.maxStaleness) && this.maxStaleness >= 0)) throw new RangeError(`scheduling.maxStaleness must be an integer ≥ 0, got ${this.maxStaleness}`);
  }

  static async create(config: StepTrainerConfig, rawEngine: Engine, makePool: PoolFactory = serialPoolFactory, initial?: Weights, rewardLab?: RewardLab): Promise<StepTrainer> {
    const { algo } = config;
    // One lock over every session in this thread (an in-thread pool interleaves with the learner).
    const engine = serializeEngine(rawEngine);
    const spec = gridMlpSpec(config.env, { hidden: config.model.hidden, activation: config.model.activation, valueHead: algoDescriptor(algo.algo).critic }, config.model.agents ?? 'shared');
    const model = buildPoolModel(spec);
    const weights = initial ?? initWeights(model, mixSeed(config.seed, 0x1e1));
    const useRef = algo.klCoef > 0;
    const { teacher } = config;
    if (teacher && !useRef) throw new Error('StepTrainer: a teacher is the KL reference, so it needs algo.klCoef > 0');
    const opts = trainStepOptions(algo, config.learnerBatch);
    const envSpec = makeEnv(config.env.id, config.env.kwargs).spec;
    const maxSteps = envSpec.maxSteps;
    const [pool, learner, proximal, reference] = await Promise.all([
      makePool(spec, weights, engine),
      engine.createLearner(model, opts, weights),
      engine.createPolicy(model, config.learnerBatch, weights),
      teacher
        ? engine.createPolicy(buildPoolModel(gridMlpSpec(config.env, { hidden: teacher.model.hidden, activation: teacher.model.activation, valueHead: teacher.valueHead }, teacher.model.agents ?? 'shared')), config.learnerBatch, teacher.weights)
        : useRef
          ? engine.createPolicy(model, config.learnerBatch, weights)
          : Promise.resolve(null),
    ]);
    const A = model.numActions;
    const trainer = new StepTrainer(config, model, pool, learner, new RowScorer(proximal, A), reference ? new RowScorer(reference, A) : null, maxSteps, envSpec.agents && envSpec.agents.length > 1 ? envSpec.agents : null);
    if (rewardLab) trainer.setRewardLab(rewardLab);
    return trainer;
  }

  /**
   * The user-terms part of the score phase: replay each episode from its seed into step records,
   * score them in the sandbox, resolve non-finite values, and attach the per-step values to the
   * episode (`termRewards`), which the shaper adds to the env reward.
   */
  private async scoreUserTerms(episodes: readonly StepEpisode[]): Promise<void> {
    const lab = this.rewardLab;
    if (!lab || episodes.length === 0) return;
    this.replayEnv ??= makeEnv(this.config.env.id, this.config.env.kwargs) as GridEnv;
    const records = episodes.map((ep) => buildGridStepRecords(this.replayEnv!, ep));
    const r = await scoreWithRewardLab(lab, records);
    this.termsSkipped += r.skipped;
    episodes.forEach((ep, i) => (ep.termRewards = r.values[i]));
  }

  /** The batch of iteration `iteration`: seeds, groups, sampling seed (a pure function of the config). */
  requestFor(iteration: number, round = 0): CollectRequest {
    const { algo } = this.config;
    const seeds: number[] = [];
    const groups: number[] = [];
    if (GROUP_ALGOS.includes(algo.algo)) {
      for (let g = 0; g < this.config.groups; g++) {
        const s = mixSeed(this.config.seed, iteration, g, round);
        for (let k = 0; k < algo.groupSize; k++) {
          seeds.push(s);
          groups.push(g);
        }
      }
    } else {
      for (let e = 0; e < this.config.episodes; e++) {
        seeds.push(mixSeed(this.config.seed, iteration, e, round));
        groups.push(-1);
      }
    }
    return {
      env: this.config.env,
      seeds,
      groups,
      samplingSeed: mixSeed(this.config.seed, 0x5a3, iteration, round),
      // Batches launched ahead (staleness ≥ 1) may be shaped by a later schedule stage: record Φ
      // whenever any stage (or the base config) weights the potential term.
      potential: this.needsPotential ? gridGoalDistance.id : undefined,
    };
  }

  /** Start every batch the staleness bound allows now (pool version = learner version). */
  private launch(): void {
    const limit = this.iteration + this.maxStaleness;
    while (this.nextLaunch <= limit) {
      const j = this.nextLaunch++;
      if (this.running++ === 0) this.idleMs += performance.now() - this.idleSince;
      const p = this.pool.collect(this.requestFor(j)).finally(() => {
        if (--this.running === 0) this.idleSince = performance.now();
      });
      p.catch(() => undefined); // observed when its iteration awaits it
      this.inflight.set(j, p);
    }
  }

  private poolIdleMs(now: number): number {
    return this.idleMs + (this.running === 0 ? now - this.idleSince : 0);
  }

  protected setRewardWeights(w: Partial<ShapingWeights>): void {
    const shaping = withShapingWeights(this.shaping, w, this.needsPotential);
    this.shaping = shaping;
    this.shapingWeights = this.scheduledWeights(this.shaping);
  }

  /**
   * Plays `seeds` with the pool's current policy without training (temperature 0 = greedy).
   * Queued behind batches in flight, so it sees the newest version synced when it starts.
   */
  async evaluate(seeds: readonly number[], temperature = 0): Promise<StepEpisode[]> {
    const r = await this.pool.collect({ env: this.config.env, seeds, groups: seeds.map(() => -1), samplingSeed: mixSeed(this.config.seed, 0xe7a1), temperature });
    return r.episodes;
  }

  /**
   * ReMax's baselines for iteration `iteration`: one greedy (temperature 0) episode per group
   * from the group's start seed, played before the update by the policy that sampled the batch
   * (remax runs are synchronous), and scored as the sampled episodes are (shaping and user terms;
   * a KL-as-reward penalty is not charged to it). Its env steps count in the iteration's compute.
   */
  private async greedyBaselines(iteration: number, episodes: readonly StepEpisode[], shape: (ep: StepEpisode) => ShapedReward): Promise<{ totals: Float64Array; envSteps: number; success: number }> {
    const r = await collectGreedyBaselines(this.pool, episodes, this.config.algo.groupSize, {
      env: this.config.env,
      samplingSeed: mixSeed(this.config.seed, 0x4e3a, iteration),
      potential: this.needsPotential ? gridGoalDistance.id : undefined,
    });
    await this.scoreUserTerms(r.episodes);
    return {
      totals: Float64Array.from(r.episodes, (ep) => shape(ep).total),
      envSteps: r.envSteps,
      success: r.episodes.filter((ep) => ep.success).length / Math.max(1, r.episodes.length),
    };
  }

  /** One learner iteration on the oldest batch; rollouts of later batches keep running. */
  async step(): Promise<IterationReport<StepEpisode>> {
    const it = this.iteration;
    const t0 = performance.now();
    const idle0 = this.poolIdleMs(t0);
    this.launch();
    const ro = await this.inflight.get(it)!;
    this.inflight.delete(it);
    const report = await this.trainOn(ro, { t0, idle0 });
    this.launch();
    return report;
  }

  /**
   * The collect phase after the first round: with a group algorithm, dynamic sampling collects
   * refill rounds until the batch is full or the round cap is hit. Every episode sampled is kept
   * for the outcome metrics (the trained batch is filtered toward mixed outcomes and would bias
   * them).
   */
  private async collectRounds(ro: CollectResult, shape: (ep: StepEpisode) => ShapedReward): Promise<Collected> {
    const { algo } = this.config;
    const c: Collected = { episodes: ro.episodes, sampled: [...ro.episodes], ds: null, envSteps: ro.envSteps, busyS: ro.busyS };
    await this.scoreUserTerms(ro.episodes);
    if (!GROUP_ALGOS.includes(algo.algo)) return c;
    const G = algo.groupSize;
    const it = this.iteration;
    const r = await sampleWithDynamicSampling(
      async (round) => {
        let cur = ro;
        if (round > 0) {
          cur = await this.pool.collect(this.requestFor(it, round));
          await this.scoreUserTerms(cur.episodes);
          c.sampled.push(...cur.episodes);
          c.envSteps += cur.envSteps;
          c.busyS += cur.busyS;
        }
        return Array.from({ length: this.config.groups }, (_, g) => {
          const eps = cur.episodes.slice(g * G, (g + 1) * G);
          return { episodes: eps, rewards: Float64Array.from(eps, (ep) => shape(ep).total) };
        });
      },
      this.config.groups,
      algo.dynamicSampling,
    );
    c.ds = r.state;
    c.episodes = r.batch.flatMap((grp, gi) => grp.episodes.map((ep) => ({ ...ep, group: gi })));
    return c;
  }

  /**
   * Train on one collected batch as iteration `this.iteration`, then sync the new version to the
   * pool. step() is launch + wait + trainOn; calling trainOn with `pool.collect(requestFor(k))`
   * collected right before is, by construction, the synchronous trainer (tests use it so).
   */
  async trainOn(ro: CollectResult, timing?: { t0: number; idle0: number }): Promise<IterationReport<StepEpisode>> {
    const { algo } = this.config;
    const shaping = this.shaping;
    const it = this.iteration;
    const t1 = performance.now();
    const t0 = timing?.t0 ?? t1;
    const idle0 = timing?.idle0 ?? this.poolIdleMs(t0);
    const shape = (ep: StepEpisode) => addTermRewards(shapeEpisode(recordOf(ep), shaping, this.shapingWeights), ep.termRewards);
    const rewardVersion = this.rewardLab?.version ?? 0;
    this.termsSkipped = 0;
    const c = await this.collectRounds(ro, shape);
    const episodes = c.episodes;
    if (episodes.length === 0) return this.skipEmpty(c, shape);

    const batch = stepRolloutBatch(episodes, this.model.config.obsDim, this.maxSteps);
    const kind = algoDescriptor(algo.algo).advantage.kind;
    const greedy = kind === 'greedy-baseline' ? await this.greedyBaselines(it, episodes, shape) : null;
    if (greedy) c.envSteps += greedy.envSteps;
    const ctx = { groupSize: algo.groupSize, greedyTotals: greedy?.totals, stateKeys: kind === 'step-groups' ? episodes.map(stepStateKeys) : undefined };
    const sc = await scoreBatch(algo, batch, episodes.map(shape), this.reference, this.ema, ctx);
    this.ema = sc.adv.ema;
    const tr = await trainBatch(this.learner, algo, sc, this.version, this.proximal, this.rng);
    // Bookkeeping check of the bound (a violation is a scheduler bug, not a data property).
    if (tr.off.stale.max > this.maxStaleness) throw new Error(`StepTrainer: batch ${it} has a step ${tr.off.stale.max} versions old (max ${this.maxStaleness})`);
    const t3 = performance.now();

    this.version++;
    const w = await this.learner.getWeights();
    this.proximal.setWeights(w, this.version);
    await this.pool.setWeights(w, this.version);
    this.iteration++;
    const t4 = performance.now();

    const times = { t0, t1, t2: t1 + tr.offS * 1000, t3, t4, idle0 };
    const metrics = this.iterationMetrics(c, shape, shaping, sc, tr, times);
    this.rewardLabMetrics(metrics, rewardVersion);
    if (sc.refLogp && algo.klMode === 'reward') this.referenceMetrics(metrics, episodes, sc.refLogp, sc.totals);
    if (greedy) {
      metrics['remax/greedy_reward_mean'] = greedy.totals.reduce((a, b) => a + b, 0) / Math.max(1, greedy.totals.length);
      metrics['remax/greedy_success_rate'] = greedy.success;
    }
    keepApplicable(metrics, GRID_STEP_RUN);
    return { iteration: it, metrics, episodes, episodeRewards: sc.totals, episodeAdvantages: sc.adv.episodeAdv, allApplied: tr.upd.allApplied };
  }

  /** Every group had zero spread and the round cap was hit: nothing to learn from, no new version. */
  private skipEmpty(c: Collected, shape: (ep: StepEpisode) => ShapedReward): IterationReport<StepEpisode> {
    const it = this.iteration++;
    const ds = c.ds!;
    const m = {
      ...buildIterationMetrics({ episodes: c.sampled.map((ep) => summarizeEpisode(recordOf(ep), shape(ep))), groups: samplingStats(ds) }),
      'groups/dropped': ds.droppedGroups,
      'groups/sampling_rounds': ds.rounds,
      // Multi-agent: subgoals over what was sampled; no step was trained, so no advantage to split.
      ...(this.agentNames ? agentCreditMetrics(this.agentNames, [], [], c.sampled) : {}),
    };
    this.rewardLabMetrics(m, this.rewardLab?.version ?? 0);
    keepApplicable(m, GRID_STEP_RUN);
    return { iteration: it, metrics: m as IterationReport<StepEpisode>['metrics'], episodes: [], episodeRewards: new Float64Array(0), episodeAdvantages: new Float64Array(0), allApplied: true };
  }

  /**
   * KL-as-reward: `actor/kl_ref` from the penalty's own log-probs (the train step reports it only
   * with klMode 'loss'). Distilling (a teacher), also `distill/teacher_prob`, and the group spread
   * of the totals that were trained on: the KL reward is the signal then, and the env's outcome
   * alone (weight 0 by default) would read as no spread at all.
   */
  private referenceMetrics(m: Record<string, number>, episodes: readonly StepEpisode[], refLogp: Float32Array, totals: Float64Array): void {
    const r = referenceStats(episodes.flatMap((ep) => Array.from(ep.logprobs)), refLogp);
    m['actor/kl_ref'] = r.klRef;
    if (!this.config.teacher) return;
    m['distill/teacher_prob'] = r.refProb;
    if (GROUP_ALGOS.includes(this.config.algo.algo)) {
      const G = this.config.algo.groupSize;
      const g = groupStats(Array.from({ length: Math.floor(totals.length / G) }, (_, k) => totals.subarray(k * G, (k + 1) * G)));
      m['groups/frac_zero_std'] = g.fracZeroStd;
      m['groups/reward_std_mean'] = g.rewardStdMean;
    }
  }

  /** `reward/version` (the user-terms code that scored this iteration; 0 = none) and `reward/terms_skipped`. */
  private rewardLabMetrics(m: Record<string, number>, version: number): void {
    addRewardLabMetrics(m, version, this.termsSkipped);
  }

  /** The metrics phase (the shaping schedule advances on this iteration's success rate). */
  private iterationMetrics(
    c: Collected,
    shape: (ep: StepEpisode) => ShapedReward,
    /** The shaping config this iteration was scored with (a live edit may have replaced this.shaping since). */
    shaping: ShapingConfig,
    sc: ScoredBatch,
    tr: TrainedBatch,
    t: { t0: number; t1: number; t2: number; t3: number; t4: number; idle0: number },
  ): IterationReport<StepEpisode>['metrics'] {
    const { episodes, ds } = c;
    const { batch, adv } = sc;
    const iterS = (t.t4 - t.t0) / 1000;
    const waitS = (t.t1 - t.t0) / 1000;
    const trainS = (t.t4 - t.t1) / 1000;
    const metrics = {
      ...batchMetrics({
        sampled: c.sampled.map((ep) => ({ summary: summarizeEpisode(recordOf(ep), shape(ep)), entropies: ep.entropies, actionKey: ep.actions.join(',') })),
        batch,
        trainedSuccess: episodes.map((ep) => ep.success),
        adv,
        off: tr.off,
        tis: tr.tis,
        upd: tr.upd,
        lr: this.learner.hyper.lr,
        version: this.version,
        groups: ds ? samplingStats(ds) : undefined,
        extra: ds ? { groupsDropped: ds.droppedGroups, samplingRounds: ds.rounds } : undefined,
        perf: {
          envStepsPerS: c.envSteps / Math.max(1e-9, c.busyS),
          tokensPerS: batch.size / Math.max(1e-9, c.busyS),
          rolloutS: c.busyS,
          trainS,
          learnerIdleRatio: waitS / Math.max(1e-9, iterS),
          rolloutIdleRatio: Math.min(1, (this.poolIdleMs(t.t4) - t.idle0) / Math.max(1e-9, t.t4 - t.t0)),
        },
      }),
      'perf/iteration_s': iterS,
      'perf/episodes_per_s': episodes.length / Math.max(1e-9, iterS),
      'perf/tis_s': (t.t2 - t.t1) / 1000,
      'perf/update_s': (t.t3 - t.t2) / 1000,
    };
    if (this.agentNames) Object.assign(metrics, agentCreditMetrics(this.agentNames, episodes, adv.adv, c.sampled));
    if (this.schedule) this.shapingWeights = this.advanceSchedule(metrics, shaping);
    return metrics as IterationReport<StepEpisode>['metrics'];
  }

  /**
   * The full state after the last finished iteration. Call between steps: with staleness ≥ 1,
   * batches already launched for later iterations are not part of it (a resumed run collects
   * them again with the restored weights, so async resumes are valid but not bit-identical;
   * synchronous ones are).
   */
  checkpoint(): Promise<Checkpoint> {
    return this.checkpointWith({ rng: { minibatch: this.rng.getState() }, schedule: this.scheduleCheckpoint(), rewardWeights: weightsOf(this.shaping) });
  }

  /**
   * Continues from `cp` on this fresh trainer (before its first step): the learner takes the
   * parameters and Adam state, the rollout pool and the proximal policy the weights at the
   * checkpoint's version, and every counter, stream and schedule its saved value. Everything is
   * checked first; a refused checkpoint leaves the trainer fresh.
   */
  async restore(cp: Checkpoint): Promise<void> {
    if (cp.trainer !== 'step') throw new Error(`StepTrainer.restore: the checkpoint was written by the '${cp.trainer}' trainer`);
    if (this.iteration !== 0 || this.nextLaunch !== 0) throw new Error('StepTrainer.restore: only a fresh trainer can be restored (it has trained or launched batches)');
    this.checkImportable();
    const unknown = Object.keys(cp.hyper).filter((k) => !(k in this.learner.hyper));
    if (unknown.length > 0) throw new Error(`StepTrainer.restore: hyper.${unknown[0]} is not a hyperparameter of this run's train step (another algorithm?)`);
    if (!cp.rng.minibatch) throw new Error('StepTrainer.restore: rng.minibatch is missing');
    this.checkSchedule(cp);
    const shaping = withShapingWeights(this.config.shaping, cp.rewardWeights, this.needsPotential);
    this.importCommon(cp);
    this.rng.setState(cp.rng.minibatch);
    this.shaping = shaping;
    this.shapingWeights = this.scheduledWeights(this.shaping);
    this.nextLaunch = cp.iteration;
    const w = await this.learner.getWeights();
    this.proximal.setWeights(w, this.version);
    // At version 0 nothing was trained, so the pool already holds these weights (create's initial
    // ones); the KL reference stays the initial weights of this config, as in the original run.
    await this.pool.setWeights(w, this.version);
  }

  /** Waits for batches in flight (their results are dropped), then closes the pool. */
  protected async releaseRollout(): Promise<void> {
    await Promise.allSettled(this.inflight.values());
    this.inflight.clear();
    await this.pool.close();
  }
}

