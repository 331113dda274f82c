/**
 * The continuous trainer for multi-turn text envs with slow tools, group algorithms only; the
 * synchronous case is staleness 0. Rollouts are continuous (rollout/tokenContinuous.ts): episodes
 * start and finish at their own pace, a tool call parks its episode for `info.latencyMs` of clock
 * time while the other rows keep decoding, and the learner trains on whole groups in the order
 * they finish. Each step() at learner version V, with s = maxStaleness and G groups per batch:
 *
 *   collect     keep (1 + s)·G groups in flight or finished-but-untrained, and wait until G have
 *               finished (dynamic sampling: drop zero-spread groups and wait for more)
 *   score       env reward + shaping + user reward terms (reward lab); KL to the reference as a
 *               reward penalty. User terms score a group when collect takes it into a batch (its
 *               episodes all finished), with the reward version current then: setRewardLab
 *               applies between iterations, so every group of one batch has one version, even
 *               a group sampled partly under an older policy version.
 *   advantages  group advantages, broadcast onto the policy tokens (update/advantages.ts)
 *   weights/TIS stale tokens get π_old from the proximal policy and a TIS weight (update/offPolicy.ts)
 *   update      epochs × minibatches of the ONNX train step on the recorded ids (TITO)
 *   sync        version V + 1 goes to the decoder; episodes in flight continue under it (partial
 *               rollouts), and groups that could no longer be trained within the bound are aborted
 *   metrics     update/metrics.ts plus `async/episodes_aborted`, `async/kv_evictions`,
 *               `async/in_flight`, `perf/tool_wait_s` (time no row could decode),
 *               `perf/episodes_per_s` (trained episodes per second of wall time)
 *
 * The bound: a group is trained at version V only if every token in it was sampled at ≥ V − s
 * (sync enforces it, collect re-checks it). With s = 0 the trainer admits G groups, waits for all
 * of them and trains, waiting for the slowest tool call of the batch. Everything runs in one
 * thread unless a rollout worker decodes: the decoder and the learner take turns, and tool
 * latency (a remote service) overlaps both.
 *
 * Checkpoints are taken between iterations. They hold the learner, the counters, both RNG
 * streams (minibatch shuffles here, token sampling in the source), the EMA baseline, live hyper
 * and reward weights, the KL reference's weights, and the group bookkeeping: the next group id
 * and the groups admitted but not trained. The episodes in flight are not saved: a resumed run
 * admits those groups again (same ids, same env seeds) and samples them afresh with the restored
 * weights. With staleness ≥ 1, or a rollout worker or real tool latency (where timing decides
 * which episode finishes first), a resumed run is therefore valid but not bit-identical to an
 * uninterrupted one; in sync mode (staleness 0: nothing is in flight between iterations) with
 * the in-thread source on a virtual clock it is bit-identical.
 */
import { GROUP_ALGOS } from '../algos/config.ts';
import { algoDescriptor } from '../algos/registry/index.ts';
import { PromptPool, type PlannedGroup } from '../rollout/promptPool.ts';
import { sampleWithDynamicSampling, samplingStats, type DynamicSamplingState } from '../algos/sampling.ts';
import type { Clock } from '../envs/clock.ts';
import { makeEnv } from '../envs/index.ts';
import { makeTokenModel, type TransformerPolicy } from '../models/transformer.ts';
import { initWeights, type Weights } from '../models/types.ts';
import { weightsOf, withShapingWeights, type ShapedReward, type ShapingWeights } from '../reward/shaping.ts';
import { mixSeed, Rng } from '../util/rng.ts';
import { trainStepOptions } from '../update/hyper.ts';
import { HYPER_INPUTS } from '../update/trainStep.ts';
import type { Engine, Learner } from '../engine/types.ts';
import { sampledTokenEpisode, shapeTokenEpisode, tokenStateKeys, type TokenEpisode } from '../rollout/tokenEpisode.ts';
import type { TokenSlotStats } from '../rollout/tokenContinuous.ts';
import { localTokenSource, type TokenEpisodeSource, type TokenSourceFactory, type TokenSourceInit } from '../rollout/tokenSource.ts';
import type { TokenTrainerConfig } from './tokenConfig.ts';
import { createLockstepTrainer } from './lockstepCollector.ts';
import type { IterationReport } from './api.ts';
import type { Checkpoint } from '../runs/checkpoint.ts';
import { TrainerBase } from './base.ts';
import { checkTokenCheckpoint, copyWeights } from './tokenCheckpoint.ts';
import { tokenRolloutBatch } from '../update/batch.ts';
import { addTermRewards } from '../reward/rewardTerms.ts';
import { buildTextStepRecords } from '../reward/stepRecord.ts';
import { keepApplicable } from '../metrics/lookup.ts';
import { continuousMetrics } from './continuousMetrics.ts';
import { addRewardLabMetrics, scoreWithRewardLab, type RewardLab } from '../reward/userTerms.ts';
import { batchMetrics } from '../update/metrics.ts';
import { learnerIsProximal } from '../update/offPolicy.ts';
import { lengthBuckets, SequenceScorer } from '../update/sequenceScorer.ts';
import { scoreBatch, trainBatch } from './phases.ts';

