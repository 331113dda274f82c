/**
 * The continuous collector for multi-turn text envs with slow tools, group algorithms only; the
 * synchronous case is staleness 0. Rollouts are continuous (rollout/tokenContinuous.ts): episodes
 * start and finish at their own pace, a tool call parks its episode for `info.latencyMs` of clock
 * time while the other rows keep decoding, and the learner trains on whole groups in the order
 * they finish. Each collect at learner version V, with s = maxStaleness and G groups per batch:
 *
 *   collect     the Trainer's collect pipeline (collect.ts) plays `rollouts`: keep (1 + s)·G
 *               groups in flight or finished-but-untrained, and wait until G have finished
 *               (dynamic sampling: drop zero-spread groups and wait for more); with the
 *               scheduler's prompt pool (sync only), the groups the pool plans (`begin`) instead
 *   shape       env reward + shaping + user reward terms, when collect takes a group into a batch
 *               (its episodes all finished), with the reward version current then: setRewardLab
 *               applies between iterations, so every group of one batch has one version, even a
 *               group sampled partly under an older policy version
 *   sync        version V + 1 goes to the source; episodes in flight continue under it (partial
 *               rollouts), and groups that could no longer be trained within the bound are aborted
 *   metrics     `async/episodes_aborted`, `async/kv_evictions`, `async/in_flight`,
 *               `perf/tool_wait_s` (time no row could decode), `perf/episodes_per_s`
 *
 * The bound: a group is trained at version V only if every token in it was sampled at ≥ V − s
 * (sync enforces it, collect re-checks it). With s = 0 the collector admits G groups, waits for
 * all of them and trains, waiting for the slowest tool call of the batch. Everything runs in one
 * thread unless a rollout worker decodes: the decoder and the learner take turns, and tool
 * latency (a remote service) overlaps both.
 *
 * Its checkpoint part: both RNG streams (minibatch shuffles here, token sampling in the source),
 * the KL reference's weights, and the group bookkeeping: the next group id and the groups admitted
 * but not trained. The episodes in flight are not saved: a resumed run admits those groups again
 * (same ids, same env seeds) and samples them afresh with the restored weights. With staleness
 * ≥ 1, or a rollout worker or real tool latency (where timing decides which episode finishes
 * first), a resumed run is therefore valid but not bit-identical to an uninterrupted one; in sync
 * mode (staleness 0: nothing is in flight between iterations) with the in-thread source on a
 * virtual clock it is bit-identical.
 */
import { GROUP_ALGOS } from '../algos/config.ts';
import { familyOf } from '../envs/families.ts';
import type { PlannedGroup } from '../rollout/promptPool.ts';
import type { Clock } from '../envs/clock.ts';
import { makeEnv } from '../envs/index.ts';
import { makeTextEnv } from '../envs/grid/textAdapter.ts';
import { makeTokenModel, type TransformerPolicy } from '../models/transformer.ts';
import { initWeights, type Weights } from '../models/types.ts';
import type { RewardLab } from '../reward/userTerms.ts';
import { mixSeed, Rng } from '../util/rng.ts';
import { trainStepOptions } from '../update/hyper.ts';
import { HYPER_INPUTS } from '../update/trainStep.ts';
import type { Engine, Learner } from '../engine/types.ts';
import { sampledTokenEpisode, tokenStateKeys, type TokenEpisode } from '../rollout/tokenEpisode.ts';
import type { TokenSlotStats } from '../rollout/tokenContinuous.ts';
import { localTokenSource, type TokenEpisodeSource, type TokenSourceFactory, type TokenSourceInit } from '../rollout/tokenSource.ts';
import type { Checkpoint } from '../runs/checkpoint.ts';
import { checkTokenCheckpoint, copyWeights } from './tokenCheckpoint.ts';
import { tokenRolloutBatch } from '../update/batch.ts';
import { continuousMetrics } from './continuousMetrics.ts';
import { learnerIsProximal } from '../update/offPolicy.ts';
import { lengthBuckets, SequenceScorer } from '../update/sequenceScorer.ts';
import type { Collected, Skipped } from './collector.ts';
import type { Collector } from './collectorShell.ts';
import { schedulerFor, type Scheduler } from './scheduler.ts';
import { collectedOf, skippedMetrics, type Gathered, type RolloutSource } from './collect.ts';
import { RewardScoring } from './rewards.ts';
import { playTokenSeeds, shapeTokenEpisodes, type TokenTrainerConfig } from './tokenConfig.ts';
import { Trainer } from './trainer.ts';
import { allOrRelease } from '../util/allOrRelease.ts';

