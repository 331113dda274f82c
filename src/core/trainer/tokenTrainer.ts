/**
 * The lockstep trainer for multi-turn text envs with a token policy (tiny transformer): tool envs
 * with REINFORCE or PPO, and grid envs played as text (envs/grid/textAdapter.ts) with any
 * algorithm. Each step() runs the phases in order (see ARCHITECTURE.md):
 *
 *   collect     groups of episodes (same seed per group) in lockstep on a KV-cached decoder
 *               (rollout/tokenLockstep.ts), dynamic sampling for group algorithms; PPO: distinct
 *               seeds, and the decoder's value head records V beside every sampled token
 *   score       env reward + named shaping terms + user reward terms (reward lab: one step
 *               record per env step, scored in the sandbox); KL to the reference as a reward penalty
 *   advantages  per episode, broadcast to policy tokens; PPO: GAE over policy tokens (update/advantages.ts)
 *   update      minibatches of the ONNX train step on exactly the recorded ids (TITO)
 *   sync        the learner's weights become the decoder's, version + 1
 *   metrics     update/metrics.ts, plus `perf/iteration_s`
 *
 * Staleness is 0: every token in a batch was sampled by the version being trained, so before the
 * first update the learner's log-probs must equal the rollout's (`mismatch/*`, ≤ 1e-4 on WASM).
 */
import type { RolloutBudgetConfig } from '../algos/budget.ts';
import { GROUP_ALGOS, type AlgoConfig } from '../algos/config.ts';
import { algoDescriptor } from '../algos/registry/index.ts';
import { sampleWithDynamicSampling, samplingStats, type DynamicSamplingState, type RewardGroup } from '../algos/sampling.ts';
import type { EnvKwargs } from '../envs/index.ts';
import { makeTextEnv } from '../envs/grid/textAdapter.ts';
import type { ToolEnv } from '../envs/types.ts';
import { DEFAULT_TOKEN_MODEL, makeTokenModel, type TransformerModelConfig, type TransformerPolicy } from '../models/transformer.ts';
import { initWeights, type Weights } from '../models/types.ts';
import { DEFAULT_SHAPING, weightsOf, withShapingWeights, type ShapedReward, type ShapingConfig, type ShapingSchedule, type ShapingWeights } from '../reward/shaping.ts';
import { mixSeed, Rng } from '../util/rng.ts';
import type { Engine, Learner, TokenDecoder } from '../engine/types.ts';
import { trainStepOptions } from '../update/hyper.ts';
import type { IterationReport } from './api.ts';
import type { Checkpoint } from '../runs/checkpoint.ts';
import { TrainerBase } from './base.ts';
import { checkTokenCheckpoint, copyWeights } from './tokenCheckpoint.ts';
import { collectTokenEpisodes } from '../rollout/tokenLockstep.ts';
import { sampledTokenEpisode, shapeTokenEpisode, tokenStateKeys, type TokenEpisode } from '../rollout/tokenEpisode.ts';
import { scoreBatch, trainBatch } from './phases.ts';
import { tokenRolloutBatch } from '../update/batch.ts';
import { addTermRewards } from '../reward/rewardTerms.ts';
import { buildTextStepRecords } from '../reward/stepRecord.ts';
import { keepApplicable } from '../metrics/lookup.ts';
import { addRewardLabMetrics, scoreWithRewardLab, type RewardLab } from '../reward/userTerms.ts';
import { lengthBuckets, SequenceScorer } from '../update/sequenceScorer.ts';
import { batchMetrics } from '../update/metrics.ts';