export interface AsyncTokenScheduling {
  /** Most policy versions between sampling a token and training on it (0 = synchronous). */
  maxStaleness: number;
  /**
   * Decoder rows: the KV-cache budget, in episodes' worth of context (rows × context tokens of
   * keys/values). Fewer rows than episodes in flight means parked episodes lose their cache and
   * re-prefill. 0 = one row per episode of a batch (G × groupSize).
   */
  kvRows: number;
}

export const DEFAULT_ASYNC_TOKEN_SCHEDULING: AsyncTokenScheduling = { maxStaleness: 2, kvRows: 0 };

export type { TokenSourceFactory, TokenSourceInit } from '../rollout/tokenSource.ts';

interface GroupRec {
  id: number;
  seed: number;
  episodes: TokenEpisode[];
  /** Episodes in the group: algo.groupSize, or the rollout budget's share for its prompt. */
  size: number;
  /** Index in the prompt pool (rollout.budget.pool > 0), else −1 (a fresh prompt). */
  prompt: number;
}

type Scored = GroupRec & { rewards: number[]; shaped: ShapedReward[] };

/** What the collect phase hands on: the batch to train on and what the metrics need of every round. */
interface Collected {
  batch: Scored[];
  ds: DynamicSamplingState<Scored>;
  sampled: TokenEpisode[];
  sampledShaped: ShapedReward[];
  rounds: number;
}

export class AsyncTokenTrainer extends TrainerBase<TokenEpisode> {
  protected readonly kind = 'async-token';
  protected readonly label = 'AsyncTokenTrainer';
  private readonly rng: Rng;
  /** Groups admitted and not yet trained or dropped, by id. */
  private readonly open = new Map<number, GroupRec>();
  /** Finished groups in finish order, not yet trained. */
  private finished: GroupRec[] = [];
  private nextGroup = 0;
  /** Group ids to admit before new ones, ascending: the untrained groups of a restored checkpoint. */
  private readmit: number[] = [];
  /** Finished episodes thrown away this iteration with their group, as too stale (see collectEpisodes). */
  private lateAborted = 0;
  private lastStats: TokenSlotStats;
  /** Per-prompt success evidence over the pool (rollout.budget.pool > 0), else null. */
  private readonly prompts: PromptPool | null;

  /** The shaping weights in force (the schedule's stage over config.shaping, or its own). */
  private shapingWeights: ShapingWeights;

