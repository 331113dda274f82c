/**
 * The asynchronous trainer for multi-turn text envs with slow tools (DESIGN §6; issue 4 §4),
 * top to bottom. Rollouts are continuous (tokenSlots.ts): episodes start and finish at their own
 * pace, a tool call parks its episode for `info.latencyMs` of clock time while the other rows
 * keep decoding, and the learner trains on whole groups in the order they finish.
 *
 *   iteration at learner version V, with s = maxStaleness and G groups per batch:
 *     1. admit:  keep (1 + s)·G groups in flight or finished-but-untrained (new seeds, in order)
 *     2. wait:   run the generator until G groups have finished (dynamic sampling: drop the
 *                zero-spread ones and wait for more, up to the round cap)
 *     3. reward: env reward + shaping per episode; group advantages (GRPO family), broadcast
 *                onto the policy tokens
 *     4. correct: tokens sampled by version v < V are stale; with TIS their π_old is recomputed
 *                at V (a forward pass; decoupled PPO) and their advantage is multiplied by
 *                min(π_old/μ, cap); without TIS, π_old = μ
 *     5. update: epochs × minibatches of the ONNX train step on the recorded ids (TITO)
 *     6. sync:   version V + 1 goes to the decoder. Episodes in flight continue under it
 *                (partial rollouts: their earlier tokens keep version and μ, and their cached
 *                keys/values are not recomputed). Groups holding a token sampled before
 *                V + 1 − s could no longer be trained within the bound: they are aborted.
 *
 * The bound: a group is trained at version V only if every token in it was sampled at ≥ V − s
 * (step 6 enforces it; step 2 re-checks it). With s = 0 the trainer admits G groups, waits for
 * all of them and trains: the synchronous trainer, waiting for the slowest tool call of the
 * batch. With s ≥ 1 the learner trains on the groups that finished first while the stragglers'
 * tool calls keep running, and the next batches are already being generated.
 *
 * Everything runs in one thread: the decoder and the learner take turns, and tool latency
 * (a remote service) overlaps both. Extra keys over the token trainer's: `async/episodes_aborted`,
 * `async/kv_evictions`, `perf/tool_wait_s` (time no row could decode), `perf/episodes_per_s`
 * (trained episodes per second of wall time), `async/partial_ratio`.
 */
import { aggregationWeights, broadcastToTokens, sequenceAdvantages, EMA_BASELINE_INIT, type EmaBaselineState } from '../algos/advantages.ts';
import { GROUP_ALGOS } from '../algos/config.ts';
import { klPenalizedRewards } from '../algos/losses.ts';
import { buildIterationMetrics, summarizeEpisode } from '../algos/metrics.ts';
import { partialRatio, staleness, truncatedIsWeights } from '../algos/offpolicy.ts';
import { addSamplingRound, initDynamicSampling, samplingStats } from '../algos/sampling.ts';
import type { Clock } from '../envs/clock.ts';
import { makeEnv } from '../envs/index.ts';
import type { ToolEnv } from '../envs/types.ts';
import type { TransformerPolicy } from '../models/transformer.ts';
import { initWeights, type Weights } from '../models/types.ts';
import { shapeEpisode, type ShapedReward } from '../reward/shaping.ts';
import { Rng } from '../util/rng.ts';
import { applyLiveHyper, trainStepOptions, type LiveHyper } from '../update/hyper.ts';
import { mixSeed } from '../util/rng.ts';
import type { Engine, Learner } from '../engine/types.ts';
import type { TokenEpisode } from '../rollout/tokenLockstep.ts';
import { LocalTokenSource, type TokenEpisodeSource, type TokenSlotStats } from '../rollout/tokenContinuous.ts';
import { makeTokenModel, policyTokenCount, shiftedBatch, TokenTrainer, type TokenTrainerConfig } from './tokenTrainer.ts';
import type { IterationReport, Trainer } from './trainer.ts';
import { lengthBuckets, runTokenUpdate, SequenceScorer } from '../update/tokenUpdate.ts';

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

/** What a rollout worker needs to build the same generator as the training thread would. */
export interface TokenSourceInit {
  model: TokenTrainerConfig['model'];
  env: TokenTrainerConfig['env'];
  weights: Weights;
  version: number;
  /** Decoder rows (the KV budget). */
  rows: number;
  prefillStep: number;
  temperature: number;
  maxActionTokens: number;
  /** Seed of the sampling stream. */
  seed: number;
}

