/**
 * Asynchronous rollout scheduling with bounded staleness (DESIGN §6; issue 4 §4) for step
 * environments (grid worlds, MLP policy), on any RolloutPool.
 *
 *   iteration k (learner holds version k):
 *     launch:  collects for batches j ≤ k + s that are not yet running (s = maxStaleness)
 *     wait:    for batch k (perf/learner_idle_ratio is this wait's share of the iteration)
 *     update:  advantages, TIS for stale steps, epochs × minibatches of the ONNX train step
 *     sync:    version k + 1 → the pool (episodes in flight continue under it: partial rollouts)
 *
 * The bound: batch j is launched only once the pool holds version ≥ j − s, versions only grow
 * while it plays, and it is trained at version j, so every step in it is ≤ s versions old. With
 * s = 0 batch k is launched after version k is synced and trained before version k + 1 exists:
 * the synchronous trainer. With s ≥ 1 the pool plays batch k + 1.. while the learner trains on
 * batch k; with a worker pool the two then truly run at once.
 *
 * Off-policy correction (enabled by `algo.tis.enabled`), per step i with behaviour log-prob
 * μ_i (stored with the step, version v_i) at learner version k:
 *   - v_i = k (fresh): old_logprob = μ_i and weight 1, exactly as in synchronous training;
 *   - v_i < k (stale): π_old(a_i|s_i) is recomputed at version k (a forward pass of the
 *     learner's current weights); the PPO ratio is taken against π_old (decoupled PPO:
 *     the clip trust region is around the current policy, not the stale one) and the step's
 *     advantage is multiplied by the truncated importance weight min(π_old/μ, cap).
 *   The weight multiplies the *advantage*, not the row weight: it corrects the policy-gradient
 *   estimate (an expectation under π_old sampled from μ) and leaves the entropy bonus, KL and
 *   value terms, which are regularisers and not estimates needing correction, unweighted.
 *   Without TIS, stale steps are treated as on-policy for μ (old_logprob = μ).
 *
 * Dynamic sampling (DAPO): when the batch has too few groups with reward spread, refill rounds
 * are collected right away (behind batches in flight, so with weights at least as new: the
 * bound holds) until the batch is full or the round cap is hit; an empty batch skips the
 * update without a new version. Not here: `keepObservations` replays (call the pool directly).
 */
import { gae, sequenceAdvantages, normalizeAdvantages, EMA_BASELINE_INIT, type EmaBaselineState } from '../algos/advantages.ts';
import { GROUP_ALGOS } from '../algos/config.ts';
import { buildIterationMetrics, summarizeEpisode } from '../algos/metrics.ts';
import { addSamplingRound, initDynamicSampling, samplingStats } from '../algos/sampling.ts';
import { logprobMismatch, partialRatio, staleness, truncatedIsWeights } from '../algos/offpolicy.ts';
import { makeEnv } from '../envs/index.ts';
import { MlpPolicy } from '../models/mlp.ts';
import { initWeights, type Weights } from '../models/types.ts';
import { gridGoalDistance } from '../reward/potentials.ts';
import { shapeEpisode, stageWeights, stepSchedule, weightsOf, SCHEDULE_START, type EpisodeRecord, type ScheduleState, type ShapedReward, type ShapingConfig, type ShapingWeights } from '../reward/shaping.ts';
import { Rng } from '../util/rng.ts';
import type { Engine, Feed, Learner, PolicyRunner } from '../engine/types.ts';
import { buildPoolModel, gridMlpSpec, SerialRolloutPool, serializeEngine, type CollectRequest, type CollectResult, type PoolModelSpec, type RolloutPool } from '../rollout/stepPool.ts';
import { stepFeatures, type StepEpisode } from '../rollout/stepEpisode.ts';
import { applyLiveHyper, trainStepOptions, type LiveHyper } from '../update/hyper.ts';
import { distinctRatio } from '../algos/metrics.ts';
import { mean } from '../algos/stats.ts';
import { mixSeed } from '../util/rng.ts';
import { withShapingWeights } from '../reward/shaping.ts';
import type { StepTrainerConfig } from './stepConfig.ts';
import type { IterationReport, Trainer } from './trainer.ts';