  private constructor(
    readonly config: TokenTrainerConfig,
    readonly scheduling: AsyncTokenScheduling,
    readonly model: TransformerPolicy,
    private readonly engine: Engine,
    private readonly source: TokenEpisodeSource,
    protected readonly learner: Learner,
    /**
     * π at the learner's version, for stale tokens' π_old (batch = learnerBatch); null when
     * the learner takes π_old from its own forward pass (an update of one optimizer step: see create()).
     */
    protected readonly proximal: SequenceScorer | null,
    protected readonly reference: SequenceScorer | null,
    /** The KL reference policy's weights (what `reference` scores with); null without one. */
    private referenceWeights: Weights | null,
    stats: TokenSlotStats,
  ) {
    super();
    this.rng = new Rng(mixSeed(config.seed, 0xa5c));
    this.schedule = config.schedule ?? null;
    this.shapingWeights = this.scheduledWeights(config.shaping);
    this.lastStats = stats;
    this.prompts = config.budget && config.budget.pool > 0 ? new PromptPool(config.budget, config.seed) : null;
  }

  static async create(
    config: TokenTrainerConfig,
    scheduling: AsyncTokenScheduling,
    engine: Engine,
    clock: Clock,
    initial?: Weights,
    reference?: Weights,
    /** Decode in a rollout worker (the learner then trains while it decodes); default: this thread. */
    worker?: TokenSourceFactory,
    /** User reward terms (the reward lab), scored on every collected group. */
    rewardLab?: RewardLab,
  ): Promise<AsyncTokenTrainer> {
    const { algo } = config;
    if (!GROUP_ALGOS.includes(algo.algo)) throw new Error(`AsyncTokenTrainer trains group algorithms (${GROUP_ALGOS.join(', ')}); got ${algo.algo}`);
    if (!Number.isInteger(scheduling.maxStaleness) || scheduling.maxStaleness < 0) throw new RangeError(`maxStaleness must be a whole number ≥ 0, got ${scheduling.maxStaleness}`);
    const probe = makeEnv(config.env.id, config.env.kwargs);
    if (probe.spec.family !== 'tool') throw new Error(`AsyncTokenTrainer trains text (tool) envs; ${config.env.id} is a ${probe.spec.family} env`);
    const model = makeTokenModel(config.model);
    const weights = initial ?? initWeights(model, mixSeed(config.seed, 0x1e1));
    const rows = scheduling.kvRows > 0 ? scheduling.kvRows : config.groups * algo.groupSize;
    // Decoupled PPO keeps one proximal policy π_prox for the whole update: the weights before it,
    // for every minibatch and epoch (Hilton et al. 2022; AReaL). When the update is one optimizer
    // step (one epoch, one minibatch), those are the weights of that step: the train graph takes
    // π_prox from its own forward pass (stop-gradient) for stale tokens and applies the TIS
    // weight itself, which saves a forward pass over the stale sequences. With more steps, the
    // second would anchor stale tokens at the weights the first left (ratio 1, never clipped),
    // so a scorer computes π_prox once, before the update, at the learner's version. Fresh
    // tokens were sampled by that version: μ is π_prox for them in every minibatch and epoch.
    // Without TIS, stale tokens keep μ as π_old (no proximal policy at all).
    const selfProximal = learnerIsProximal(algo, config.groups * algo.groupSize, config.learnerBatch);
    const opts = trainStepOptions({ ...algo, valueCoef: 0 }, config.learnerBatch);
    if (selfProximal && opts.loss?.kind === 'policy-gradient') opts.loss = { ...opts.loss, proximal: 'self', tisCap: algo.tis.cap };
    const lens = lengthBuckets(model.config.context);
    const init: TokenSourceInit = {
      model: config.model,
      env: config.env,
      weights,
      version: 0,
      rows,
      prefillStep: config.prefillStep,
      temperature: config.temperature,
      maxActionTokens: config.maxActionTokens,
      seed: mixSeed(config.seed, 0x70c),
    };
    // A group's episodes start from one prompt: with whole groups per minibatch, the learner runs
    // each group's prompt once (Learner.prefixGroups; the sequence feed's groupSize).
    // Groups of unequal size (adaptive budget) do not fill minibatches of whole groups: no sharing.
    const budget = config.budget;
    if (budget && budget.pool > 0 && (scheduling.maxStaleness !== 0 || algo.dynamicSampling.enabled)) {
      throw new Error('AsyncTokenTrainer: a prompt pool (rollout.budget.pool > 0) needs sync scheduling (maxStaleness 0) and no dynamic sampling');
    }
    if (budget?.mode === 'adaptive' && budget.pool === 0) throw new Error('AsyncTokenTrainer: the adaptive budget needs a prompt pool (rollout.budget.pool ≥ 1)');
    const equalGroups = budget?.mode !== 'adaptive';
    const prefixGroups = equalGroups && config.learnerBatch % algo.groupSize === 0 ? config.learnerBatch / algo.groupSize : undefined;
    const [source, learner] = await Promise.all([
      worker ? worker(init) : localTokenSource(engine, init, clock),
      engine.createLearner(model, opts, weights, lens, prefixGroups),
    ]);
    const proximal = selfProximal ? null : new SequenceScorer(engine, model, config.learnerBatch, weights, lens);
    const refWeights = algo.klCoef > 0 ? (reference ?? weights) : null;
    const ref = refWeights ? new SequenceScorer(engine, model, config.learnerBatch, refWeights, lens) : null;
    const trainer = new AsyncTokenTrainer(config, scheduling, model, engine, source, learner, proximal, ref, refWeights, await source.stats());
    if (rewardLab) trainer.setRewardLab(rewardLab);
    return trainer;
  }