/** Builds the episode source in a rollout worker (platform-specific; see src/runtime/tokenWorker). */
export type TokenSourceFactory = (init: TokenSourceInit) => Promise<TokenEpisodeSource>;

interface GroupRec {
  id: number;
  seed: number;
  episodes: TokenEpisode[];
}

export class AsyncTokenTrainer implements Trainer<TokenEpisode> {
  iteration = 0;
  version = 0;
  private ema: EmaBaselineState = EMA_BASELINE_INIT;
  private readonly rng: Rng;
  /** Groups admitted and not yet trained or dropped, by id. */
  private readonly open = new Map<number, GroupRec>();
  /** Finished groups in finish order, not yet trained. */
  private finished: GroupRec[] = [];
  private nextGroup = 0;
  /** Finished episodes thrown away this iteration with their group, as too stale (see collect). */
  private lateAborted = 0;
  private lastStats: TokenSlotStats;

  private constructor(
    readonly config: TokenTrainerConfig,
    readonly scheduling: AsyncTokenScheduling,
    readonly model: TransformerPolicy,
    private readonly engine: Engine,
    private readonly source: TokenEpisodeSource,
    private readonly learner: Learner,
    /**
     * π at the learner's version, for stale tokens' π_old (batch = learnerBatch); null when
     * the learner takes π_old from its own forward pass (one update epoch: see create()).
     */
    private readonly proximal: SequenceScorer | null,
    private readonly reference: SequenceScorer | null,
    stats: TokenSlotStats,
  ) {
    this.rng = new Rng(mixSeed(config.seed, 0xa5c));
    this.lastStats = stats;
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
  ): Promise<AsyncTokenTrainer> {
    const { algo } = config;
    if (!GROUP_ALGOS.includes(algo.algo)) throw new Error(`AsyncTokenTrainer trains group algorithms (grpo, drgrpo, rloo); got ${algo.algo}`);
    if (!Number.isInteger(scheduling.maxStaleness) || scheduling.maxStaleness < 0) throw new RangeError(`maxStaleness must be a whole number ≥ 0, got ${scheduling.maxStaleness}`);
    const probe = makeEnv(config.env.id, config.env.kwargs);
    if (probe.spec.family !== 'tool') throw new Error(`AsyncTokenTrainer trains text (tool) envs; ${config.env.id} is a ${probe.spec.family} env`);
    const model = makeTokenModel(config.model);
    const weights = initial ?? initWeights(model, mixSeed(config.seed, 0x1e1));
    const rows = scheduling.kvRows > 0 ? scheduling.kvRows : config.groups * algo.groupSize;
    // With one update epoch every token is trained on by one optimizer step, and the weights at
    // that step are the proximal policy of decoupled PPO (ratio 1, the trust region anchored
    // where the update starts): the train graph takes π_old from its own forward pass
    // (stop-gradient) for stale tokens and applies the TIS weight itself, which saves a forward
    // pass over the stale sequences. With several minibatches, later ones anchor at the weights
    // the earlier steps left, which is what their fresh tokens' ratio measures against too.
    // Several epochs need one fixed π_old across epochs: it is recomputed by a scorer then.
    // Without TIS, stale tokens keep μ as π_old (no proximal policy at all).
    const selfProximal = algo.updateEpochs === 1 && algo.tis.enabled;
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
    // each group's prompt once (Learner.prefixGroups; runTokenUpdate's groupSize).
    const prefixGroups = config.learnerBatch % algo.groupSize === 0 ? config.learnerBatch / algo.groupSize : undefined;
    const [source, learner] = await Promise.all([
      worker ? worker(init) : localTokenSource(engine, init, clock),
      engine.createLearner(model, opts, weights, lens, prefixGroups),
    ]);
    const proximal = selfProximal ? null : new SequenceScorer(engine, model, config.learnerBatch, weights, lens);
    const ref = algo.klCoef > 0 ? new SequenceScorer(engine, model, config.learnerBatch, reference ?? weights, lens) : null;
    return new AsyncTokenTrainer(config, scheduling, model, engine, source, learner, proximal, ref, await source.stats());
  }

  get hyper(): Record<string, number> {
    return this.learner.hyper;
  }

  setHyper(h: LiveHyper): void {
    applyLiveHyper(this.learner.hyper, h);
  }

  getWeights(): Promise<Weights> {
    return this.learner.getWeights();
  }


