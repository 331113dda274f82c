/**
 * The synchronous trainer for step environments (grid worlds, MLP policy), top to bottom:
 *
 *   1. rollout:    N envs in lockstep, one batched policy call per step (stepRollout.ts)
 *   2. reward:     env reward + named shaping terms (reward/shaping.ts)
 *   3. advantages: REINFORCE / GRPO / Dr.GRPO / RLOO per episode, or GAE per step for PPO
 *   4. update:     epochs × minibatches of the ONNX train step (forward, loss, backward, Adam)
 *   5. sync:       the learner's weights become the rollout policy's, version + 1
 *   6. metrics:    one object with the DESIGN §7 keys, emitted as an event
 *
 * Staleness is 0 here: every action in a batch was sampled by the version being trained.
 */
import { gae, sequenceAdvantages, normalizeAdvantages, EMA_BASELINE_INIT, type EmaBaselineState } from '../algos/advantages.ts';
import { GROUP_ALGOS, type AlgoConfig } from '../algos/config.ts';
import { buildIterationMetrics, summarizeEpisode, type IterationMetrics } from '../algos/metrics.ts';
import { logprobMismatch } from '../algos/offpolicy.ts';
import type { TrainStepOptions } from '../graph/train.ts';
import { makeEnv, type EnvKwargs } from '../envs/index.ts';
import type { Env, GridObs } from '../envs/types.ts';
import { MlpPolicy } from '../models/mlp.ts';
import { initWeights, type Weights } from '../models/types.ts';
import { encodeGridObs, gridFeatureSize } from '../rollout/features.ts';
import { shapeEpisode, stageWeights, stepSchedule, weightsOf, SCHEDULE_START, type ScheduleState, type ShapingConfig, type ShapingSchedule, type ShapingWeights, DEFAULT_SHAPING } from '../reward/shaping.ts';
import { gridGoalDistance } from '../reward/potentials.ts';
import { addSamplingRound, initDynamicSampling, samplingStats } from '../algos/sampling.ts';
import { Rng } from '../util/rng.ts';
import type { Engine, Feed, Learner, PolicyRunner } from './engine.ts';
import { collectStepEpisodes, type StepEpisode } from './stepRollout.ts';

export interface MlpModelConfig {
  kind: 'mlp';
  /** Hidden layer widths, input side first. */
  hidden: number[];
  /** Hidden nonlinearity: tanh is smoother for small policy nets (CleanRL's choice). */
  activation: 'tanh' | 'relu';
}

export interface StepTrainerConfig {
  /** Env registry id and its kwargs. */
  env: { id: string; kwargs?: EnvKwargs };
  model: MlpModelConfig;
  algo: AlgoConfig;
  shaping: ShapingConfig;
  /** Progressive shaping: stages with their own weights (seed 002); null = fixed weights. */
  schedule?: ShapingSchedule | null;
  /** Groups per iteration for group algorithms (each groupSize episodes from one seed). */
  groups: number;
  /** Episodes per iteration for REINFORCE and PPO (distinct seeds). */
  episodes: number;
  /** Rows per train step (static graph batch); an iteration uses ⌈steps / batch⌉ steps per epoch. */
  learnerBatch: number;
  /** Master seed: weights, env seeds and sampling all derive from it. */
  seed: number;
}

export const DEFAULT_STEP_TRAINER: Omit<StepTrainerConfig, 'env' | 'algo'> = {
  model: { kind: 'mlp', hidden: [64, 64], activation: 'tanh' },
  shaping: DEFAULT_SHAPING,
  groups: 8,
  episodes: 32,
  learnerBatch: 512,
  seed: 0,
};

export interface IterationReport {
  iteration: number;
  metrics: IterationMetrics & Record<string, number>;
  /** The batch's episodes (for the group view and the trajectory inspector). */
  episodes: StepEpisode[];
  /** Per-episode total (shaped) reward and advantage, parallel to `episodes`. */
  episodeRewards: Float64Array;
  episodeAdvantages: Float64Array;
  /** False when the NaN guard skipped at least one update this iteration. */
  allApplied: boolean;
}

