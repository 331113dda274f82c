/**
 * The collector of step environments (grid worlds, MLP policy) on any RolloutPool, with the
 * scheduler's staleness bound s (0 = synchronous; see ARCHITECTURE.md). For iteration k (the
 * learner holds version k):
 *
 *   launch      collects for batches j ≤ k + s that are not yet running
 *   begin       wait for batch k (perf/learner_idle_ratio is this wait's share of the iteration);
 *               the Trainer's collect pipeline (collect.ts) then plays it as round 0: refill rounds
 *               are collected right away, user reward terms score each round's episodes replayed
 *               from their seeds
 *   sync        version k + 1 to the pool (episodes in flight continue under it: partial
 *               rollouts) and to the proximal policy; then launch the batches the bound now allows
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
import { referenceStats, summarizeEpisode } from '../metrics/iterationMetrics.ts';
import { groupStats } from '../algos/sampling.ts';
import { makeEnv } from '../envs/index.ts';
import type { MlpPolicy } from '../models/mlp.ts';
import { initWeights, type Weights } from '../models/types.ts';
import { gridStepsToSuccess } from '../reward/potentials.ts';
import { shapeEpisode, weightsOf, type EpisodeRecord } from '../reward/shaping.ts';
import { mixSeed, Rng } from '../util/rng.ts';
import type { Engine, Learner } from '../engine/types.ts';
import { buildPoolModel, gridMlpSpec, SerialRolloutPool, type CollectRequest, type CollectResult, type PoolModelSpec, type RolloutPool } from '../rollout/stepPool.ts';
import { serializeEngine } from '../engine/serialize.ts';
import { stepStateKeys, type StepEpisode } from '../rollout/stepEpisode.ts';
import { trainStepOptions } from '../update/hyper.ts';
import { stepRolloutBatch } from '../update/batch.ts';
import { RowScorer } from '../update/offPolicy.ts';
import type { StepTrainerConfig } from './stepConfig.ts';
import { addTermRewards } from '../reward/rewardTerms.ts';
import type { MetricRun } from '../metrics/lookup.ts';
import type { RewardLab } from '../reward/userTerms.ts';
import { buildGridStepRecords } from '../reward/stepRecord.ts';
import type { GridEnv } from '../envs/types.ts';
import type { Checkpoint } from '../runs/checkpoint.ts';
import { schedulerFor, type Scheduler } from './scheduler.ts';
import { type Collected, type IterationTimes, type Skipped } from './collector.ts';
import type { Collector } from './collectorShell.ts';
import { collectedOf, skippedMetrics, type Gathered, type PlayedGroup, type RolloutSource } from './collect.ts';
import { RewardScoring } from './rewards.ts';
import { Trainer } from './trainer.ts';
import type { ScoredBatch, TrainedBatch } from './phases.ts';
import { allOrRelease } from '../util/allOrRelease.ts';
import { roundWeights } from '../models/precision.ts';

/** The potential Φ grid runs record for potential-based shaping (by id, see rollout/stepPool.ts POTENTIALS). */
export const TRAINER_POTENTIAL = gridStepsToSuccess.id;

/** Makes the rollout pool for a model and its initial weights (version 0). Default: in-thread serial pool. */
export type PoolFactory = (model: PoolModelSpec, weights: Weights, engine: Engine) => Promise<RolloutPool>;

export const serialPoolFactory: PoolFactory = async (model, weights, engine) => new SerialRolloutPool({ engine, model, weights });

/** What the metrics need of one collect: the trained episodes, every sampled one, and the pool's counts. */
interface Rounds {
  /** The batch (after dynamic sampling; group ids renumbered in batch order). */
  episodes: StepEpisode[];
  /** Every episode sampled this iteration. */
  sampledEpisodes: StepEpisode[];
  envSteps: number;
  busyS: number;
}

/** What the shaper and the episode metrics read from a step episode. */
function recordOf(ep: StepEpisode): EpisodeRecord {
  return { rewards: ep.rewards, infos: ep.infos, terminated: ep.terminated, truncated: ep.truncated, policyTokens: ep.actions.length, potentials: ep.potentials, potentialFloor: ep.potentialFloor };
}