  /**
   * Plays `seeds` with the current weights without training (temperature 0 = greedy), on a
   * separate synchronous trainer's decoder, so episodes in flight keep their caches.
   */
  async evaluate(seeds: readonly number[], temperature = 0): Promise<TokenEpisode[]> {
    const t = await TokenTrainer.create({ ...this.config, groups: 1, algo: { ...this.config.algo, groupSize: Math.min(16, seeds.length), klCoef: 0 } }, this.engine, await this.learner.getWeights());
    try {
      return await t.evaluate(seeds, temperature);
    } finally {
      await t.release();
    }
  }

  private shape(ep: TokenEpisode): ShapedReward {
    return shapeEpisode(
      { rewards: ep.rewards, infos: ep.infos, terminated: ep.terminated, truncated: ep.truncated, policyTokens: policyTokenCount(ep) },
      this.config.shaping,
    );
  }

  /** Starts groups until `count` are open (admitted, not yet trained or dropped). */
  private admit(count: number): Promise<void> {
    const N = this.config.algo.groupSize;
    const specs = [];
    while (this.open.size < count) {
      const id = this.nextGroup++;
      const seed = mixSeed(this.config.seed, 0x9e, id);
      this.open.set(id, { id, seed, episodes: [] });
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
  private collect(eps: readonly TokenEpisode[]): number[] {
    const N = this.config.algo.groupSize;
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
      } else if (g.episodes.length === N) this.finished.push(g);
    }
    return doomed;
  }

  /** Oldest policy version in a group's finished episodes (Infinity when none sampled yet). */
  private static minVersion(g: GroupRec): number {
    let v = Infinity;
    for (const ep of g.episodes) for (let i = 0; i < ep.versions.length; i++) if (ep.lossMask[i] && ep.versions[i] < v) v = ep.versions[i];
    return v;
  }