/** Hyperparameters that may change while training runs (applied from the next train step). */
export interface LiveHyper {
  lr?: number;
  entropyCoef?: number;
  clipLow?: number;
  clipHigh?: number;
  klCoef?: number;
}

/** Hash of small integers into a 31-bit seed (distinct iterations/groups get unrelated seeds). */
export function mixSeed(...parts: number[]): number {
  let h = 0x811c9dc5;
  for (const p of parts) {
    h = Math.imul(h ^ (p >>> 0), 0x01000193);
    h ^= h >>> 15;
    h = Math.imul(h, 0x2c1b3c6d);
    h ^= h >>> 12;
  }
  return (h >>> 0) & 0x7fffffff;
}

export class StepTrainer {
  iteration = 0;
  version = 0;
  private ema: EmaBaselineState = EMA_BASELINE_INIT;
  private scheduleState: ScheduleState = SCHEDULE_START;
  /** Shaping weights in force (the schedule's stage, or the config's). */
  private weights: ShapingWeights;
  private readonly rng: Rng;

  private constructor(
    readonly config: StepTrainerConfig,
    readonly model: MlpPolicy,
    private readonly envs: Env<GridObs, number>[],
    private readonly policy: PolicyRunner,
    private readonly learner: Learner,
    private readonly reference: PolicyRunner | null,
    readonly featureSize: number,
  ) {
    this.rng = new Rng(mixSeed(config.seed, 0x5a3));
    this.weights = config.schedule ? stageWeights(config.schedule, 0, config.shaping) : weightsOf(config.shaping);
  }

  static async create(config: StepTrainerConfig, engine: Engine, initial?: Weights): Promise<StepTrainer> {
    const { algo } = config;
    const probe = makeEnv(config.env.id, config.env.kwargs) as Env<GridObs, number>;
    if (probe.spec.family !== 'grid') throw new Error(`StepTrainer trains grid envs; ${config.env.id} is a ${probe.spec.family} env`);
    const space = probe.spec.actionSpace;
    if (space.kind !== 'discrete') throw new Error(`${config.env.id}: expected a discrete action space`);
    const viewSize = Math.round(Math.sqrt(probe.reset({ seed: 0 }).obs.image.length / 3));
    const featureSize = gridFeatureSize(viewSize);
    const model = new MlpPolicy({
      obsDim: featureSize,
      hidden: config.model.hidden,
      activation: config.model.activation,
      numActions: space.n,
      valueHead: algo.algo === 'ppo',
    });
    const weights = initial ?? initWeights(model, mixSeed(config.seed, 0x1e1));
    const n = GROUP_ALGOS.includes(algo.algo) ? config.groups * algo.groupSize : config.episodes;
    const envs = Array.from({ length: n }, () => makeEnv(config.env.id, config.env.kwargs) as Env<GridObs, number>);
    const useRef = algo.klCoef > 0;
    const opts: TrainStepOptions = {
      batch: config.learnerBatch,
      loss: {
        kind: 'policy-gradient',
        clipLow: algo.clipLow,
        clipHigh: algo.clipHigh,
        useReference: useRef && algo.klMode === 'loss',
        klCoef: algo.klCoef,
        klEstimator: algo.klEstimator,
        entropyCoef: algo.entropyCoef,
        valueCoef: algo.valueCoef,
      },
      adam: {
        lr: algo.lr,
        beta1: algo.adamBeta1,
        beta2: algo.adamBeta2,
        eps: algo.adamEps,
        weightDecay: algo.weightDecay,
        maxGradNorm: algo.maxGradNorm ?? 0,
      },
    };
    const [policy, learner, reference] = await Promise.all([
      engine.createPolicy(model, n, weights),
      engine.createLearner(model, opts, weights),
      useRef ? engine.createPolicy(model, config.learnerBatch, weights) : Promise.resolve(null),
    ]);
    return new StepTrainer(config, model, envs, policy, learner, reference, featureSize);
  }