export interface TokenTrainerConfig {
  /** Env registry id (a tool env, or a grid env played as text) and its kwargs. */
  env: { id: string; kwargs?: EnvKwargs };
  model: TransformerModelConfig;
  /** Advantage estimator etc. PPO gives the transformer a value head and uses token GAE. */
  algo: AlgoConfig;
  shaping: ShapingConfig;
  /** Groups per iteration for group algorithms (each `algo.groupSize` episodes from one seed). */
  groups: number;
  /** Episodes per iteration for REINFORCE and PPO (distinct seeds). */
  episodes: number;
  /** Sequences per train step (static graph batch); an iteration takes ⌈episodes / batch⌉ steps. */
  learnerBatch: number;
  /** Most tokens per action (<eoa> included) before a forced end. */
  maxActionTokens: number;
  /** Tokens per row in a prefill call (observations are fed in chunks of this size; 1 = off). */
  prefillStep: number;
  /** Sampling temperature of the rollout policy (1 = on-policy; the mismatch check needs 1). */
  temperature: number;
  /** Master seed: weights, env seeds and sampling derive from it. */
  seed: number;
  /** How episodes are split over prompts (AsyncTokenTrainer only; default uniform, fresh prompts). */
  budget?: RolloutBudgetConfig;
  /** A progressive reward schedule: stages of shaping weights, advanced by success (null: the shaping's own weights throughout). */
  schedule?: ShapingSchedule | null;
}

export const DEFAULT_TOKEN_TRAINER: Omit<TokenTrainerConfig, 'env' | 'algo'> = {
  model: DEFAULT_TOKEN_MODEL,
  shaping: DEFAULT_SHAPING,
  groups: 8,
  episodes: 64,
  learnerBatch: 16,
  maxActionTokens: 32,
  prefillStep: 8,
  temperature: 1,
  seed: 0,
};


interface Group extends RewardGroup {
  episodes: TokenEpisode[];
  shaped: ShapedReward[];
}

/** What the collect phase hands on: the batch to train on and what the metrics need of every round. */
interface Collected {
  batch: Group[];
  /** Dynamic-sampling state (group algorithms only). */
  ds: DynamicSamplingState<Group> | null;
  sampled: TokenEpisode[];
  sampledShaped: ShapedReward[];
  envSteps: number;
  policyTokens: number;
  /** Σ over rounds of each round's KV-cache hit rate. */
  cacheHit: number;
  rounds: number;
}

export class TokenTrainer extends TrainerBase<TokenEpisode> {
  protected readonly kind = 'token';
  protected readonly label = 'TokenTrainer';
  /** Lockstep rollouts sample with the learner's version: nothing is ever stale. */
  protected readonly proximal = null;
  private readonly rng: Rng;

  /** The shaping weights in force (the schedule's stage over config.shaping, or its own). */
  private shapingWeights: ShapingWeights;

  private constructor(
    readonly config: TokenTrainerConfig,
    readonly model: TransformerPolicy,
    private readonly envs: ToolEnv[],
    private readonly decoder: TokenDecoder,
    protected readonly learner: Learner,
    protected readonly reference: SequenceScorer | null,
    /** The KL reference policy's weights (what `reference` scores with); null without one. */
    private referenceWeights: Weights | null,
  ) {
    super();
    // One stream for sampling tokens and for shuffling minibatches (a checkpoint saves it as rng.sampling).
    this.rng = new Rng(mixSeed(config.seed, 0x70c));
    this.schedule = config.schedule ?? null;
    this.shapingWeights = this.scheduledWeights(config.shaping);
  }

  /**
   * @param initial starting weights (e.g. the imitation warm start); default a fresh init.
   * @param reference weights of the KL reference policy (default `initial`); used when algo.klCoef > 0.
   * @param rewardLab user reward terms (the reward lab), scored on every sampled episode.
   */
  static async create(config: TokenTrainerConfig, engine: Engine, initial?: Weights, reference?: Weights, rewardLab?: RewardLab): Promise<TokenTrainer> {
    const { algo } = config;
    const ppo = algoDescriptor(algo.algo).critic;
    if (ppo && algo.klCoef > 0 && algo.klMode === 'reward') throw new Error("TokenTrainer: PPO takes the KL to the reference as a loss term (klMode 'loss'), not as a reward penalty");
    // Throws, naming the env, when it has no text form.
    makeTextEnv(config.env.id, config.env.kwargs);
    const model = makeTokenModel(config.model, ppo);
    // Fresh init for whatever `initial` lacks (a warm start without a value head gets a fresh one).
    const fresh = initWeights(model, mixSeed(config.seed, 0x1e1));
    const weights = { ...fresh, ...initial };
    const n = GROUP_ALGOS.includes(algo.algo) ? config.groups * algo.groupSize : config.episodes;
    const envs = Array.from({ length: n }, () => makeTextEnv(config.env.id, config.env.kwargs));
    const useRef = algo.klCoef > 0;
    // The value term exists only with the value head (PPO).
    const opts = trainStepOptions(ppo ? algo : { ...algo, valueCoef: 0 }, config.learnerBatch);
    const lens = lengthBuckets(model.config.context);
    // A group's episodes start from one prompt: the learner runs it once per group when a
    // minibatch holds whole groups (Learner.prefixGroups).
    const grouped = GROUP_ALGOS.includes(algo.algo);
    const prefixGroups = grouped && config.learnerBatch % algo.groupSize === 0 ? config.learnerBatch / algo.groupSize : undefined;
    const [decoder, learner] = await Promise.all([engine.createDecoder(model, n, weights, config.prefillStep), engine.createLearner(model, opts, weights, lens, prefixGroups)]);
    const refWeights = useRef ? { ...fresh, ...(reference ?? initial) } : null;
    const ref = refWeights ? new SequenceScorer(engine, model, config.learnerBatch, refWeights, lens) : null;
    const trainer = new TokenTrainer(config, model, envs, decoder, learner, ref, refWeights);
    if (rewardLab) trainer.setRewardLab(rewardLab);
    return trainer;
  }