/** Makes the rollout pool for a model and its initial weights (version 0). Default: in-thread serial pool. */
export type PoolFactory = (model: PoolModelSpec, weights: Weights, engine: Engine) => Promise<RolloutPool>;

export const serialPoolFactory: PoolFactory = async (model, weights, engine) => new SerialRolloutPool({ engine, model, weights });

/** What the shaper and the episode metrics read from a step episode. */
function recordOf(ep: StepEpisode): EpisodeRecord {
  return { rewards: ep.rewards, infos: ep.infos, terminated: ep.terminated, truncated: ep.truncated, policyTokens: ep.actions.length, potentials: ep.potentials };
}

export class StepTrainer implements Trainer<StepEpisode> {
  iteration = 0;
  /** The learner's policy version: number of iterations trained. */
  version = 0;
  private ema: EmaBaselineState = EMA_BASELINE_INIT;
  private scheduleState: ScheduleState = SCHEDULE_START;
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

  private constructor(
    readonly config: StepTrainerConfig,
    readonly model: MlpPolicy,
    readonly pool: RolloutPool,
    private readonly learner: Learner,
    /** π at the learner's current version, for stale steps' π_old (batch = learnerBatch). */
    private readonly proximal: PolicyRunner,
    private readonly reference: PolicyRunner | null,
    /** The env's time limit (steps), for 'constant' aggregation's default length. */
    private readonly maxSteps: number,
  ) {
    this.rng = new Rng(mixSeed(config.seed, 0x5a3));
    this.shaping = config.shaping;
    this.shapingWeights = config.schedule ? stageWeights(config.schedule, 0, config.shaping) : weightsOf(config.shaping);
    this.needsPotential =
      weightsOf(config.shaping).potential !== 0 || (config.schedule?.stages.some((st) => (st.weights.potential ?? 0) !== 0) ?? false);
    this.maxStaleness = config.scheduling?.maxStaleness ?? 0;
    if (!(Number.isInteger(this.maxStaleness) && this.maxStaleness >= 0)) throw new RangeError(`scheduling.maxStaleness must be an integer ≥ 0, got ${this.maxStaleness}`);
  }