/** A grid env played by an MLP, one action per env step: what decides which metric keys apply. */
const GRID_STEP_RUN: MetricRun = { family: 'grid', policy: 'step' };

export class StepCollector implements Collector<StepEpisode> {
  readonly kind = 'step';
  readonly metricRun = GRID_STEP_RUN;
  /** The run's algorithm: the pipeline's groups, resampling and needs. */
  get algo() {
    return this.config.algo;
  }
  /** Minibatch shuffling (sampling randomness lives in the pool, per slot). */
  readonly rng: Rng;
  /** Batches launched, by iteration; a batch leaves the map when collected. */
  private readonly inflight = new Map<number, Promise<CollectResult>>();
  private nextLaunch = 0;
  /** Batches are handed in by the caller (supply), none launched here. */
  private manual = false;
  /** The iteration being collected or trained (the next sync launches for the one after it). */
  private current = 0;
  /** Pool activity: collects running, and the idle time accumulated while none ran (ms). */
  private running = 0;
  private idleMs = 0;
  private idleSince = performance.now();
  /** A fresh env for replaying episodes into step records (user terms only). */
  private replayEnv: GridEnv | null = null;

  constructor(
    readonly config: StepTrainerConfig,
    readonly model: MlpPolicy,
    readonly pool: RolloutPool,
    /** π at the learner's current version, for stale steps' π_old (batch = learnerBatch). */
    readonly proximal: RowScorer,
    readonly reference: RowScorer | null,
    private readonly rewards: RewardScoring,
    private readonly scheduler: Scheduler,
    /** Whether Φ is recorded (any stage, or the base config, weights the potential term). */
    private readonly needsPotential: boolean,
    /** The env's time limit (steps), for 'constant' aggregation's default length. */
    private readonly maxSteps: number,
    /** Multi-agent envs: the agents' names (per-agent credit metrics); null for one agent. */
    private readonly agentNames: readonly string[] | null,
  ) {
    this.rng = new Rng(mixSeed(config.seed, 0x5a3));
  }