  /**
   * Env reward + shaping + user terms of a round's episodes. The user terms score one step record
   * per env step (a tool call or the answer turn) in the sandbox, and each term's per-step values
   * join the shaped reward's perStep, total and terms (so `reward/<term>/mean` is the mean
   * episode sum of the term, as for grids) before any advantage is computed.
   */
  private async shapeRound(eps: readonly TokenEpisode[]): Promise<ShapedReward[]> {
    const lab = this.rewardLab;
    const shaped = eps.map((ep) => shapeTokenEpisode(ep, this.config.shaping, this.shapingWeights));
    if (!lab) return shaped;
    const r = await scoreWithRewardLab(lab, eps.map(buildTextStepRecords));
    this.termsSkipped += r.skipped;
    return shaped.map((s, i) => addTermRewards(s, r.values[i]));
  }

  /** Reward weights replace `config.shaping` (read by the next iteration's shaping); token episodes record no potentials, so the potential weight must stay 0. */
  protected setRewardWeights(w: Partial<ShapingWeights>): void {
    this.config.shaping = withShapingWeights(this.config.shaping, w, false);
    this.shapingWeights = this.scheduledWeights(this.config.shaping);
  }

  /** Rows of the rollout decoder (episodes per sampling round). */
  get rolloutBatch(): number {
    return this.envs.length;
  }

  /** Plays `seeds` with the current policy without training (temperature 0 = greedy). */
  async evaluate(seeds: readonly number[], temperature = 0): Promise<TokenEpisode[]> {
    const out: TokenEpisode[] = [];
    const n = this.envs.length;
    for (let i = 0; i < seeds.length; i += n) {
      const chunk = seeds.slice(i, i + n);
      const padded = [...chunk, ...Array<number>(n - chunk.length).fill(chunk[0])];
      const r = await collectTokenEpisodes({
        envs: this.envs,
        seeds: padded,
        groups: padded.map(() => -1),
        decoder: this.decoder,
        rng: new Rng(mixSeed(this.config.seed, 0xe7a1, i)),
        temperature,
        maxActionTokens: this.config.maxActionTokens,
      });
      out.push(...r.episodes.slice(0, chunk.length));
    }
    return out;
  }

  /**
   * ReMax's baselines: one greedy (temperature 0) episode per trained group from the group's
   * seed, played by the version that sampled the batch (the lockstep trainer is synchronous) and
   * scored as the sampled episodes are (shaping and user terms). Its env steps count in the
   * iteration's compute, as on grids.
   */
  private async greedyBaselines(groups: readonly Group[]): Promise<{ totals: Float64Array; envSteps: number; success: number }> {
    const eps = await this.evaluate(groups.map((g) => g.episodes[0].seed), 0);
    const shaped = await this.shapeRound(eps);
    return {
      totals: Float64Array.from(shaped, (s) => s.total),
      envSteps: eps.reduce((n, ep) => n + ep.turns, 0),
      success: eps.filter((ep) => ep.success).length / Math.max(1, eps.length),
    };
  }