interface GroupRec {
  id: number;
  seed: number;
  episodes: TokenEpisode[];
  /** Episodes in the group: algo.groupSize, or the rollout budget's share for its prompt. */
  size: number;
  /** Index in the prompt pool (rollout.budget.pool > 0), else −1 (a fresh prompt). */
  prompt: number;
}

/** Oldest policy version in a group's finished episodes (Infinity when none sampled yet). */
function minVersion(g: GroupRec): number {
  let v = Infinity;
  for (const ep of g.episodes) for (let i = 0; i < ep.versions.length; i++) if (ep.lossMask[i] && ep.versions[i] < v) v = ep.versions[i];
  return v;
}

export class ContinuousCollector implements Collector<TokenEpisode, GroupRec> {
  readonly kind = 'async-token';
  readonly metricRun = { family: 'tool', policy: 'token' } as const;
  /** Minibatch shuffles (token sampling has its own stream, in the source). */
  readonly rng: Rng;
  /** The run's algorithm (a group algorithm): the pipeline's groups, resampling and needs. */
  get algo() {
    return this.config.algo;
  }
  /** Groups admitted and not yet trained or dropped, by id. */
  private readonly open = new Map<number, GroupRec>();
  /** Finished groups in finish order, not yet trained. */
  private finished: GroupRec[] = [];
  private nextGroup = 0;
  /** Group ids to admit before new ones, ascending: the untrained groups of a restored checkpoint. */
  private readmit: number[] = [];
  /** Finished episodes thrown away this iteration with their group, as too stale (see collectEpisodes). */
  private lateAborted = 0;
  /** The loop's statistics at the last iteration's end, and at the last sync (plus the groups in flight). */
  private lastStats: TokenSlotStats;
  private syncStats: TokenSlotStats & { inFlight: number };
  /** The learner's version, as the last collect or sync saw it. */
  private version = 0;
  /** The weights of `version` (what evaluate plays). */
  private weights: Weights;

  constructor(
    readonly config: TokenTrainerConfig,
    private readonly scheduler: Scheduler,
    readonly model: TransformerPolicy,
    private readonly engine: Engine,
    private readonly source: TokenEpisodeSource,
    /**
     * π at the learner's version, for stale tokens' π_old (batch = learnerBatch); null when the
     * learner takes π_old from its own forward pass (an update of one optimizer step: see create).
     */
    private readonly prox: SequenceScorer | null,
    readonly reference: SequenceScorer | null,
    /** The KL reference policy's weights (what `reference` scores with); null without one. */
    private referenceWeights: Weights | null,
    private readonly rewards: RewardScoring,
    weights: Weights,
    stats: TokenSlotStats,
  ) {
    this.rng = new Rng(mixSeed(config.seed, 0xa5c));
    this.lastStats = stats;
    this.syncStats = { ...stats, inFlight: 0 };
    this.weights = weights;
  }

  get proximal(): SequenceScorer | 'learner' {
    return this.prox ?? 'learner';
  }