  /**
   * Reward weights from the next episodes scored (groups that finished earlier but are collected
   * from then on are scored with them too, as with setRewardLab; see the file comment). Tool envs
   * record no potentials, so the potential weight must stay 0.
   */
  protected setRewardWeights(w: Partial<ShapingWeights>): void {
    this.config.shaping = withShapingWeights(this.config.shaping, w, false);
    this.shapingWeights = this.scheduledWeights(this.config.shaping);
  }

  /**
   * Plays `seeds` with the current weights without training (temperature 0 = greedy), on a
   * separate synchronous trainer's decoder, so episodes in flight keep their caches.
   */
  async evaluate(seeds: readonly number[], temperature = 0): Promise<TokenEpisode[]> {
    const t = await createLockstepTrainer({ ...this.config, groups: 1, algo: { ...this.config.algo, groupSize: Math.min(16, seeds.length), klCoef: 0 } }, this.engine, await this.learner.getWeights());
    try {
      return await t.evaluate(seeds, temperature);
    } finally {
      await t.release();
    }
  }

  /**
   * Starts groups until `count` are open (admitted, not yet trained or dropped), each a fresh
   * prompt of algo.groupSize episodes; or, with a prompt pool, starts the planned groups.
   */
  private admit(count: number, plan?: readonly PlannedGroup[]): Promise<void> {
    const N = this.config.algo.groupSize;
    const specs = [];
    if (plan) {
      for (const p of plan) {
        const id = this.nextGroup++;
        const seed = this.prompts!.promptSeed(p.prompt);
        this.open.set(id, { id, seed, episodes: [], size: p.size, prompt: p.prompt });
        for (let k = 0; k < p.size; k++) specs.push({ seed, group: id });
      }
    }
    while (!plan && this.open.size < count) {
      const id = this.readmit.length > 0 ? this.readmit.shift()! : this.nextGroup++;
      const seed = mixSeed(this.config.seed, 0x9e, id);
      this.open.set(id, { id, seed, episodes: [], size: N, prompt: -1 });
      for (let k = 0; k < N; k++) specs.push({ seed, group: id });
    }
    return specs.length > 0 ? this.source.enqueue(specs) : Promise.resolve();
  }

  /**
   * Moves finished episodes into their groups; full groups join `finished`. An episode that
   * finished before the last drop but arrives after it (it was waiting in the source's queue or
   * on its way from the worker) may hold a token too old to train on: its group is closed here
   * and returned, for the caller to drop its other episodes in the source.
   */
  private collectEpisodes(eps: readonly TokenEpisode[]): number[] {
    const doomed: number[] = [];
    for (const ep of eps) {
      const g = this.open.get(ep.group);
      if (!g) continue; // its group was dropped
      g.episodes.push(ep);
      if (this.version - AsyncTokenTrainer.minVersion(g) > this.scheduling.maxStaleness) {
        this.open.delete(g.id);
        this.finished = this.finished.filter((x) => x !== g);
        this.lateAborted += g.episodes.length;
        doomed.push(g.id);
      } else if (g.episodes.length === g.size) this.finished.push(g);
    }
    return doomed;
  }