  static async create(config: StepTrainerConfig, rawEngine: Engine, makePool: PoolFactory = serialPoolFactory, initial?: Weights): Promise<StepTrainer> {
    const { algo } = config;
    // One lock over every session in this thread (an in-thread pool interleaves with the learner).
    const engine = serializeEngine(rawEngine);
    const spec = gridMlpSpec(config.env, { hidden: config.model.hidden, activation: config.model.activation, valueHead: algo.algo === 'ppo' });
    const model = buildPoolModel(spec);
    const weights = initial ?? initWeights(model, mixSeed(config.seed, 0x1e1));
    const useRef = algo.klCoef > 0;
    const opts = trainStepOptions(algo, config.learnerBatch);
    const maxSteps = makeEnv(config.env.id, config.env.kwargs).spec.maxSteps;
    const [pool, learner, proximal, reference] = await Promise.all([
      makePool(spec, weights, engine),
      engine.createLearner(model, opts, weights),
      engine.createPolicy(model, config.learnerBatch, weights),
      useRef ? engine.createPolicy(model, config.learnerBatch, weights) : Promise.resolve(null),
    ]);
    return new StepTrainer(config, model, pool, learner, proximal, reference, maxSteps);
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

  /** Live hyperparameters (lr, entropy_coef, clip_low, clip_high, kl_coef) as the learner sees them. */
  get hyper(): Record<string, number> {
    return this.learner.hyper;
  }

  /** Change live hyperparameters; they apply from the next train step. */
  setHyper(h: LiveHyper): void {
    if (h.rewardWeights) {
      // Validate before touching anything: a refused edit leaves the run as it was.
      this.shaping = withShapingWeights(this.shaping, h.rewardWeights, this.needsPotential);
      this.shapingWeights = this.config.schedule ? stageWeights(this.config.schedule, this.scheduleState.stage, this.shaping) : weightsOf(this.shaping);
    }
    applyLiveHyper(this.learner.hyper, h);
  }

  getWeights(): Promise<Weights> {
    return this.learner.getWeights();
  }

  /**
   * Plays `seeds` with the pool's current policy without training (temperature 0 = greedy).
   * Queued behind batches in flight, so it sees the newest version synced when it starts.
   */
  async evaluate(seeds: readonly number[], temperature = 0): Promise<StepEpisode[]> {
    const r = await this.pool.collect({ env: this.config.env, seeds, groups: seeds.map(() => -1), samplingSeed: mixSeed(this.config.seed, 0xe7a1), temperature });
    return r.episodes;
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
    const grouped = GROUP_ALGOS.includes(algo.algo);
    const shape = (ep: StepEpisode) => shapeEpisode(recordOf(ep), shaping, this.shapingWeights);
    let episodes = ro.episodes;
    let envSteps = ro.envSteps;
    let busyS = ro.busyS;
    let sampling = initDynamicSampling<{ rewards: Float64Array; episodes: StepEpisode[] }>();
    // Outcome metrics (episode/*, reward/*) describe every episode sampled this iteration: the
    // trained batch is filtered toward mixed outcomes by dynamic sampling and would be biased.
    const sampled: StepEpisode[] = [...ro.episodes];
    if (grouped) {
      const G = algo.groupSize;
      for (let round = 0, cur = ro; ; ) {
        const roundGroups = Array.from({ length: this.config.groups }, (_, g) => {
          const eps = cur.episodes.slice(g * G, (g + 1) * G);
          return { episodes: eps, rewards: Float64Array.from(eps, (ep) => shape(ep).total) };
        });
        const next = addSamplingRound(sampling, roundGroups, this.config.groups, algo.dynamicSampling);
        sampling = next.state;
        if (next.decision !== 'continue') {
          episodes = (next.batch ?? []).flatMap((grp, gi) => grp.episodes.map((ep) => ({ ...ep, group: gi })));
          break;
        }
        cur = await this.pool.collect(this.requestFor(it, ++round));
        sampled.push(...cur.episodes);
        envSteps += cur.envSteps;
        busyS += cur.busyS;
      }
    }
    const outcome = () => sampled.map((ep) => summarizeEpisode(recordOf(ep), shape(ep)));
    if (episodes.length === 0) {
      // Every group had zero spread and the round cap was hit: nothing to learn from, no new version.
      this.iteration++;
      const m = {
        ...buildIterationMetrics({ episodes: outcome(), groups: samplingStats(sampling) }),
        'groups/dropped': sampling.droppedGroups,
        'groups/sampling_rounds': sampling.rounds,
      };
      return { iteration: it, metrics: m as IterationReport<StepEpisode>['metrics'], episodes, episodeRewards: new Float64Array(0), episodeAdvantages: new Float64Array(0), allApplied: true };
    }

    // Bookkeeping check of the bound (a violation is a scheduler bug, not a data property).
    const S = episodes.reduce((s, ep) => s + ep.actions.length, 0);
    const rowVer = new Int32Array(S);
    {
      let o = 0;
      for (const ep of episodes) {
        rowVer.set(ep.versions, o);
        o += ep.versions.length;
      }
    }
    const ones = new Float32Array(S).fill(1);
    const stale = staleness(this.version, rowVer, ones);
    if (stale.max > this.maxStaleness) {
      throw new Error(`StepTrainer: batch ${it} has a step ${stale.max} versions old (max ${this.maxStaleness})`);
    }

    // Reward and advantages, exactly as the synchronous trainer.
    const shaped = episodes.map(shape);
    if (this.reference && algo.klMode === 'reward') await this.klPenalty(episodes, shaped, algo.klCoef);
    const totals = Float64Array.from(shaped, (s) => s.total);
    const rowAdv = new Float64Array(S);
    const rowRet = new Float64Array(S);
    const episodeAdv = new Float64Array(episodes.length);
    if (algo.algo === 'ppo') {
      let o = 0;
      episodes.forEach((ep, i) => {
        const r = gae(
          { rewards: shaped[i].perStep, values: ep.values, terminated: ep.terminated, truncated: ep.truncated, bootstrapValue: ep.bootstrapValue },
          algo.gamma,
          algo.lambda,
        );
        rowAdv.set(r.advantages, o);
        rowRet.set(r.returns, o);
        episodeAdv[i] = r.advantages[0] ?? 0;
        o += ep.actions.length;
      });
      if (algo.normalizeAdvantages) rowAdv.set(normalizeAdvantages(rowAdv));
    } else {
      const r = sequenceAdvantages(algo, totals, this.ema);
      this.ema = r.ema;
      let o = 0;
      episodes.forEach((ep, i) => {
        episodeAdv[i] = r.advantages[i];
        rowAdv.fill(r.advantages[i], o, o + ep.actions.length);
        o += ep.actions.length;
      });
    }
    const rowW = new Float64Array(S);
    {
      let o = 0;
      const L = algo.aggregationLen ?? this.maxSteps;
      for (const ep of episodes) {
        const T = ep.actions.length;
        const w = algo.aggregation === 'token' ? 1 / S : algo.aggregation === 'sequence' ? 1 / (T * episodes.length) : 1 / (episodes.length * L);
        rowW.fill(w, o, o + T);
        o += T;
      }
    }

    // Flatten the batch.
    const D = this.model.config.obsDim;
    const A = this.model.numActions;
    const rowObs = new Float32Array(S * D);
    const rowAct = new Int32Array(S);
    const rowMu = new Float32Array(S);
    const rowVal = new Float32Array(S);
    {
      let o = 0;
      for (const ep of episodes) {
        for (let t = 0; t < ep.actions.length; t++) stepFeatures(ep, t, rowObs, (o + t) * D);
        rowAct.set(ep.actions, o);
        rowMu.set(ep.logprobs, o);
        rowVal.set(ep.values, o);
        o += ep.actions.length;
      }
    }

    // Off-policy correction for stale steps (see the header).
    const rowOld = rowMu.slice();
    const staleRows: number[] = [];
    for (let r = 0; r < S; r++) if (rowVer[r] < this.version) staleRows.push(r);
    if (staleRows.length > 0) {
      const B = this.proximal.batch;
      const obs = new Float32Array(B * D);
      for (let c = 0; c < staleRows.length; c += B) {
        const chunk = staleRows.slice(c, c + B);
        obs.fill(0);
        chunk.forEach((r, j) => obs.set(rowObs.subarray(r * D, (r + 1) * D), j * D));
        const out = await this.proximal.run({ obs });
        chunk.forEach((r, j) => (rowOld[r] = out.logprobs[j * A + rowAct[r]]));
      }
    }
    // Ratios are reported even with TIS off: they show how far the data drifted.
    const tis = truncatedIsWeights(rowOld, rowMu, ones, algo.tis.cap);
    const rowAdvUsed = rowAdv.slice();
    if (algo.tis.enabled) {
      for (const r of staleRows) rowAdvUsed[r] *= tis.weights[r];
    } else {
      rowOld.set(rowMu);
    }
    const t2 = performance.now();

    // Update: epochs × minibatches of the static-batch train step (as the synchronous trainer).
    const B = this.learner.batch;
    const chunks = Math.max(algo.minibatches, Math.ceil(S / B));
    const per = Math.ceil(S / chunks);
    const obs = new Float32Array(B * D);
    const actions = new Int32Array(B);
    const advantages = new Float32Array(B);
    const oldLogp = new Float32Array(B);
    const weights = new Float32Array(B);
    const mask = new Float32Array(B);
    const returns = new Float32Array(B);
    const oldValues = new Float32Array(B);
    const refLogp = new Float32Array(B);
    const sums: Record<string, number> = {};
    let nSteps = 0;
    let allApplied = true;
    let mismatch: { absDiffMean: number; absDiffMax: number } | undefined;
    const order = Array.from({ length: S }, (_, i) => i);
    for (let epoch = 0; epoch < algo.updateEpochs; epoch++) {
      this.rng.shuffle(order);
      for (let c = 0; c < chunks; c++) {
        const rows = order.slice(c * per, Math.min(S, (c + 1) * per));
        if (rows.length === 0) continue;
        obs.fill(0);
        actions.fill(0);
        advantages.fill(0);
        oldLogp.fill(0);
        weights.fill(0);
        mask.fill(0);
        returns.fill(0);
        oldValues.fill(0);
        const scale = S / rows.length;
        rows.forEach((r, j) => {
          obs.set(rowObs.subarray(r * D, (r + 1) * D), j * D);
          actions[j] = rowAct[r];
          advantages[j] = rowAdvUsed[r];
          oldLogp[j] = rowOld[r];
          weights[j] = rowW[r] * scale;
          mask[j] = 1;
          returns[j] = rowRet[r];
          oldValues[j] = rowVal[r];
        });
        const batch: Record<string, Feed> = { obs, actions, advantages, old_logprobs: oldLogp, weights, mask };
        if (this.model.hasValueHead) batch.returns = returns;
        if (this.model.hasValueHead && algo.valueClip !== null) batch.old_values = oldValues;
        if (this.reference && algo.klMode === 'loss') {
          const ref = await this.reference.run({ obs });
          for (let j = 0; j < B; j++) refLogp[j] = ref.logprobs[j * A + actions[j]];
          batch.ref_logprobs = refLogp;
        }
        const res = await this.learner.step(batch);
        nSteps++;
        if (!res.applied) allApplied = false;
        for (const [k, v] of Object.entries(res.metrics)) sums[k] = (sums[k] ?? 0) + v;
        if (epoch === 0 && c === 0) {
          // TITO check on rows sampled by the version the learner holds now (before its first
          // update): there μ and the learner must agree. Stale rows were sampled by older
          // weights, so their gap is drift (async/is_ratio_*), not a mismatch; without fresh
          // rows in this minibatch the metric is left out.
          const fresh = Float32Array.from(rows, (r) => (rowVer[r] === this.version ? 1 : 0));
          if (fresh.some((f) => f === 1)) {
            mismatch = logprobMismatch(Float32Array.from(rows, (r) => rowMu[r]), res.logprobs.subarray(0, rows.length), fresh);
          }
        }
      }
    }
    const t3 = performance.now();

    // Sync: version k + 1 to the pool (batches in flight pick it up at their next step).
    this.version++;
    const w = await this.learner.getWeights();
    this.proximal.setWeights(w, this.version);
    await this.pool.setWeights(w, this.version);
    this.iteration++;
    const t4 = performance.now();

    // Metrics.
    const learnerMetrics: Record<string, number> = {};
    for (const [k, v] of Object.entries(sums)) learnerMetrics[k] = v / Math.max(1, nSteps);
    const iterS = (t4 - t0) / 1000;
    const waitS = (t1 - t0) / 1000;
    const trainS = (t4 - t1) / 1000;
    const maxT = Math.max(1, ...episodes.map((ep) => ep.versions.length));
    const padVer = new Int32Array(episodes.length * maxT);
    const padMask = new Float32Array(episodes.length * maxT);
    episodes.forEach((ep, e) => {
      padVer.set(ep.versions, e * maxT);
      padMask.fill(1, e * maxT, e * maxT + ep.versions.length);
    });
    const metrics = {
      ...buildIterationMetrics({
        episodes: outcome(),
        advantages: { values: rowAdv },
        groups: grouped ? samplingStats(sampling) : undefined,
        extra: grouped ? { groupsDropped: sampling.droppedGroups, samplingRounds: sampling.rounds } : undefined,
        critic: this.model.hasValueHead ? { valueLoss: learnerMetrics['critic/value_loss'] ?? NaN, values: rowVal, returns: rowRet } : undefined,
        mismatch,
        staleness: stale,
        tis,
        partialRatio: partialRatio(padVer, padMask, episodes.length, maxT),
        perf: {
          envStepsPerS: envSteps / Math.max(1e-9, busyS),
          tokensPerS: S / Math.max(1e-9, busyS),
          rolloutS: busyS,
          trainS,
          learnerIdleRatio: waitS / Math.max(1e-9, iterS),
          rolloutIdleRatio: Math.min(1, (this.poolIdleMs(t4) - idle0) / Math.max(1e-9, t4 - t0)),
        },
      }),
      ...learnerMetrics,
      'actor/lr': this.learner.hyper.lr,
      'actor/rollout_entropy': mean(episodes.flatMap((ep) => Array.from(ep.entropies))),
      'episode/distinct_ratio': distinctRatio(episodes),
      'train/updates': nSteps,
      'train/policy_version': this.version,
      'train/stale_rows': staleRows.length,
      'perf/iteration_s': iterS,
      'perf/episodes_per_s': episodes.length / Math.max(1e-9, iterS),
      'perf/tis_s': (t2 - t1) / 1000,
      'perf/update_s': (t3 - t2) / 1000,
    } as IterationReport<StepEpisode>['metrics'];
    if (this.config.schedule) {
      metrics['schedule/stage'] = this.scheduleState.stage;
      const next = stepSchedule(this.config.schedule, this.scheduleState, { successRate: metrics['episode/success_rate'] ?? 0 }, shaping);
      this.scheduleState = next.state;
      this.shapingWeights = next.weights;
    }
    return { iteration: it, metrics, episodes, episodeRewards: totals, episodeAdvantages: episodeAdv, allApplied };
  }

  /** KL as a reward penalty (as StepTrainer): r_t −= β·k(π_θ, π_ref) from μ and π_ref of the action. */
  private async klPenalty(episodes: StepEpisode[], shaped: ShapedReward[], beta: number): Promise<void> {
    const ref = this.reference!;
    const B = ref.batch;
    const D = this.model.config.obsDim;
    const A = this.model.numActions;
    const rows: [number, number][] = [];
    episodes.forEach((ep, e) => {
      for (let t = 0; t < ep.actions.length; t++) rows.push([e, t]);
    });
    const obs = new Float32Array(B * D);
    for (let c = 0; c < rows.length; c += B) {
      const chunk = rows.slice(c, c + B);
      obs.fill(0);
      chunk.forEach(([e, t], j) => stepFeatures(episodes[e], t, obs, j * D));
      const out = await ref.run({ obs });
      chunk.forEach(([e, t], j) => {
        const ep = episodes[e];
        const d = out.logprobs[j * A + ep.actions[t]] - ep.logprobs[t];
        const kl = this.config.algo.klEstimator === 'k3' ? Math.exp(d) - 1 - d : -d;
        shaped[e].perStep[t] -= beta * kl;
        shaped[e].total -= beta * kl;
      });
    }
  }

  /** Waits for batches in flight (their results are dropped), then releases everything. */
  async release(): Promise<void> {
    await Promise.allSettled(this.inflight.values());
    this.inflight.clear();
    await Promise.all([this.pool.close(), this.learner.release(), this.proximal.release(), this.reference?.release()]);
  }
}