  /**
   * Plays `seeds` with the current weights without training (temperature 0 = greedy), on a
   * decoder of its own (at most 16 rows), so episodes in flight keep their caches.
   */
  async evaluate(seeds: readonly number[], temperature: number): Promise<TokenEpisode[]> {
    const n = Math.min(16, seeds.length);
    const envs = Array.from({ length: n }, () => makeTextEnv(this.config.env.id, this.config.env.kwargs));
    const decoder = await this.engine.createDecoder(this.model, n, this.weights, this.config.prefillStep);
    try {
      return await playTokenSeeds(envs, decoder, seeds, temperature, this.config);
    } finally {
      await decoder.release();
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
        const seed = this.scheduler.prompts!.promptSeed(p.prompt);
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
      if (!this.scheduler.fresh(minVersion(g), this.version)) {
        this.open.delete(g.id);
        this.finished = this.finished.filter((x) => x !== g);
        this.lateAborted += g.episodes.length;
        doomed.push(g.id);
      } else if (g.episodes.length === g.size) this.finished.push(g);
    }
    return doomed;
  }

  /** The prompt pool's planned groups of the collect under way (with a pool), else undefined. */
  private plan: readonly PlannedGroup[] | undefined;

  /**
   * One sampling round: admits groups (up to (1 + s)·G open, or the pool's plan) and waits until
   * `need` have finished, which it hands on in finish order.
   */
  readonly rollouts: RolloutSource<TokenEpisode, GroupRec> = {
    play: async (_it, _round, need) => {
      const s = this.scheduler.maxStaleness;
      const open = this.scheduler.openGroups(need, this.config.groups);
      const plan = this.plan;
      // Not awaited alone: next() is answered after the enqueue (call order), one round trip.
      let admitted = this.admit(open, plan);
      while (this.finished.length < need) {
        const [, eps] = await Promise.all([admitted, this.source.next()]);
        admitted = Promise.resolve();
        if (eps.length === 0) throw new Error(`ContinuousCollector: waiting for ${need} groups, but no episode is in flight`);
        const doomed = this.collectEpisodes(eps);
        if (doomed.length > 0) {
          await this.source.drop(doomed, this.version - s);
          // A planned batch is admitted once (sync: nothing can become too stale in it).
          admitted = plan ? Promise.resolve() : this.admit(open);
        }
      }
      await admitted;
      const taken = this.finished.splice(0, need);
      for (const g of taken) this.open.delete(g.id);
      return taken;
    },
    score: (episodes) => shapeTokenEpisodes(this.rewards, episodes),
    greedy: () => Promise.reject(new Error('ContinuousCollector: greedy baselines need sync lockstep play (the algorithm refuses async)')),
    stateKeys: (ep, shaped) => tokenStateKeys(ep, shaped.perStep.length),
    summarize: sampledTokenEpisode,
  };

  /** Takes the learner's version; with a prompt pool (sync, no dynamic sampling: one round) the batch's groups are planned up front. */
  async begin(it: number, version: number): Promise<number> {
    this.version = version;
    this.plan = this.scheduler.plan(it, this.config.groups, this.config.algo.groupSize);
    return this.plan ? this.plan.length : this.config.groups;
  }

  /** The gathered groups as a token batch, each re-checked against the staleness bound; their outcomes for the prompt pool. */
  finish(g: Gathered<TokenEpisode, GroupRec>): Collected<TokenEpisode> | Skipped {
    const { algo } = this.config;
    const s = this.scheduler.maxStaleness;
    this.plan = undefined;
    for (const grp of g.groups) {
      const v = minVersion(grp);
      if (!this.scheduler.fresh(v, this.version)) throw new Error(`ContinuousCollector: group ${grp.id} has a token ${this.version - v} versions old (max ${s})`);
    }
    if (g.episodes.length === 0) return { skipped: skippedMetrics(g) };
    const { episodes } = g;
    const n = episodes.length;
    if (!this.prox && !learnerIsProximal(algo, n, this.config.learnerBatch)) throw new Error(`ContinuousCollector: ${n} sequences take more than one train step, and the learner serves as π_prox only for one`);
    // Adaptive budget: groups of unequal size; the scorers then run every sequence whole.
    return collectedOf(g, episodes, tokenRolloutBatch(episodes, this.model.config.context, this.model.numActions, g.equal ? algo.groupSize : undefined), {
      outcomes: this.scheduler.prompts ? g.groups.map((grp) => ({ prompt: grp.prompt, size: grp.size, successes: grp.episodes.filter((ep) => ep.success).length, episodes: grp.episodes.length, rewards: grp.rewards })) : undefined,
      metrics: (_sc, tr, t) => {
        if (!tr) throw new Error('ContinuousCollector: its metrics need the policy-gradient phases, which did not run');
        const st = this.syncStats;
        const loop = continuousMetrics({ prev: this.lastStats, now: st, lateAborted: this.lateAborted, episodes: n, rolloutS: (t.collected - t.start) / 1000, trainS: (t.trained - t.collected) / 1000, iterS: (t.synced - t.start) / 1000, tisS: tr.offS });
        this.lastStats = { ...st };
        this.lateAborted = 0;
        return loop;
      },
    });
  }