  /**
   * The collect phase: rounds of one decoder batch each (every round plays all rows); group
   * algorithms run dynamic sampling over them. Every episode sampled is kept for the metrics.
   */
  private async collect(it: number): Promise<Collected> {
    const { algo } = this.config;
    const grouped = GROUP_ALGOS.includes(algo.algo);
    const G = grouped ? this.config.groups : 1;
    const N = grouped ? algo.groupSize : this.envs.length;
    const c: Collected = { batch: [], ds: null, sampled: [], sampledShaped: [], envSteps: 0, policyTokens: 0, cacheHit: 0, rounds: 0 };
    const sampleRound = async (round: number): Promise<Group[]> => {
      const seeds: number[] = [];
      const groups: number[] = [];
      for (let g = 0; g < G; g++) {
        const s = mixSeed(this.config.seed, it, round, g);
        for (let k = 0; k < N; k++) {
          seeds.push(grouped ? s : mixSeed(this.config.seed, it, round, g, k));
          groups.push(grouped ? g : -1);
        }
      }
      const ro = await collectTokenEpisodes({
        envs: this.envs,
        seeds,
        groups,
        decoder: this.decoder,
        rng: this.rng,
        temperature: this.config.temperature,
        maxActionTokens: this.config.maxActionTokens,
      });
      c.rounds++;
      c.envSteps += ro.envSteps;
      c.policyTokens += ro.policyTokens;
      c.cacheHit += ro.kvCacheHitRate;
      const out: Group[] = [];
      const roundShaped = await this.shapeRound(ro.episodes.slice(0, G * N));
      for (let g = 0; g < G; g++) {
        const eps = ro.episodes.slice(g * N, (g + 1) * N);
        const shaped = roundShaped.slice(g * N, (g + 1) * N);
        c.sampled.push(...eps);
        c.sampledShaped.push(...shaped);
        out.push({ episodes: eps, shaped, rewards: shaped.map((x) => x.total) });
      }
      return out;
    };
    if (!grouped) {
      c.batch = await sampleRound(0);
      return c;
    }
    const r = await sampleWithDynamicSampling(sampleRound, G, algo.dynamicSampling);
    c.ds = r.state;
    c.batch = r.batch;
    return c;
  }

  /** One iteration: collect → score → advantages → weights → update → sync → metrics. */
  async step(): Promise<IterationReport<TokenEpisode>> {
    const { algo } = this.config;
    const it = this.iteration;
    const t0 = performance.now();
    // The lab is swapped only between iterations, so this version scored the whole batch.
    const rewardVersion = this.rewardLab?.version ?? 0;
    this.termsSkipped = 0;
    const c = await this.collect(it);
    const episodes = c.batch.flatMap((g) => g.episodes);
    const t1 = performance.now();

    const groupSize = c.ds ? algo.groupSize : undefined;
    const batch = tokenRolloutBatch(episodes, this.model.config.context, this.model.numActions, groupSize);
    const greedy = algoDescriptor(algo.algo).advantage.kind === 'greedy-baseline' ? await this.greedyBaselines(c.batch) : null;
    if (greedy) c.envSteps += greedy.envSteps;
    const shaped = c.batch.flatMap((g) => g.shaped);
    const stateKeys = algoDescriptor(algo.algo).advantage.kind === 'step-groups' ? episodes.map((ep, i) => tokenStateKeys(ep, shaped[i].perStep.length)) : undefined;
    const sc = await scoreBatch(algo, batch, shaped, this.reference, this.ema, { groupSize: groupSize ?? episodes.length, greedyTotals: greedy?.totals, stateKeys });
    this.ema = sc.adv.ema;
    const tr = await trainBatch(this.learner, algo, sc, this.version, null, this.rng);
    const upd = tr.upd;
    const t2 = performance.now();

    if (upd.steps > 0) {
      this.version++;
      this.decoder.setWeights(await this.learner.getWeights(), this.version);
    }
    this.iteration++;
    const t3 = performance.now();

    const rolloutS = (t1 - t0) / 1000;
    const trainS = (t2 - t1) / 1000;
    const metrics = {
      ...batchMetrics({
        sampled: c.sampled.map((ep, i) => sampledTokenEpisode(ep, c.sampledShaped[i])),
        batch: sc.batch,
        trainedSuccess: episodes.map((e) => e.success),
        adv: sc.adv,
        off: tr.off,
        tis: tr.tis,
        upd,
        lr: this.learner.hyper.lr,
        version: this.version,
        groups: c.ds ? samplingStats(c.ds) : undefined,
        perf: {
          envStepsPerS: c.envSteps / Math.max(1e-9, rolloutS),
          tokensPerS: c.policyTokens / Math.max(1e-9, rolloutS),
          rolloutS,
          trainS,
          learnerIdleRatio: rolloutS / Math.max(1e-9, rolloutS + trainS),
          rolloutIdleRatio: trainS / Math.max(1e-9, rolloutS + trainS),
          kvCacheHitRate: c.cacheHit / c.rounds,
        },
        extra: c.ds ? { groupsDropped: c.ds.droppedGroups, samplingRounds: c.rounds } : { samplingRounds: c.rounds },
      }),
      'perf/iteration_s': (t3 - t0) / 1000,
    } as IterationReport<TokenEpisode>['metrics'];
    if (greedy) {
      metrics['remax/greedy_reward_mean'] = greedy.totals.reduce((a, b) => a + b, 0) / Math.max(1, greedy.totals.length);
      metrics['remax/greedy_success_rate'] = greedy.success;
    }
    if (this.schedule) this.shapingWeights = this.advanceSchedule(metrics, this.config.shaping);
    addRewardLabMetrics(metrics, rewardVersion, this.termsSkipped);
    keepApplicable(metrics, { family: this.envs[0].spec.family, policy: 'token' });
    return { iteration: it, metrics, episodes, episodeRewards: sc.totals, episodeAdvantages: sc.adv.episodeAdv, allApplied: upd.allApplied };
  }