  /** Oldest policy version in a group's finished episodes (Infinity when none sampled yet). */
  private static minVersion(g: GroupRec): number {
    let v = Infinity;
    for (const ep of g.episodes) for (let i = 0; i < ep.versions.length; i++) if (ep.lossMask[i] && ep.versions[i] < v) v = ep.versions[i];
    return v;
  }

  /**
   * The collect phase: admits groups (up to (1 + s)·G open) and waits for `need` finished ones
   * per dynamic-sampling round; every finished episode is kept for the metrics.
   */
  private async collect(): Promise<Collected> {
    const s = this.scheduling.maxStaleness;
    const G = this.config.groups;
    const sampled: TokenEpisode[] = [];
    const sampledShaped: ShapedReward[] = [];
    let rounds = 0;
    // With a prompt pool (sync, no dynamic sampling: one round) the groups are planned up front.
    const plan = this.prompts?.plan(this.iteration, G, this.config.algo.groupSize);
    const sampleRound = async (_round: number, need: number): Promise<Scored[]> => {
      // Not awaited alone: next() is answered after the enqueue (call order), one round trip.
      let admitted = this.admit(s === 0 ? need : (1 + s) * G, plan);
      while (this.finished.length < need) {
        const [, eps] = await Promise.all([admitted, this.source.next()]);
        admitted = Promise.resolve();
        if (eps.length === 0) throw new Error(`AsyncTokenTrainer: waiting for ${need} groups, but no episode is in flight`);
        const doomed = this.collectEpisodes(eps);
        if (doomed.length > 0) {
          await this.source.drop(doomed, this.version - s);
          // A planned batch is admitted once (sync: nothing can become too stale in it).
          admitted = plan ? Promise.resolve() : this.admit(s === 0 ? need : (1 + s) * G);
        }
      }
      await admitted;
      rounds++;
      const taken = this.finished.splice(0, need);
      // User terms: one sandbox call for the round's groups (step records read off the episodes).
      const lab = this.rewardLab;
      const terms = lab ? await scoreWithRewardLab(lab, taken.flatMap((g) => g.episodes.map(buildTextStepRecords))) : null;
      if (terms) this.termsSkipped += terms.skipped;
      let e = 0;
      return taken.map((g) => {
        const shaped = g.episodes.map((ep) => addTermRewards(shapeTokenEpisode(ep, this.config.shaping, this.shapingWeights), terms?.values[e++]));
        sampled.push(...g.episodes);
        sampledShaped.push(...shaped);
        this.open.delete(g.id);
        return { ...g, shaped, rewards: shaped.map((x) => x.total) };
      });
    };
    const r = await sampleWithDynamicSampling(sampleRound, plan ? plan.length : G, this.config.algo.dynamicSampling);
    for (const g of r.batch) {
      const v = AsyncTokenTrainer.minVersion(g);
      if (this.version - v > s) throw new Error(`AsyncTokenTrainer: group ${g.id} has a token ${this.version - v} versions old (max ${s})`);
    }
    return { batch: r.batch, ds: r.state, sampled, sampledShaped, rounds };
  }