  /**
   * The sync phase: version V + 1 to the source (when the update stepped), then drops the groups
   * that could no longer be trained within the bound: by their finished episodes here, by their
   * running episodes' first tokens in the source. The source's calls go out together: a rollout
   * worker answers between two decoder slices, in call order (the drop sees the new version, the
   * stats see the drop), so this costs one round trip instead of three.
   */
  async sync(w: Weights | null, version: number): Promise<void> {
    const s = this.scheduler.maxStaleness;
    this.version = version;
    let synced: Promise<void> = Promise.resolve();
    if (w) {
      this.weights = w;
      synced = this.source.setWeights(w, version);
      await this.prox?.setWeights(w, version);
    }
    const doomed = new Set<number>();
    for (const g of this.open.values()) if (!this.scheduler.fresh(minVersion(g), version)) doomed.add(g.id);
    const [, dropped, st] = await Promise.all([synced, this.source.drop([...doomed], version - s), this.source.stats()]);
    for (const id of dropped) doomed.add(id);
    for (const id of doomed) {
      this.lateAborted += this.open.get(id)?.episodes.length ?? 0;
      this.open.delete(id);
    }
    this.finished = this.finished.filter((g) => !doomed.has(g.id));
    this.syncStats = st;
  }

  /** Its part of a checkpoint (see the file comment): groups in flight are listed as pending, not saved. */
  async checkpoint(): Promise<Pick<Checkpoint, 'rng' | 'reference' | 'groups'>> {
    const sampling = await this.source.samplingState();
    return {
      rng: { minibatch: this.rng.getState(), sampling },
      ...(this.referenceWeights ? { reference: copyWeights(this.referenceWeights) } : {}),
      groups: { next: this.nextGroup, pending: [...this.readmit, ...this.open.keys()].sort((a, b) => a - b) },
    };
  }

  checkRestore(checkpoint: Checkpoint, learner: Learner, who: string): Checkpoint {
    let cp = checkpoint;
    // Checkpoints from before π_prox was fixed for multi-step updates (their learner served as
    // π_prox) carry the TIS cap as a graph input; it is algo.tis.cap either way.
    if (HYPER_INPUTS.tisCap in cp.hyper && !(HYPER_INPUTS.tisCap in learner.hyper)) {
      const { [HYPER_INPUTS.tisCap]: _cap, ...hyper } = cp.hyper;
      cp = { ...cp, hyper };
    }
    checkTokenCheckpoint(cp, { who, trainer: 'async-token', iteration: 0, version: 0, hyper: learner.hyper, rng: ['minibatch', 'sampling'], model: this.model, hasReference: this.reference !== null });
    if (!cp.groups) throw new Error(`${who}: groups is missing (the continuous collector's group counter)`);
    if (this.nextGroup !== 0) throw new Error(`${who}: only a fresh trainer can be restored (it has admitted groups)`);
    return cp;
  }