  /**
   * The full state after the last finished iteration (call between steps). The envs need none
   * (every episode resets with its seed), the decoder holds the learner's weights at
   * `policyVersion` and resets its KV cache per episode, and the episodes' seeds are a function of
   * (seed, iteration, round, group): so learner, counters, the one sampling/minibatch stream, the
   * EMA baseline, live hyper and reward weights, and the KL reference's weights (a warm start's
   * imitation result, when klCoef > 0) are all a resumed run needs to compute what an
   * uninterrupted one would (bit for bit on the same engine).
   */
  checkpoint(): Promise<Checkpoint> {
    return this.checkpointWith({
      rng: { sampling: this.rng.getState() },
      schedule: this.scheduleCheckpoint(),
      rewardWeights: weightsOf(this.config.shaping),
      ...(this.referenceWeights ? { reference: copyWeights(this.referenceWeights) } : {}),
    });
  }

  /**
   * Continues from `cp` on this fresh trainer (before its first step): the learner takes the
   * parameters and Adam state, the decoder the weights at the checkpoint's version, the KL
   * reference its saved weights, and every counter and stream its saved value. Everything is
   * checked first; a refused checkpoint leaves the trainer fresh.
   */
  async restore(cp: Checkpoint): Promise<void> {
    checkTokenCheckpoint(cp, {
      who: 'TokenTrainer.restore',
      trainer: 'token',
      iteration: this.iteration,
      version: this.version,
      hyper: this.learner.hyper,
      rng: ['sampling'],
      model: this.model,
      hasReference: this.reference !== null,
    });
    this.checkImportable();
    this.checkSchedule(cp);
    // As setHyper: token episodes record no potentials Φ, so the potential weight must be 0.
    const shaping = withShapingWeights(this.config.shaping, cp.rewardWeights, false);
    this.importCommon(cp);
    this.rng.setState(cp.rng.sampling);
    this.config.shaping = shaping;
    this.shapingWeights = this.scheduledWeights(shaping);
    // Also at version 0: createTrainer may have skipped the warm start for a resume (CreateTrainerOptions.resume).
    this.decoder.setWeights(await this.learner.getWeights(), this.version);
    if (cp.reference && this.reference) {
      this.referenceWeights = copyWeights(cp.reference);
      await this.reference.setWeights(this.referenceWeights, 0);
    }
  }

  protected releaseRollout(): Promise<void> {
    return this.decoder.release();
  }
}
