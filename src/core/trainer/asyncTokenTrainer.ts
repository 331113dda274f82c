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
import { applyLiveHyper, mixSeed, trainStepOptions, type LiveHyper } from './common.ts';
import type { Engine, Learner, PolicyRunner, TokenDecoder } from './engine.ts';
import type { TokenEpisode } from './tokenRollout.ts';
import { TokenSlotGenerator, type TokenSlotStats } from './tokenSlots.ts';
import { makeTokenModel, policyTokenCount, shiftedBatch, TokenTrainer, type TokenIterationReport, type TokenTrainerConfig } from './tokenTrainer.ts';
import { runTokenUpdate, sequenceLogprobs } from './tokenUpdate.ts';

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

interface GroupRec {
  id: number;
  seed: number;
  episodes: TokenEpisode[];
}

export class AsyncTokenTrainer {
  iteration = 0;
  version = 0;
  private ema: EmaBaselineState = EMA_BASELINE_INIT;
  private readonly rng: Rng;
  private readonly gen: TokenSlotGenerator;
  /** Groups admitted and not yet trained or dropped, by id. */
  private readonly open = new Map<number, GroupRec>();
  /** Finished groups in finish order, not yet trained. */
  private finished: GroupRec[] = [];
  private nextGroup = 0;
  private lastStats: TokenSlotStats;

  private constructor(
    readonly config: TokenTrainerConfig,
    readonly scheduling: AsyncTokenScheduling,
    readonly model: TransformerPolicy,
    private readonly engine: Engine,
    private readonly decoder: TokenDecoder,
    private readonly learner: Learner,
    /** π at the learner's version, for stale tokens' π_old (batch = learnerBatch). */
    private readonly proximal: PolicyRunner,
    private readonly reference: PolicyRunner | null,
    clock: Clock,
  ) {
    this.rng = new Rng(mixSeed(config.seed, 0xa5c));
    this.gen = new TokenSlotGenerator({
      decoder,
      makeEnv: () => makeEnv(config.env.id, config.env.kwargs) as ToolEnv,
      clock,
      rng: new Rng(mixSeed(config.seed, 0x70c)),
      temperature: config.temperature,
      maxActionTokens: config.maxActionTokens,
    });
    this.lastStats = { ...this.gen.stats };
  }