  /**
   * The user-terms part of the score phase: replay each episode from its seed into step records,
   * score them in the sandbox, and attach the per-step values to the episode (`termRewards`),
   * which the shaper adds to the env reward.
   */
  private async scoreUserTerms(episodes: readonly StepEpisode[]): Promise<void> {
    if (!this.rewards.lab || episodes.length === 0) return;
    this.replayEnv ??= makeEnv(this.config.env.id, this.config.env.kwargs) as GridEnv;
    const values = await this.rewards.userTerms(episodes.map((ep) => buildGridStepRecords(this.replayEnv!, ep)));
    episodes.forEach((ep, i) => (ep.termRewards = values![i]));
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
      potential: this.needsPotential ? TRAINER_POTENTIAL : undefined,
    };
  }

  /** Start every batch the staleness bound allows while the learner trains `iteration` (pool version = learner version). */
  private launch(iteration: number): void {
    if (this.manual) return;
    const limit = this.scheduler.launchLimit(iteration);
    while (this.nextLaunch <= limit) {
      const j = this.nextLaunch++;
      this.track(j, () => this.pool.collect(this.requestFor(j)));
    }
  }

  /** Runs batch `j`'s collect, counting the pool busy while it runs. */
  private track(j: number, collect: () => Promise<CollectResult>): void {
    if (this.running++ === 0) this.idleMs += performance.now() - this.idleSince;
    const p = collect().finally(() => {
      if (--this.running === 0) this.idleSince = performance.now();
    });
    p.catch(() => undefined); // observed when its iteration awaits it
    this.inflight.set(j, p);
  }

  /**
   * Hands in batch `iteration`, collected by the caller (e.g. `pool.collect(requestFor(k))` right
   * before): the next collect trains on it, and from then on this collector launches nothing
   * itself. Collect-then-train, by construction the synchronous trainer (tests compare the two).
   */
  supply(iteration: number, ro: CollectResult): void {
    this.manual = true;
    this.track(iteration, () => Promise.resolve(ro));
  }

  private poolIdleMs(now: number): number {
    return this.idleMs + (this.running === 0 ? now - this.idleSince : 0);
  }

  /**
   * Plays `seeds` with the pool's current policy without training (temperature 0 = greedy).
   * Queued behind batches in flight, so it sees the newest version synced when it starts.
   */
  async evaluate(seeds: readonly number[], temperature: number): Promise<StepEpisode[]> {
    const r = await this.pool.collect({ env: this.config.env, seeds, groups: seeds.map(() => -1), samplingSeed: mixSeed(this.config.seed, 0xe7a1), temperature });
    return r.episodes;
  }

  /** The round-0 batch waited for by `collect`, and the pool's counts over this collect's rounds. */
  private round0: CollectResult | null = null;
  private counts = { envSteps: 0, busyS: 0 };

  /** This collect's sampling rounds: round 0 is the batch launched ahead; refills are collected now. */
  readonly rollouts: RolloutSource<StepEpisode, PlayedGroup<StepEpisode>> = {
    play: async (it, round) => {
      const ro = round === 0 ? this.round0! : await this.pool.collect(this.requestFor(it, round));
      this.counts.envSteps += ro.envSteps;
      this.counts.busyS += ro.busyS;
      if (!GROUP_ALGOS.includes(this.config.algo.algo)) return [{ episodes: ro.episodes }];
      const G = this.config.algo.groupSize;
      return Array.from({ length: this.config.groups }, (_, g) => ({ episodes: ro.episodes.slice(g * G, (g + 1) * G) }));
    },
    score: async (episodes) => {
      await this.scoreUserTerms(episodes);
      const { shaping, weights } = this.rewards;
      return episodes.map((ep) => addTermRewards(shapeEpisode(recordOf(ep), shaping, weights), ep.termRewards, this.rewards.lab?.logOnly));
    },
    greedy: async (it, seeds) => {
      const r = await this.pool.collect({ env: this.config.env, seeds, groups: seeds.map(() => -1), samplingSeed: mixSeed(this.config.seed, 0x4e3a, it), temperature: 0, potential: this.needsPotential ? TRAINER_POTENTIAL : undefined });
      return { episodes: r.episodes, envSteps: r.envSteps };
    },
    stateKeys: (ep) => stepStateKeys(ep),
    summarize: (ep, shaped) => ({ summary: summarizeEpisode(recordOf(ep), shaped), entropies: ep.entropies, actionKey: ep.actions.join(',') }),
  };

  /** When the collect under way began, and the pool's idle ms then; when its round-0 batch arrived. */
  private began = { t0: 0, idle0: 0, waited: 0 };

  /** Waits for batch `it` (rollouts of later batches keep running): the pipeline's round 0; refills are played on demand. */
  async begin(it: number): Promise<number> {
    const t0 = performance.now();
    const idle0 = this.poolIdleMs(t0);
    this.current = it;
    this.launch(it);
    this.round0 = await this.inflight.get(it)!;
    this.inflight.delete(it);
    this.began = { t0, idle0, waited: performance.now() };
    this.counts = { envSteps: 0, busyS: 0 };
    return this.config.groups;
  }

  /** The gathered batch as step rows (group ids renumbered in batch order), with the pool's counts. */
  finish(g: Gathered<StepEpisode, PlayedGroup<StepEpisode>>): Collected<StepEpisode> | Skipped {
    this.round0 = null;
    const { t0, idle0, waited } = this.began;
    const c: Rounds = { ...g, ...this.counts };
    if (g.greedy) c.envSteps += g.greedy.envSteps;
    // Multi-agent: subgoals over what was sampled; no step was trained, so no advantage to split.
    if (g.episodes.length === 0) return { skipped: { ...skippedMetrics(g), ...(this.agentNames ? agentCreditMetrics(this.agentNames, [], [], g.sampledEpisodes) : {}) } };
    // Group ids renumbered in batch order (dynamic sampling keeps groups from several rounds).
    const episodes = g.groups.flatMap((grp, gi) => grp.episodes.map((ep) => ({ ...ep, group: gi })));
    c.episodes = episodes;
    return collectedOf(g, episodes, stepRolloutBatch(episodes, this.model.config.obsDim, this.maxSteps), {
      metrics: (sc, tr, t) => {
        if (!sc || !tr) throw new Error('StepCollector: its metrics need the policy-gradient phases, which did not run');
        return this.iterationMetrics(c, sc, tr, { ...t, start: t0 }, waited, idle0);
      },
    });
  }

  /**
   * The pool's perf figures and the grid keys: `perf/*` timing, multi-agent credit, and with
   * KL-as-reward `actor/kl_ref` from the penalty's own log-probs (the train step reports it only
   * with klMode 'loss'). Distilling (a teacher), also `distill/teacher_prob`, and the group spread
   * of the totals that were trained on: the KL reward is the signal then, and the env's outcome
   * alone (weight 0 by default) would read as no spread at all.
   * `waited`: when batch k arrived; `idle0`: the pool's idle ms when the iteration began.
   */
  private iterationMetrics(c: Rounds, sc: ScoredBatch, tr: TrainedBatch, t: IterationTimes, waited: number, idle0: number): ReturnType<Collected<StepEpisode>['metrics']> {
    const iterS = (t.synced - t.start) / 1000;
    const waitS = (waited - t.start) / 1000;
    const trainS = (t.synced - waited) / 1000;
    const tisEnd = waited + tr.offS * 1000;
    const keys: Record<string, number> = {
      'perf/iteration_s': iterS,
      'perf/episodes_per_s': c.episodes.length / Math.max(1e-9, iterS),
      'perf/tis_s': (tisEnd - waited) / 1000,
      'perf/update_s': (t.trained - tisEnd) / 1000,
    };
    if (this.agentNames) Object.assign(keys, agentCreditMetrics(this.agentNames, c.episodes, sc.adv.adv, c.sampledEpisodes));
    const { algo } = this.config;
    if (sc.refLogp && algo.klMode === 'reward') {
      const r = referenceStats(c.episodes.flatMap((ep) => Array.from(ep.logprobs)), sc.refLogp);
      keys['actor/kl_ref'] = r.klRef;
      if (this.config.teacher) {
        keys['distill/teacher_prob'] = r.refProb;
        if (GROUP_ALGOS.includes(algo.algo)) {
          const totals = sc.totals;
          const g = groupStats(Array.from({ length: Math.floor(totals.length / algo.groupSize) }, (_, k) => totals.subarray(k * algo.groupSize, (k + 1) * algo.groupSize)));
          keys['groups/frac_zero_std'] = g.fracZeroStd;
          keys['groups/reward_std_mean'] = g.rewardStdMean;
        }
      }
    }
    const perf = {
      envStepsPerS: c.envSteps / Math.max(1e-9, c.busyS),
      tokensPerS: sc.batch.size / Math.max(1e-9, c.busyS),
      rolloutS: c.busyS,
      trainS,
      learnerIdleRatio: waitS / Math.max(1e-9, iterS),
      rolloutIdleRatio: Math.min(1, (this.poolIdleMs(t.synced) - idle0) / Math.max(1e-9, t.synced - t.start)),
    };
    return { perf, keys };
  }

  /** Version `version` to the proximal policy and the pool, then launch what the bound now allows. */
  async sync(w: Weights | null, version: number): Promise<void> {
    if (w) {
      this.proximal.setWeights(w, version);
      await this.pool.setWeights(roundWeights(w, this.config.algo.rolloutCorrection.mismatch), version);
    }
    this.launch(this.current + 1);
  }

  /**
   * The pool's part of a checkpoint: the minibatch stream. Batches already launched for later
   * iterations (staleness ≥ 1) are not part of it: a resumed run collects them again with the
   * restored weights, so async resumes are valid but not bit-identical; synchronous ones are.
   */
  async checkpoint(): Promise<Pick<Checkpoint, 'rng'>> {
    return { rng: { minibatch: this.rng.getState() } };
  }

  checkRestore(cp: Checkpoint, learner: Learner, who: string): Checkpoint {
    if (cp.trainer !== 'step') throw new Error(`${who}: the checkpoint was written by the '${cp.trainer}' trainer, this run's is 'step' (another config?)`);
    if (this.nextLaunch !== 0 || this.manual) throw new Error(`${who}: only a fresh trainer can be restored (it has launched batches)`);
    const unknown = Object.keys(cp.hyper).filter((k) => !(k in learner.hyper));
    if (unknown.length > 0) throw new Error(`${who}: hyper.${unknown[0]} is not a hyperparameter of this run's train step (another algorithm?)`);
    if (!cp.rng.minibatch) throw new Error(`${who}: rng.minibatch is missing`);
    return cp;
  }

  /**
   * The pool and the proximal policy take the weights at the checkpoint's version. At version 0
   * nothing was trained, so the pool already holds them; the KL reference stays the initial
   * weights of this config, as in the original run.
   */
  async restore(cp: Checkpoint, w: Weights): Promise<void> {
    this.rng.setState(cp.rng.minibatch!);
    this.nextLaunch = cp.iteration;
    this.current = cp.iteration;
    this.proximal.setWeights(w, cp.policyVersion);
    await this.pool.setWeights(roundWeights(w, this.config.algo.rolloutCorrection.mismatch), cp.policyVersion);
  }

  /** Waits for batches in flight (their results are dropped), then closes the pool and the scorers. */
  async release(): Promise<void> {
    await Promise.allSettled(this.inflight.values());
    this.inflight.clear();
    await this.pool.close();
    await Promise.all([this.proximal.release(), this.reference?.release()]);
  }
}