  /** Change live hyperparameters; they apply from the next train step. */
  setHyper(h: LiveHyper): void {
    const hp = this.learner.hyper;
    if (h.lr !== undefined) hp.lr = h.lr;
    if (h.entropyCoef !== undefined) hp.entropy_coef = h.entropyCoef;
    if (h.clipLow !== undefined) hp.clip_low = h.clipLow;
    if (h.clipHigh !== undefined) hp.clip_high = h.clipHigh;
    if (h.klCoef !== undefined && 'kl_coef' in hp) hp.kl_coef = h.klCoef;
  }

  getWeights(): Promise<Weights> {
    return this.learner.getWeights();
  }

  /** Seeds and group ids for this iteration's parallel slots. */
  private slots(iteration: number, round = 0): { seeds: number[]; groups: number[] } {
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
      for (let e = 0; e < this.envs.length; e++) {
        seeds.push(mixSeed(this.config.seed, iteration, e, round));
        groups.push(-1);
      }
    }
    return { seeds, groups };
  }

  /** Plays one batch with the current policy without training (temperature 0 = greedy). */
  async evaluate(seeds: readonly number[], temperature = 0): Promise<StepEpisode[]> {
    const out: StepEpisode[] = [];
    const n = this.envs.length;
    for (let i = 0; i < seeds.length; i += n) {
      const chunk = seeds.slice(i, i + n);
      const padded = [...chunk, ...Array(n - chunk.length).fill(chunk[0])];
      const r = await collectStepEpisodes({
        envs: this.envs,
        seeds: padded,
        groups: padded.map(() => -1),
        policy: this.policy,
        featurize: encodeGridObs,
        featureSize: this.featureSize,
        numActions: this.model.numActions,
        rng: new Rng(mixSeed(this.config.seed, 0xe7a1, i)),
        temperature,
      });
      out.push(...r.episodes.slice(0, chunk.length));
    }
    return out;
  }

  /** One iteration: rollout, advantages, update, sync. */
  async step(options: { keepObservations?: boolean } = {}): Promise<IterationReport> {
    const { algo, shaping } = this.config;
    const it = this.iteration;
    const t0 = performance.now();

    // 1. rollout (with dynamic sampling: more rounds of fresh groups until enough have signal)
    const usePotential = this.weights.potential !== 0;
    const rollout = (round: number) => {
      const { seeds, groups } = this.slots(it, round);
      return collectStepEpisodes({
        envs: this.envs,
        seeds,
        groups,
        policy: this.policy,
        featurize: encodeGridObs,
        featureSize: this.featureSize,
        numActions: this.model.numActions,
        rng: this.rng,
        keepObservations: options.keepObservations,
        potential: usePotential ? (env) => gridGoalDistance.phi(env.frame()) : undefined,
      });
    };
    const shape = (ep: StepEpisode) =>
      shapeEpisode(
        { rewards: ep.rewards, infos: ep.infos, terminated: ep.terminated, truncated: ep.truncated, policyTokens: ep.actions.length, potentials: ep.potentials },
        shaping,
        this.weights,
      );
    const grouped = GROUP_ALGOS.includes(algo.algo);
    let episodes: StepEpisode[];
    let envSteps = 0;
    let sampling = initDynamicSampling<{ rewards: Float64Array; episodes: StepEpisode[] }>();
    for (let round = 0; ; round++) {
      const ro = await rollout(round);
      envSteps += ro.envSteps;
      if (!grouped) {
        episodes = ro.episodes;
        break;
      }
      const G = algo.groupSize;
      const roundGroups = Array.from({ length: this.config.groups }, (_, g) => {
        const eps = ro.episodes.slice(g * G, (g + 1) * G);
        return { episodes: eps, rewards: Float64Array.from(eps, (ep) => shape(ep).total) };
      });
      const step = addSamplingRound(sampling, roundGroups, this.config.groups, algo.dynamicSampling);
      sampling = step.state;
      if (step.decision !== 'continue') {
        episodes = (step.batch ?? []).flatMap((g, gi) => g.episodes.map((ep) => ({ ...ep, group: gi })));
        break;
      }
    }
    const t1 = performance.now();
    if (episodes.length === 0) {
      // Every sampled group had zero spread and the round cap was hit: nothing to learn from.
      this.iteration++;
      const m = { ...buildIterationMetrics({ groups: samplingStats(sampling) }), 'groups/dropped': sampling.droppedGroups, 'groups/sampling_rounds': sampling.rounds };
      return { iteration: it, metrics: m as IterationReport['metrics'], episodes, episodeRewards: new Float64Array(0), episodeAdvantages: new Float64Array(0), allApplied: true };
    }

    // 2. reward (optionally minus β·KL to the reference policy, per step)
    const shaped = episodes.map(shape);
    if (this.reference && algo.klMode === 'reward') await this.klPenalty(episodes, shaped, algo.klCoef);
    const totals = Float64Array.from(shaped, (s) => s.total);

    // 3. advantages, per row (one row per env step)
    const S = episodes.reduce((s, ep) => s + ep.actions.length, 0);
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

    // Aggregation weights (Σ = 1 over the batch for 'token' and 'sequence').
    const rowW = new Float64Array(S);
    {
      let o = 0;
      const L = algo.aggregationLen ?? this.envs[0].spec.maxSteps;
      for (const ep of episodes) {
        const T = ep.actions.length;
        const w = algo.aggregation === 'token' ? 1 / S : algo.aggregation === 'sequence' ? 1 / (T * episodes.length) : 1 / (episodes.length * L);
        rowW.fill(w, o, o + T);
        o += T;
      }
    }

    // Flatten the batch.
    const D = this.featureSize;
    const rowObs = new Float32Array(S * D);
    const rowAct = new Int32Array(S);
    const rowOld = new Float32Array(S);
    const rowVal = new Float32Array(S);
    {
      let o = 0;
      for (const ep of episodes) {
        rowObs.set(ep.features, o * D);
        rowAct.set(ep.actions, o);
        rowOld.set(ep.logprobs, o);
        rowVal.set(ep.values, o);
        o += ep.actions.length;
      }
    }

    // 4. update: epochs × minibatches of the static-batch train step
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
        // Each minibatch is one optimizer step of comparable scale: rescale weights by S/rows.
        const scale = S / rows.length;
        rows.forEach((r, j) => {
          obs.set(rowObs.subarray(r * D, (r + 1) * D), j * D);
          actions[j] = rowAct[r];
          advantages[j] = rowAdv[r];
          oldLogp[j] = rowOld[r];
          weights[j] = rowW[r] * scale;
          mask[j] = 1;
          returns[j] = rowRet[r];
        });
        const batch: Record<string, Feed> = { obs, actions, advantages, old_logprobs: oldLogp, weights, mask };
        if (this.model.hasValueHead) batch.returns = returns;
        if (this.reference && algo.klMode === 'loss') {
          const ref = await this.reference.run({ obs });
          const A = this.model.numActions;
          for (let j = 0; j < B; j++) refLogp[j] = ref.logprobs[j * A + actions[j]];
          batch.ref_logprobs = refLogp;
        }
        const res = await this.learner.step(batch);
        nSteps++;
        if (!res.applied) allApplied = false;
        for (const [k, v] of Object.entries(res.metrics)) sums[k] = (sums[k] ?? 0) + v;
        if (epoch === 0 && c === 0) {
          // Before any update the learner's log-probs must equal the rollout's (TITO).
          mismatch = logprobMismatch(oldLogp.subarray(0, rows.length), res.logprobs.subarray(0, rows.length), mask.subarray(0, rows.length));
        }
      }
    }
    const t2 = performance.now();

    // 5. sync
    this.version++;
    this.policy.setWeights(await this.learner.getWeights(), this.version);
    this.iteration++;
    const t3 = performance.now();

    // 6. metrics
    const learnerMetrics: Record<string, number> = {};
    for (const [k, v] of Object.entries(sums)) learnerMetrics[k] = v / Math.max(1, nSteps);
    const group = grouped ? samplingStats(sampling) : undefined;
    const rolloutS = (t1 - t0) / 1000;
    const trainS = (t2 - t1) / 1000;
    const metrics = {
      ...buildIterationMetrics({
        episodes: episodes.map((ep, i) =>
          summarizeEpisode(
            { rewards: ep.rewards, infos: ep.infos, terminated: ep.terminated, truncated: ep.truncated, policyTokens: ep.actions.length },
            shaped[i],
          ),
        ),
        advantages: { values: rowAdv },
        groups: group,
        critic: this.model.hasValueHead ? { valueLoss: learnerMetrics['critic/value_loss'] ?? NaN, values: rowVal, returns: rowRet } : undefined,
        mismatch,
        staleness: { mean: 0, max: 0 },
        extra: grouped ? { groupsDropped: sampling.droppedGroups, samplingRounds: sampling.rounds } : undefined,
        perf: {
          envStepsPerS: envSteps / Math.max(1e-9, rolloutS),
          tokensPerS: S / Math.max(1e-9, rolloutS),
          rolloutS,
          trainS,
          learnerIdleRatio: rolloutS / Math.max(1e-9, rolloutS + trainS),
          rolloutIdleRatio: trainS / Math.max(1e-9, rolloutS + trainS),
        },
      }),
      ...learnerMetrics,
      'actor/lr': this.learner.hyper.lr,
      'actor/rollout_entropy': mean(episodes.flatMap((ep) => Array.from(ep.entropies))),
      'episode/distinct_ratio': distinctRatio(episodes),
      'train/updates': nSteps,
      'train/policy_version': this.version,
      'perf/iteration_s': (t3 - t0) / 1000,
    } as IterationReport['metrics'];
    if (this.config.schedule) {
      metrics['schedule/stage'] = this.scheduleState.stage;
      const next = stepSchedule(this.config.schedule, this.scheduleState, { successRate: metrics['episode/success_rate'] ?? 0 }, shaping);
      this.scheduleState = next.state;
      this.weights = next.weights;
    }
    return { iteration: it, metrics, episodes, episodeRewards: totals, episodeAdvantages: episodeAdv, allApplied };
  }

  /**
   * KL as a reward penalty: r_t −= β·k(π_θ, π_ref) at each step, with the estimator the config
   * names, computed from the behaviour log-prob and the reference policy's log-prob of the action.
   */
  private async klPenalty(episodes: StepEpisode[], shaped: ReturnType<typeof shapeEpisode>[], beta: number): Promise<void> {
    const ref = this.reference!;
    const B = ref.batch;
    const D = this.featureSize;
    const A = this.model.numActions;
    const rows: [number, number][] = [];
    episodes.forEach((ep, e) => {
      for (let t = 0; t < ep.actions.length; t++) rows.push([e, t]);
    });
    const obs = new Float32Array(B * D);
    for (let c = 0; c < rows.length; c += B) {
      const chunk = rows.slice(c, c + B);
      obs.fill(0);
      chunk.forEach(([e, t], j) => obs.set(episodes[e].features.subarray(t * D, (t + 1) * D), j * D));
      const out = await ref.run({ obs });
      chunk.forEach(([e, t], j) => {
        const ep = episodes[e];
        const d = out.logprobs[j * A + ep.actions[t]] - ep.logprobs[t]; // log(π_ref/π)
        const kl = this.config.algo.klEstimator === 'k3' ? Math.exp(d) - 1 - d : -d;
        shaped[e].perStep[t] -= beta * kl;
        shaped[e].total -= beta * kl;
      });
    }
  }

  async release(): Promise<void> {
    await Promise.all([this.policy.release(), this.learner.release(), this.reference?.release()]);
  }
}

function mean(xs: readonly number[]): number {
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0;
}

/** Share of distinct action sequences among the batch's episodes (exploration, invariant 1). */
export function distinctRatio(episodes: readonly { actions: Int32Array }[]): number {
  if (episodes.length === 0) return 0;
  const seen = new Set<string>();
  for (const ep of episodes) seen.add(ep.actions.join(','));
  return seen.size / episodes.length;
}