  /** Source, proximal policy and KL reference take the checkpoint's weights (also at version 0: createTrainer may have skipped the warm start for a resume); pending groups are admitted first. */
  async restore(cp: Checkpoint, w: Weights): Promise<void> {
    this.rng.setState(cp.rng.minibatch!);
    this.nextGroup = cp.groups!.next;
    this.readmit = [...cp.groups!.pending];
    this.version = cp.policyVersion;
    this.weights = w;
    await Promise.all([this.source.setWeights(w, cp.policyVersion), this.source.setSamplingState(cp.rng.sampling!), this.prox?.setWeights(w, cp.policyVersion)]);
    if (cp.reference && this.reference) {
      this.referenceWeights = copyWeights(cp.reference);
      await this.reference.setWeights(this.referenceWeights, 0);
    }
  }

  async release(): Promise<void> {
    await this.source.release();
    await Promise.all([this.prox?.release(), this.reference?.release()]);
  }
}

/**
 * The Trainer of the continuous token loop (group algorithms on tool envs), scheduled by
 * `config.scheduling` (staleness bound, KV rows, prompt budget; absent = sync, fresh prompts).
 * @param worker decode in a rollout worker (the learner then trains while it decodes); default: this thread.
 * @param rewardLab user reward terms (the reward lab), scored on every collected group.
 */
export async function createContinuousTrainer(
  config: TokenTrainerConfig,
  engine: Engine,
  clock: Clock,
  initial?: Weights,
  reference?: Weights,
  worker?: TokenSourceFactory,
  rewardLab?: RewardLab,
): Promise<Trainer<TokenEpisode, ContinuousCollector>> {
  const { algo } = config;
  if (!GROUP_ALGOS.includes(algo.algo)) throw new Error(`the continuous token loop trains group algorithms (${GROUP_ALGOS.join(', ')}); got ${algo.algo}`);
  const scheduler = schedulerFor(config.scheduling, algo.dynamicSampling.enabled, config.seed);
  const probe = makeEnv(config.env.id, config.env.kwargs);
  if (!familyOf(probe.spec).plays.transformer?.continuous) throw new Error(`the continuous token loop trains text (tool) envs; ${config.env.id} is a ${probe.spec.family} env`);
  const model = makeTokenModel(config.model);
  const weights = initial ?? initWeights(model, mixSeed(config.seed, 0x1e1));
  const kvRows = config.scheduling?.kvRows ?? 0;
  const rows = kvRows > 0 ? kvRows : config.groups * algo.groupSize;
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
  const opts = { ...trainStepOptions({ ...algo, valueCoef: 0 }, config.learnerBatch), logitMask: config.constrained };
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
    constrained: config.constrained,
    seed: mixSeed(config.seed, 0x70c),
  };
  // A group's episodes start from one prompt: with whole groups per minibatch, the learner runs
  // each group's prompt once (Learner.prefixGroups; the sequence feed's groupSize).
  // Groups of unequal size (adaptive budget) do not fill minibatches of whole groups: no sharing.
  const equalGroups = config.scheduling?.budget?.mode !== 'adaptive';
  const prefixGroups = equalGroups && config.learnerBatch % algo.groupSize === 0 ? config.learnerBatch / algo.groupSize : undefined;
  const [source, learner] = await allOrRelease([worker ? worker(init) : localTokenSource(engine, init, clock), engine.createLearner(model, opts, weights, lens, prefixGroups)]);
  const proximal = selfProximal ? null : new SequenceScorer(engine, model, config.learnerBatch, weights, lens);
  const refWeights = algo.klCoef > 0 ? (reference ?? weights) : null;
  const ref = refWeights ? new SequenceScorer(engine, model, config.learnerBatch, refWeights, lens) : null;
  // Tool envs record no potentials Φ, so the potential weight must stay 0.
  const rewards = new RewardScoring(config.shaping, config.schedule ?? null, false);
  const collector = new ContinuousCollector(config, scheduler, model, engine, source, proximal, ref, refWeights, rewards, weights, await source.stats());
  const trainer = new Trainer<TokenEpisode, ContinuousCollector>({ algo, collector, scheduler, learner, rewards });
  if (rewardLab) trainer.setRewardLab(rewardLab);
  return trainer;
}