  /**
   * The sync phase: version V + 1 to the source (when the update stepped), then drops the groups
   * that could no longer be trained within the bound: by their finished episodes here, by their
   * running episodes' first tokens in the source. The source's calls go out together: a rollout
   * worker answers between two decoder slices, in call order (the drop sees the new version, the
   * stats see the drop), so this costs one round trip instead of three.
   */
  private async sync(stepped: boolean): Promise<TokenSlotStats & { inFlight: number }> {
    const s = this.scheduling.maxStaleness;
    let synced: Promise<void> = Promise.resolve();
    if (stepped) {
      this.version++;
      const w = await this.learner.getWeights();
      synced = this.source.setWeights(w, this.version);
      await this.proximal?.setWeights(w, this.version);
    }
    const doomed = new Set<number>();
    for (const g of this.open.values()) if (this.version - AsyncTokenTrainer.minVersion(g) > s) doomed.add(g.id);
    const [, dropped, st] = await Promise.all([synced, this.source.drop([...doomed], this.version - s), this.source.stats()]);
    for (const id of dropped) doomed.add(id);
    for (const id of doomed) {
      this.lateAborted += this.open.get(id)?.episodes.length ?? 0;
      this.open.delete(id);
    }
    this.finished = this.finished.filter((g) => !doomed.has(g.id));
    return st;
  }

  /** One iteration: collect → score → advantages → weights/TIS → update → sync → metrics. */
  async step(): Promise<IterationReport<TokenEpisode>> {
    const { algo } = this.config;
    const N = algo.groupSize;
    const it = this.iteration;
    const t0 = performance.now();
    // The lab is swapped only between iterations, so this version scored the whole batch.
    const rewardVersion = this.rewardLab?.version ?? 0;
    this.termsSkipped = 0;
    const c = await this.collect();
    const episodes = c.batch.flatMap((g) => g.episodes);
    const t1 = performance.now();

    const n = episodes.length;
    // Adaptive budget: groups of unequal size; the scorers then run every sequence whole.
    const sizes = c.batch.map((g) => g.size);
    const equal = sizes.every((x) => x === N);
    const batch = tokenRolloutBatch(episodes, this.model.config.context, this.model.numActions, equal ? N : undefined);
    const shaped = c.batch.flatMap((g) => g.shaped);
    const stateKeys = algoDescriptor(algo.algo).advantage.kind === 'step-groups' ? episodes.map((ep, i) => tokenStateKeys(ep, shaped[i].perStep.length)) : undefined;
    const sc = await scoreBatch(algo, batch, shaped, this.reference, this.ema, { groupSize: equal ? N : sizes, stateKeys });
    this.ema = sc.adv.ema;
    if (!this.proximal && !learnerIsProximal(algo, n, this.config.learnerBatch)) throw new Error(`AsyncTokenTrainer: ${n} sequences take more than one train step, and the learner serves as π_prox only for one`);
    const tr = await trainBatch(this.learner, algo, sc, this.version, this.proximal ?? 'learner', this.rng);
    const upd = tr.upd;
    const t3 = performance.now();
    const st = await this.sync(upd.steps > 0);
    const budget = this.budgetMetrics(c.batch);
    this.iteration++;
    const t4 = performance.now();

    const loop = continuousMetrics({ prev: this.lastStats, now: st, lateAborted: this.lateAborted, episodes: n, rolloutS: (t1 - t0) / 1000, trainS: (t3 - t1) / 1000, iterS: (t4 - t0) / 1000, tisS: tr.offS });
    const metrics = {
      ...batchMetrics({
        sampled: c.sampled.map((ep, i) => sampledTokenEpisode(ep, c.sampledShaped[i])),
        batch,
        trainedSuccess: episodes.map((e) => e.success),
        adv: sc.adv,
        off: tr.off,
        tis: tr.tis,
        upd,
        lr: this.learner.hyper.lr,
        version: this.version,
        groups: samplingStats(c.ds),
        perf: loop.perf,
        extra: { groupsDropped: c.ds.droppedGroups, samplingRounds: c.rounds },
      }),
      ...loop.keys,
      ...budget,
    } as IterationReport<TokenEpisode>['metrics'];
    if (this.schedule) this.shapingWeights = this.advanceSchedule(metrics, this.config.shaping);
    addRewardLabMetrics(metrics, rewardVersion, this.termsSkipped);
    keepApplicable(metrics, { family: 'tool', policy: 'token' });
    this.lastStats = { ...st };
    this.lateAborted = 0;
    return { iteration: it, metrics, episodes, episodeRewards: sc.totals, episodeAdvantages: sc.adv.episodeAdv, allApplied: upd.allApplied };
  }