/**
 * The Trainer of a grid env played by an MLP: the step pool made by `makePool` (default: this
 * thread), a learner, the proximal policy and the KL reference (the initial weights, or a
 * distillation teacher's).
 */
export async function createStepTrainer(config: StepTrainerConfig, rawEngine: Engine, makePool: PoolFactory = serialPoolFactory, initial?: Weights, rewardLab?: RewardLab): Promise<Trainer<StepEpisode, StepCollector>> {
  const { algo } = config;
  const scheduler = schedulerFor(config.scheduling, algo.dynamicSampling.enabled, config.seed);
  // One lock over every session in this thread (an in-thread pool interleaves with the learner).
  const engine = serializeEngine(rawEngine);
  const descriptor = algoDescriptor(algo.algo);
  const spec = gridMlpSpec(config.env, { hidden: config.model.hidden, activation: config.model.activation, valueHead: descriptor.critic }, config.model.agents ?? 'shared');
  const model = buildPoolModel(spec);
  const weights = initial ?? initWeights(model, mixSeed(config.seed, 0x1e1));
  const { teacher } = config;
  if (teacher && !(algo.klCoef > 0)) throw new Error('createStepTrainer: a teacher is the KL reference, so it needs algo.klCoef > 0');
  const envSpec = makeEnv(config.env.id, config.env.kwargs).spec;
  const [pool, learner, proximal, reference] = await allOrRelease([
    // Mismatch mode: the rollout policy holds rounded weights, the learner and π_old float32.
    makePool(spec, roundWeights(weights, algo.rolloutCorrection.mismatch), engine),
    engine.createLearner(model, trainStepOptions(algo, config.learnerBatch), weights),
    engine.createPolicy(model, config.learnerBatch, weights),
    teacher
      ? engine.createPolicy(buildPoolModel(gridMlpSpec(config.env, { hidden: teacher.model.hidden, activation: teacher.model.activation, valueHead: teacher.valueHead }, teacher.model.agents ?? 'shared')), config.learnerBatch, teacher.weights)
      : algo.klCoef > 0
        ? engine.createPolicy(model, config.learnerBatch, weights)
        : Promise.resolve(null),
  ]);
  const A = model.numActions;
  const needsPotential = weightsOf(config.shaping).potential !== 0 || (config.schedule?.stages.some((st) => (st.weights.potential ?? 0) !== 0) ?? false);
  const rewards = new RewardScoring(config.shaping, config.schedule ?? null, needsPotential);
  const agents = envSpec.agents && envSpec.agents.length > 1 ? envSpec.agents : null;
  const collector = new StepCollector(config, model, pool, new RowScorer(proximal, A), reference ? new RowScorer(reference, A) : null, rewards, scheduler, needsPotential, envSpec.maxSteps, agents);
  const trainer = new Trainer<StepEpisode, StepCollector>({ algo, collector, scheduler, learner, rewards });
  if (rewardLab) trainer.setRewardLab(rewardLab);
  return trainer;
}