  /** One iteration: wait for G finished groups (dynamic sampling), update, sync, abort the too stale. */
  async step(): Promise<IterationReport<TokenEpisode>> {
    const { algo } = this.config;
    const s = this.scheduling.maxStaleness;
    const G = this.config.groups;
    const N = algo.groupSize;
    const it = this.iteration;
    const t0 = performance.now();

    // 1–2. admit and wait, in dynamic-sampling rounds of G finished groups
    type Scored = GroupRec & { rewards: number[]; shaped: ShapedReward[] };
    let ds = initDynamicSampling<Scored>();
    let batch: Scored[];
    const sampledEps: TokenEpisode[] = [];
    const sampledShaped: ShapedReward[] = [];
    let need = G;
    let rounds = 0;
    for (;;) {
      // Not awaited alone: next() is answered after the enqueue (call order), one round trip.
      let admitted = this.admit(s === 0 ? need : (1 + s) * G);
      while (this.finished.length < need) {
        const [, eps] = await Promise.all([admitted, this.source.next()]);
        admitted = Promise.resolve();
        if (eps.length === 0) throw new Error(`AsyncTokenTrainer: waiting for ${need} groups, but no episode is in flight`);
        const doomed = this.collect(eps);
        if (doomed.length > 0) {
          await this.source.drop(doomed, this.version - s);
          admitted = this.admit(s === 0 ? need : (1 + s) * G);
        }
      }
      await admitted;
      const round = this.finished.splice(0, need).map((g) => {
        const shaped = g.episodes.map((ep) => this.shape(ep));
        sampledEps.push(...g.episodes);
        sampledShaped.push(...shaped);
        this.open.delete(g.id);
        return { ...g, shaped, rewards: shaped.map((x) => x.total) };
      });
      rounds++;
      const st = addSamplingRound(ds, round, G, algo.dynamicSampling);
      ds = st.state;
      if (st.decision !== 'continue') {
        batch = st.batch!;
        break;
      }
      need = st.needGroups;
    }
    for (const g of batch) {
      const v = AsyncTokenTrainer.minVersion(g);
      if (this.version - v > s) throw new Error(`AsyncTokenTrainer: group ${g.id} has a token ${this.version - v} versions old (max ${s})`);
    }
    const episodes = batch.flatMap((g) => g.episodes);
    const shaped = batch.flatMap((g) => g.shaped);
    const totals = Float64Array.from(shaped, (x) => x.total);
    const t1 = performance.now();

    // 3. rows, KL reward, advantages
    const T = this.model.config.context;
    const V = this.model.numActions;
    const n = episodes.length;
    const rows = shiftedBatch(episodes, T);
    const ver = new Int32Array(n * T).fill(-1);
    episodes.forEach((ep, b) => {
      for (let t = 0; t + 1 < ep.versions.length; t++) ver[b * T + t] = ep.versions[t + 1];
    });
    const tokBatch = { nSeqs: n, seqLen: T, lossMask: rows.mask };
    const scored = { tokens: rows.tokens, actions: rows.actions, mask: rows.mask, n, T, V };
    let refLogp: Float32Array | null = null;
    if (this.reference && n > 0) refLogp = await this.reference.logprobs({ ...scored, groupSize: N });
    if (refLogp && algo.klMode === 'reward') {
      const pen = klPenalizedRewards(totals, T, rows.oldLogprobs, refLogp, rows.mask, algo.klCoef, algo.klEstimator);
      totals.set(pen.rewards);
    }
    let episodeAdv: Float64Array = new Float64Array(n);
    if (n > 0) {
      const r = sequenceAdvantages({ ...algo, groupSize: N }, totals, this.ema);
      this.ema = r.ema;
      episodeAdv = r.advantages;
    }
    const tokAdv = n > 0 ? broadcastToTokens(episodeAdv, tokBatch) : new Float64Array(0);
    const tokW = n > 0 ? aggregationWeights(tokBatch, algo.aggregation, algo.aggregationLen ?? T) : new Float64Array(0);

    // 4. off-policy correction for stale tokens
    const stale = staleness(this.version, ver, rows.mask);
    const fresh = new Float32Array(n * T);
    const staleSeqs = new Set<number>();
    for (let i = 0; i < n * T; i++) {
      if (!rows.mask[i]) continue;
      if (ver[i] === this.version) fresh[i] = 1;
      else staleSeqs.add(Math.floor(i / T));
    }
    // π_old: the behaviour μ on fresh tokens; on stale ones the proximal policy (the learner's
    // own pass when this.proximal is null, else recomputed here), with the TIS weight
    // min(π_prox/μ, cap) on their advantage when enabled.
    const oldLogp = rows.oldLogprobs.slice();
    const advUsed = Float64Array.from(tokAdv);
    let extra: Record<string, Float32Array> | undefined;
    let proxLogp = rows.oldLogprobs;
    if (!this.proximal) {
      const proxMask = new Float32Array(n * T);
      for (let i = 0; i < n * T; i++) if (rows.mask[i] && !fresh[i]) proxMask[i] = 1;
      extra = { prox_mask: proxMask };
    } else if (staleSeqs.size > 0) {
      proxLogp = rows.oldLogprobs.slice();
      const prox = await this.proximal.logprobs(scored, [...staleSeqs]);
      for (let i = 0; i < n * T; i++) if (rows.mask[i] && !fresh[i]) proxLogp[i] = prox[i];
      if (algo.tis.enabled) {
        oldLogp.set(proxLogp);
        const w = truncatedIsWeights(proxLogp, rows.oldLogprobs, rows.mask, algo.tis.cap).weights;
        for (let i = 0; i < n * T; i++) if (rows.mask[i] && !fresh[i]) advUsed[i] *= w[i];
      }
    }
    const t2 = performance.now();

    // 5. update
    const upd = await runTokenUpdate(
      this.learner,
      algo,
      { n, T, tokens: rows.tokens, actions: rows.actions, mask: rows.mask, oldLogprobs: oldLogp, advantages: advUsed, weights: tokW, refLogprobs: refLogp, extra, groupSize: N },
      this.rng,
      { logprobs: rows.oldLogprobs, mask: fresh },
    );
    // IS ratios π_prox/μ for the metrics: the learner's pre-step log-probs are π_prox.
    const tis = truncatedIsWeights(this.proximal ? proxLogp : upd.stepLogprobs, rows.oldLogprobs, rows.mask, algo.tis.cap);
    const t3 = performance.now();

    // 6. sync, then drop groups that could no longer be trained within the bound
    // The source's calls go out together: a rollout worker answers between two decoder slices,
    // in call order (the drop sees the new version, the stats see the drop), so this costs one
    // round trip instead of three.
    let synced: Promise<void> = Promise.resolve();
    if (upd.steps > 0) {
      this.version++;
      const w = await this.learner.getWeights();
      synced = this.source.setWeights(w, this.version);
      await this.proximal?.setWeights(w, this.version);
    }
    // Groups that could no longer be trained within the bound: by their finished episodes here,
    // by their running episodes' first tokens in the source.
    const doomed = new Set<number>();
    for (const g of this.open.values()) if (this.version - AsyncTokenTrainer.minVersion(g) > s) doomed.add(g.id);
    const [, dropped, st] = await Promise.all([synced, this.source.drop([...doomed], this.version - s), this.source.stats()]);
    for (const id of dropped) doomed.add(id);
    for (const id of doomed) {
      this.lateAborted += this.open.get(id)?.episodes.length ?? 0;
      this.open.delete(id);
    }
    this.finished = this.finished.filter((g) => !doomed.has(g.id));
    this.iteration++;
    const t4 = performance.now();

    // 7. metrics
    const d = (k: keyof TokenSlotStats): number => st[k] - this.lastStats[k];
    const rolloutS = (t1 - t0) / 1000;
    const trainS = (t3 - t1) / 1000;
    const iterS = (t4 - t0) / 1000;
    const policyAdv: number[] = [];
    for (let i = 0; i < tokAdv.length; i++) if (rows.mask[i]) policyAdv.push(tokAdv[i]);
    const rolloutEntropy: number[] = [];
    for (const ep of sampledEps) for (let i = 0; i < ep.lossMask.length; i++) if (ep.lossMask[i]) rolloutEntropy.push(ep.entropies[i]);
    const contextTok = d('contextTokens');
    const metrics = {
      ...buildIterationMetrics({
        episodes: sampledEps.map((ep, i) =>
          summarizeEpisode({ rewards: ep.rewards, infos: ep.infos, terminated: ep.terminated, truncated: ep.truncated, policyTokens: policyTokenCount(ep) }, sampledShaped[i]),
        ),
        advantages: { values: policyAdv },
        groups: samplingStats(ds),
        mismatch: upd.mismatch,
        staleness: stale,
        tis,
        partialRatio: partialRatio(ver, rows.mask, n, T),
        perf: {
          envStepsPerS: d('envSteps') / Math.max(1e-9, rolloutS),
          tokensPerS: d('policyTokens') / Math.max(1e-9, rolloutS),
          rolloutS,
          trainS,
          learnerIdleRatio: rolloutS / Math.max(1e-9, iterS),
          rolloutIdleRatio: trainS / Math.max(1e-9, iterS),
          kvCacheHitRate: contextTok > 0 ? d('cachedTokens') / contextTok : 0,
        },
        extra: { groupsDropped: ds.droppedGroups, samplingRounds: rounds },
      }),
      ...upd.metrics,
      'actor/lr': this.learner.hyper.lr,
      'actor/rollout_entropy': rolloutEntropy.length ? rolloutEntropy.reduce((a, b) => a + b, 0) / rolloutEntropy.length : 0,
      'episode/forced_end_ratio': sampledEps.filter((e) => e.forcedEnds > 0).length / Math.max(1, sampledEps.length),
      'episode/context_limited_ratio': sampledEps.filter((e) => e.contextLimited).length / Math.max(1, sampledEps.length),
      'train/batch_success_rate': n ? episodes.filter((e) => e.success).length / n : 0,
      'train/updates': upd.steps,
      'train/policy_version': this.version,
      'train/batch_episodes': n,
      'async/episodes_aborted': d('aborted') + this.lateAborted,
      'async/kv_evictions': d('evictions'),
      'async/in_flight': st.inFlight,
      'perf/tool_wait_s': d('toolWaitMs') / 1000,
      'perf/episodes_per_s': n / Math.max(1e-9, iterS),
      'perf/tis_s': (t2 - t1) / 1000,
      'perf/iteration_s': iterS,
    } as IterationReport<TokenEpisode>['metrics'];
    this.lastStats = { ...st };
    this.lateAborted = 0;
    return { iteration: it, metrics, episodes, episodeRewards: totals, episodeAdvantages: episodeAdv, allApplied: upd.allApplied };
  }

  async release(): Promise<void> {
    await Promise.all([this.source.release(), this.learner.release(), this.proximal?.release(), this.reference?.release()]);
  }
}

/** The generator in the training thread, on a decoder of `init.rows` rows. */
async function localTokenSource(engine: Engine, init: TokenSourceInit, clock: Clock): Promise<TokenEpisodeSource> {
  const decoder = await engine.createDecoder(makeTokenModel(init.model), init.rows, init.weights, init.prefillStep);
  decoder.version = init.version;
  return new LocalTokenSource({
    decoder,
    makeEnv: () => makeEnv(init.env.id, init.env.kwargs) as ToolEnv,
    clock,
    rng: new Rng(init.seed),
    temperature: init.temperature,
    maxActionTokens: init.maxActionTokens,
  });
}