  /** With a prompt pool: counts this batch's outcomes into the pool and returns the `budget/*` metrics; {} without one. */
  private budgetMetrics(batch: readonly Scored[]): Record<string, number> {
    if (!this.prompts) return {};
    const outcomes = batch.map((g) => ({ prompt: g.prompt, size: g.size, successes: g.episodes.filter((e) => e.success).length, episodes: g.episodes.length, rewards: g.rewards }));
    return this.prompts.record(outcomes, this.config.algo.dynamicSampling.spreadTol);
  }

  /**
   * The state after the last finished iteration (call between steps; see the file comment for
   * what a resume from it reproduces). Groups in flight are listed as pending, not saved.
   */
  async checkpoint(): Promise<Checkpoint> {
    const sampling = await this.source.samplingState();
    return this.checkpointWith({
      rng: { minibatch: this.rng.getState(), sampling },
      schedule: this.scheduleCheckpoint(),
      rewardWeights: weightsOf(this.config.shaping),
      ...(this.referenceWeights ? { reference: copyWeights(this.referenceWeights) } : {}),
      groups: { next: this.nextGroup, pending: [...this.readmit, ...this.open.keys()].sort((a, b) => a - b) },
      ...(this.prompts ? { prompts: this.prompts.state() } : {}),
    });
  }

  /**
   * Continues from `cp` on this fresh trainer (before its first step): learner, source, proximal
   * policy and KL reference take the checkpoint's weights, the streams and counters their saved
   * values, and the pending groups are admitted first. Everything is checked first; a refused
   * checkpoint leaves the trainer fresh.
   */
  async restore(cp: Checkpoint): Promise<void> {
    const who = 'AsyncTokenTrainer.restore';
    // Checkpoints from before π_prox was fixed for multi-step updates (their learner served as
    // π_prox) carry the TIS cap as a graph input; it is algo.tis.cap either way.
    if (HYPER_INPUTS.tisCap in cp.hyper && !(HYPER_INPUTS.tisCap in this.learner.hyper)) {
      const { [HYPER_INPUTS.tisCap]: _cap, ...hyper } = cp.hyper;
      cp = { ...cp, hyper };
    }
    checkTokenCheckpoint(cp, {
      who,
      trainer: 'async-token',
      iteration: this.iteration,
      version: this.version,
      hyper: this.learner.hyper,
      rng: ['minibatch', 'sampling'],
      model: this.model,
      hasReference: this.reference !== null,
    });
    if (!cp.groups) throw new Error(`${who}: groups is missing (the continuous trainer's group counter)`);
    if (this.nextGroup !== 0) throw new Error(`${who}: only a fresh trainer can be restored (it has admitted groups)`);
    this.checkImportable();
    this.checkSchedule(cp);
    this.prompts?.checkState(cp.prompts, who);
    // As setHyper: token episodes record no potentials Φ, so the potential weight must be 0.
    const shaping = withShapingWeights(this.config.shaping, cp.rewardWeights, false);
    this.importCommon(cp);
    this.rng.setState(cp.rng.minibatch);
    this.config.shaping = shaping;
    this.shapingWeights = this.scheduledWeights(shaping);
    this.nextGroup = cp.groups.next;
    this.readmit = [...cp.groups.pending];
    if (this.prompts && cp.prompts) this.prompts.setState(cp.prompts);
    const w = await this.learner.getWeights();
    // Also at version 0: createTrainer may have skipped the warm start for a resume (CreateTrainerOptions.resume).
    await Promise.all([this.source.setWeights(w, this.version), this.source.setSamplingState(cp.rng.sampling), this.proximal?.setWeights(w, this.version)]);
    if (cp.reference && this.reference) {
      this.referenceWeights = copyWeights(cp.reference);
      await this.reference.setWeights(this.referenceWeights, 0);
    }
  }

  protected releaseRollout(): Promise<void> {
    return this.source.release();
  }
}