  static async create(
    config: TokenTrainerConfig,
    scheduling: AsyncTokenScheduling,
    engine: Engine,
    clock: Clock,
    initial?: Weights,
    reference?: Weights,
  ): Promise<AsyncTokenTrainer> {
    const { algo } = config;
    if (!GROUP_ALGOS.includes(algo.algo)) throw new Error(`AsyncTokenTrainer trains group algorithms (grpo, drgrpo, rloo); got ${algo.algo}`);
    if (!Number.isInteger(scheduling.maxStaleness) || scheduling.maxStaleness < 0) throw new RangeError(`maxStaleness must be a whole number ≥ 0, got ${scheduling.maxStaleness}`);
    const probe = makeEnv(config.env.id, config.env.kwargs);
    if (probe.spec.family !== 'tool') throw new Error(`AsyncTokenTrainer trains text (tool) envs; ${config.env.id} is a ${probe.spec.family} env`);
    const model = makeTokenModel(config.model);
    const weights = initial ?? initWeights(model, mixSeed(config.seed, 0x1e1));
    const rows = scheduling.kvRows > 0 ? scheduling.kvRows : config.groups * algo.groupSize;
    const opts = trainStepOptions({ ...algo, valueCoef: 0 }, config.learnerBatch);
    const [decoder, learner, proximal, ref] = await Promise.all([
      engine.createDecoder(model, rows, weights, config.prefillStep),
      engine.createLearner(model, opts, weights),
      engine.createPolicy(model, config.learnerBatch, weights),
      algo.klCoef > 0 ? engine.createPolicy(model, config.learnerBatch, reference ?? weights) : Promise.resolve(null),
    ]);
    return new AsyncTokenTrainer(config, scheduling, model, engine, decoder, learner, proximal, ref, clock);
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

  /** Episodes in flight (started, not finished). */
  get inFlight(): number {
    return this.gen.inFlight;
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
  private admit(count: number): void {
    const N = this.config.algo.groupSize;
    while (this.open.size < count) {
      const id = this.nextGroup++;
      const seed = mixSeed(this.config.seed, 0x9e, id);
      this.open.set(id, { id, seed, episodes: [] });
      for (let k = 0; k < N; k++) this.gen.enqueue({ seed, group: id });
    }
  }

  /** Moves finished episodes into their groups; full groups join `finished`. */
  private collect(): void {
    const N = this.config.algo.groupSize;
    for (const ep of this.gen.takeCompleted()) {
      const g = this.open.get(ep.group);
      if (!g) continue; // its group was dropped
      g.episodes.push(ep);
      if (g.episodes.length === N) this.finished.push(g);
    }
  }

  /** Oldest policy version in a group's finished episodes (Infinity when none sampled yet). */
  private static minVersion(g: GroupRec): number {
    let v = Infinity;
    for (const ep of g.episodes) for (let i = 0; i < ep.versions.length; i++) if (ep.lossMask[i] && ep.versions[i] < v) v = ep.versions[i];
    return v;
  }

  /** One iteration: wait for G finished groups (dynamic sampling), update, sync, abort the too stale. */
  async step(): Promise<TokenIterationReport> {
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
      this.admit(s === 0 ? need : (1 + s) * G);
      await this.gen.run(() => {
        this.collect();
        return this.finished.length >= need;
      });
      this.collect();
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
    let refLogp: Float32Array | null = null;
    if (this.reference && n > 0) refLogp = await sequenceLogprobs(this.reference, rows.tokens, rows.actions, n, T, V);
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
    const oldLogp = rows.oldLogprobs.slice();
    if (staleSeqs.size > 0) {
      const prox = await sequenceLogprobs(this.proximal, rows.tokens, rows.actions, n, T, V, [...staleSeqs]);
      for (let i = 0; i < n * T; i++) if (rows.mask[i] && !fresh[i]) oldLogp[i] = prox[i];
    }
    const tis = truncatedIsWeights(oldLogp, rows.oldLogprobs, rows.mask, algo.tis.cap);
    const advUsed = Float64Array.from(tokAdv);
    if (algo.tis.enabled) {
      for (let i = 0; i < n * T; i++) if (rows.mask[i] && !fresh[i]) advUsed[i] *= tis.weights[i];
    } else {
      oldLogp.set(rows.oldLogprobs);
    }
    const t2 = performance.now();

    // 5. update
    const upd = await runTokenUpdate(
      this.learner,
      algo,
      { n, T, tokens: rows.tokens, actions: rows.actions, mask: rows.mask, oldLogprobs: oldLogp, advantages: advUsed, weights: tokW, refLogprobs: refLogp },
      this.rng,
      { logprobs: rows.oldLogprobs, mask: fresh },
    );
    const t3 = performance.now();

    // 6. sync, then drop groups that could no longer be trained within the bound
    if (upd.steps > 0) {
      this.version++;
      const w = await this.learner.getWeights();
      this.decoder.setWeights(w, this.version);
      this.proximal.setWeights(w, this.version);
    }
    const doomed = new Set<number>();
    for (const g of this.open.values()) if (this.version - AsyncTokenTrainer.minVersion(g) > s) doomed.add(g.id);
    // Episodes still running: their own first token decides (the generator knows only finished ones).
    for (const id of this.liveTooStale(s)) doomed.add(id);
    for (const id of doomed) this.open.delete(id);
    this.finished = this.finished.filter((g) => !doomed.has(g.id));
    this.gen.abort((spec) => doomed.has(spec.group));
    this.iteration++;
    const t4 = performance.now();

    // 7. metrics
    const st = this.gen.stats;
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
      'async/episodes_aborted': d('aborted'),
      'async/kv_evictions': d('evictions'),
      'async/in_flight': this.gen.inFlight,
      'perf/tool_wait_s': d('toolWaitMs') / 1000,
      'perf/episodes_per_s': n / Math.max(1e-9, iterS),
      'perf/tis_s': (t2 - t1) / 1000,
      'perf/iteration_s': iterS,
    } as TokenIterationReport['metrics'];
    this.lastStats = { ...st };
    return { iteration: it, metrics, episodes, episodeRewards: totals, episodeAdvantages: episodeAdv, allApplied: upd.allApplied };
  }

  /** Groups with an episode still running whose first sampled token is too old to be trained. */
  private liveTooStale(s: number): number[] {
    return this.gen.groupsSampledBefore(this.version - s);
  }

  async release(): Promise<void> {
    await Promise.all([this.decoder.release(), this.learner.release(), this.proximal.release(), this.reference?.release()]);
  }
}
