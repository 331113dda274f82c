/**
 * The synchronous trainer for multi-turn text envs with a token policy (tiny transformer), top to
 * bottom. Text envs are tool envs, and grid envs played as text (envs/grid/textAdapter.ts).
 *
 *   1. rollout:    groups of episodes (same seed per group) in lockstep on a KV-cached decoder
 *                  (tokenRollout.ts); with dynamic sampling, zero-spread groups are dropped and
 *                  more are sampled, up to a round cap. PPO: distinct seeds, and the decoder's
 *                  value head records V beside every sampled token
 *   2. reward:     env reward + named shaping terms (format penalty, tool cost, length, ...)
 *   3. advantages: GRPO / Dr.GRPO / RLOO / REINFORCE per episode, broadcast to policy tokens;
 *                  PPO: GAE over the episode's policy tokens (`tokenGae`), returns as the
 *                  value target
 *   4. update:     minibatches of the ONNX train step on exactly the recorded ids (TITO): the
 *                  target at position t is tokens[t+1], masked to policy tokens, old log-probs
 *                  are the behaviour log-probs; optional KL to a reference (warm-start) policy;
 *                  PPO adds the value loss ½(V − R)² at the same positions
 *   5. sync:       the learner's weights become the decoder's, version + 1
 *   6. metrics:    one object with the DESIGN §7 keys; episode/* and reward/* are over every
 *                  episode sampled this iteration (dropped groups included: they describe the
 *                  policy), adv/* and the actor/* losses over the trained batch
 *
 * Extra keys: `actor/rollout_entropy` (behaviour entropy on sampled tokens),
 * `episode/forced_end_ratio` (episodes with an action cut at maxActionTokens),
 * `episode/context_limited_ratio`, `train/batch_success_rate` (the trained, filtered batch),
 * `train/updates`, `train/policy_version`, `train/batch_episodes`, `perf/iteration_s`.
 *
 * Staleness is 0: every token in a batch was sampled by the version being trained, so before the
 * first update the learner's log-probs must equal the rollout's (`mismatch/*`, ≤ 1e-4 on WASM).
 */
import { aggregationWeights, broadcastToTokens, normalizeAdvantages, sequenceAdvantages, EMA_BASELINE_INIT, type EmaBaselineState } from '../algos/advantages.ts';
import { GROUP_ALGOS, type AlgoConfig } from '../algos/config.ts';
import { buildIterationMetrics, summarizeEpisode } from '../algos/metrics.ts';
import { addSamplingRound, initDynamicSampling, samplingStats, type RewardGroup } from '../algos/sampling.ts';
import { klPenalizedRewards } from '../algos/losses.ts';
import type { Numbers } from '../algos/stats.ts';
import type { EnvKwargs } from '../envs/index.ts';
import { makeTextEnv } from '../envs/grid/textAdapter.ts';
import type { ToolEnv } from '../envs/types.ts';
import { TransformerPolicy } from '../models/transformer.ts';
import { initWeights, type Weights } from '../models/types.ts';
import { shapeEpisode, DEFAULT_SHAPING, type ShapedReward, type ShapingConfig } from '../reward/shaping.ts';
import { PAD, VOCAB_SIZE } from '../text/codec.ts';
import { Rng } from '../util/rng.ts';
import type { Engine, Learner, TokenDecoder } from '../engine/types.ts';
import { applyLiveHyper, trainStepOptions, type LiveHyper } from '../update/hyper.ts';
import { mixSeed } from '../util/rng.ts';
import { withShapingWeights } from '../reward/shaping.ts';
import type { IterationReport, Trainer } from './trainer.ts';
import { collectTokenEpisodes, type TokenEpisode } from '../rollout/tokenLockstep.ts';
import { lengthBuckets, runTokenUpdate, SequenceScorer } from '../update/tokenUpdate.ts';

export interface TransformerModelConfig {
  kind: 'transformer';
  /** Residual width. */
  dModel: number;
  /** Decoder blocks. */
  nLayers: number;
  /** Attention heads (divide dModel). */
  nHeads: number;
  /** MLP hidden width. */
  dFF: number;
  /** Context length in tokens: an episode's whole transcript must fit (longer ones are truncated). */
  context: number;
}

export const DEFAULT_TOKEN_MODEL: TransformerModelConfig = { kind: 'transformer', dModel: 64, nLayers: 2, nHeads: 4, dFF: 256, context: 128 };

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

/** The transformer for a config (vocabulary = the shared codec); PPO needs the value head. */
export function makeTokenModel(m: TransformerModelConfig, valueHead = false): TransformerPolicy {
  return new TransformerPolicy({ vocabSize: VOCAB_SIZE, dModel: m.dModel, nLayers: m.nLayers, nHeads: m.nHeads, dFF: m.dFF, context: m.context, valueHead });
}

/** Policy tokens of an episode (its loss-mask sum). */
export function policyTokenCount(ep: TokenEpisode): number {
  let n = 0;
  for (let i = 0; i < ep.lossMask.length; i++) n += ep.lossMask[i];
  return n;
}

/**
 * Next-token training rows for sequences padded to T: position t predicts tokens[t+1].
 * Returns int32 tokens/actions [n·T] and the shifted loss mask / behaviour log-probs [n·T].
 */
export function shiftedBatch(episodes: readonly Pick<TokenEpisode, 'tokens' | 'lossMask' | 'logprobs'>[], T: number): {
  tokens: Int32Array;
  actions: Int32Array;
  mask: Float32Array;
  oldLogprobs: Float32Array;
} {
  const n = episodes.length;
  const tokens = new Int32Array(n * T).fill(PAD);
  const actions = new Int32Array(n * T);
  const mask = new Float32Array(n * T);
  const oldLogprobs = new Float32Array(n * T);
  episodes.forEach((ep, b) => {
    const L = ep.tokens.length;
    if (L > T) throw new RangeError(`shiftedBatch: episode ${b} has ${L} tokens, the context is ${T}`);
    tokens.set(ep.tokens, b * T);
    for (let t = 0; t + 1 < L; t++) {
      actions[b * T + t] = ep.tokens[t + 1];
      mask[b * T + t] = ep.lossMask[t + 1];
      oldLogprobs[b * T + t] = ep.logprobs[t + 1];
    }
  });
  return { tokens, actions, mask, oldLogprobs };
}

/**
 * GAE(γ, λ) over one episode's policy tokens (PPO for a token policy), per context position.
 *
 * The timeline is the episode's policy tokens in order; environment tokens are not steps (they
 * are part of the transition from one action to the next). An action's tokens run from its
 * first token to the one that ends it (<eoa>, or the forced end), and the env's reward for that
 * turn lands on that last token. Discounting is per turn, so γ and λ mean what they mean for the
 * same env with the MLP: inside an action γ = λ = 1 (the next token is the same decision
 * continued, with no env step between), across a turn boundary γ and λ apply:
 *
 *   δ_k = r_k + γ_k·V_{k+1} − V_k,   A_k = δ_k + γ_k·λ_k·A_{k+1},   R_k = A_k + V_k
 *   γ_k, λ_k = γ, λ when token k ends an action, else 1, 1.
 *
 * After the last token: V = 0 if the episode terminated; otherwise (the env's time limit or the
 * context ran out) it bootstraps from the last token's own V, since the final observation was
 * never fed to the model (V of the state one action later is not available). A half-written
 * action cut by the context has no env step and earns no reward.
 *
 * @param ep lossMask [L] and values [L] (V of the state each policy token was sampled in).
 * @param turnRewards [turns] reward of each env step (e.g. ShapedReward.perStep).
 * @returns advantages [L] and returns [L], 0 on environment tokens.
 */
export function tokenGae(
  ep: Pick<TokenEpisode, 'lossMask' | 'terminated'> & { values: Float32Array },
  turnRewards: Numbers,
  gamma: number,
  lambda: number,
): { advantages: Float64Array; returns: Float64Array } {
  const L = ep.lossMask.length;
  if (ep.values.length !== L) throw new RangeError(`tokenGae: ${L} tokens but ${ep.values.length} values`);
  const idx: number[] = [];
  for (let i = 0; i < L; i++) if (ep.lossMask[i]) idx.push(i);
  const K = idx.length;
  // Token k ends an action when the next policy token is not adjacent (env tokens between) or k is last.
  const ends = idx.map((p, k) => k === K - 1 || idx[k + 1] !== p + 1);
  const actions = ends.filter(Boolean).length;
  const T = turnRewards.length;
  if (!(actions === T || (actions === T + 1 && !ep.terminated))) {
    throw new RangeError(`tokenGae: ${actions} actions in the context but ${T} turn rewards (the context may hold one unfinished action more)`);
  }
  const reward = new Float64Array(K);
  for (let k = 0, turn = 0; k < K; k++) if (ends[k] && turn < T) reward[k] = turnRewards[turn++];
  const advantages = new Float64Array(L);
  const returns = new Float64Array(L);
  let nextValue = ep.terminated || K === 0 ? 0 : ep.values[idx[K - 1]];
  let nextAdv = 0;
  for (let k = K - 1; k >= 0; k--) {
    const g = ends[k] ? gamma : 1;
    const l = ends[k] ? lambda : 1;
    const v = ep.values[idx[k]];
    const a = reward[k] + g * nextValue - v + g * l * nextAdv;
    advantages[idx[k]] = a;
    returns[idx[k]] = a + v;
    nextValue = v;
    nextAdv = a;
  }
  return { advantages, returns };
}

export class TokenTrainer implements Trainer<TokenEpisode> {
  iteration = 0;
  version = 0;
  private ema: EmaBaselineState = EMA_BASELINE_INIT;
  private readonly rng: Rng;

  private constructor(
    readonly config: TokenTrainerConfig,
    readonly model: TransformerPolicy,
    private readonly envs: ToolEnv[],
    private readonly decoder: TokenDecoder,
    private readonly learner: Learner,
    private readonly reference: SequenceScorer | null,
  ) {
    this.rng = new Rng(mixSeed(config.seed, 0x70c));
  }

  /**
   * @param initial starting weights (e.g. the imitation warm start); default a fresh init.
   * @param reference weights of the KL reference policy (default `initial`); used when algo.klCoef > 0.
   */
  static async create(config: TokenTrainerConfig, engine: Engine, initial?: Weights, reference?: Weights): Promise<TokenTrainer> {
    const { algo } = config;
    const ppo = algo.algo === 'ppo';
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
    const ref = useRef ? new SequenceScorer(engine, model, config.learnerBatch, { ...fresh, ...(reference ?? initial) }, lens) : null;
    return new TokenTrainer(config, model, envs, decoder, learner, ref);
  }

  /** Live hyperparameters (lr, entropy_coef, clip_low, clip_high, kl_coef): edit between iterations. */
  get hyper(): Record<string, number> {
    return this.learner.hyper;
  }

  /**
   * Change live hyperparameters; they apply from the next train step. Reward weights replace
   * `config.shaping` (a new object, read by the next iteration's shaping); tool envs record no
   * potentials, so the potential weight must stay 0.
   */
  setHyper(h: LiveHyper): void {
    if (h.rewardWeights) this.config.shaping = withShapingWeights(this.config.shaping, h.rewardWeights, false);
    applyLiveHyper(this.learner.hyper, h);
  }

  getWeights(): Promise<Weights> {
    return this.learner.getWeights();
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

  private shape(ep: TokenEpisode): ShapedReward {
    return shapeEpisode(
      { rewards: ep.rewards, infos: ep.infos, terminated: ep.terminated, truncated: ep.truncated, policyTokens: policyTokenCount(ep) },
      this.config.shaping,
    );
  }

  /** One iteration: rollout (with dynamic sampling), advantages, update, sync. */
  async step(): Promise<IterationReport<TokenEpisode>> {
    const { algo } = this.config;
    const it = this.iteration;
    const grouped = GROUP_ALGOS.includes(algo.algo);
    const t0 = performance.now();

    // 1. rollout, in rounds of one decoder batch each
    const G = grouped ? this.config.groups : 1;
    const N = grouped ? algo.groupSize : this.envs.length;
    let ds = initDynamicSampling<Group>();
    let batchGroups: Group[];
    let envSteps = 0, policyTokens = 0, cacheHit = 0, rounds = 0;
    // Every sampled episode (dropped groups too): the episode/* and reward/* metrics describe the
    // policy, not the filtered batch (which dynamic sampling biases towards mixed outcomes).
    const sampledEps: TokenEpisode[] = [];
    const sampledShaped: ShapedReward[] = [];
    for (let round = 0; ; round++) {
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
      rounds++;
      envSteps += ro.envSteps;
      policyTokens += ro.policyTokens;
      cacheHit += ro.kvCacheHitRate;
      const sampled: Group[] = [];
      for (let g = 0; g < G; g++) {
        const eps = ro.episodes.slice(g * N, (g + 1) * N);
        const shaped = eps.map((ep) => this.shape(ep));
        sampledEps.push(...eps);
        sampledShaped.push(...shaped);
        sampled.push({ episodes: eps, shaped, rewards: shaped.map((s) => s.total) });
      }
      if (!grouped) {
        batchGroups = sampled;
        break;
      }
      const st = addSamplingRound(ds, sampled, G, algo.dynamicSampling);
      ds = st.state;
      if (st.decision !== 'continue') {
        batchGroups = st.batch!;
        break;
      }
    }
    const episodes = batchGroups.flatMap((g) => g.episodes);
    const shaped = batchGroups.flatMap((g) => g.shaped);
    const totals = Float64Array.from(shaped, (s) => s.total);
    const t1 = performance.now();

    const T = this.model.config.context;
    const n = episodes.length;
    const rows = shiftedBatch(episodes, T);
    const tokBatch = { nSeqs: n, seqLen: T, lossMask: rows.mask };
    let refLogp: Float32Array | null = null;
    const groupSize = grouped ? algo.groupSize : undefined;
    if (this.reference && n > 0) refLogp = await this.reference.logprobs({ tokens: rows.tokens, actions: rows.actions, mask: rows.mask, n, T, V: this.model.numActions, groupSize });
    if (refLogp && algo.klMode === 'reward') {
      // KL as a reward penalty: the configured estimator summed over each episode's policy
      // tokens (the shared reference implementation), before advantages.
      const pen = klPenalizedRewards(totals.subarray(0, n), T, rows.oldLogprobs.subarray(0, n * T), refLogp.subarray(0, n * T), rows.mask.subarray(0, n * T), algo.klCoef, algo.klEstimator);
      totals.set(pen.rewards);
    }

    // 3. advantages: per episode, broadcast onto its policy tokens; PPO: token GAE. Per-token
    // arrays are in training positions [n·T]: the token at context index i is scored at i − 1.
    let episodeAdv: Float64Array = new Float64Array(n);
    let tokAdv: Float64Array;
    let tokRet: Float64Array | null = null;
    let tokVal: Float64Array | null = null;
    if (algo.algo === 'ppo') {
      tokAdv = new Float64Array(n * T);
      tokRet = new Float64Array(n * T);
      tokVal = new Float64Array(n * T);
      episodes.forEach((ep, b) => {
        if (!ep.values) throw new Error('TokenTrainer: PPO needs per-token values from the rollout (the decoder returned none)');
        const r = tokenGae({ lossMask: ep.lossMask, terminated: ep.terminated, values: ep.values }, shaped[b].perStep, algo.gamma, algo.lambda);
        let first = true;
        for (let i = 1; i < ep.tokens.length; i++) {
          if (!ep.lossMask[i]) continue;
          tokAdv[b * T + i - 1] = r.advantages[i];
          tokRet![b * T + i - 1] = r.returns[i];
          tokVal![b * T + i - 1] = ep.values[i];
          if (first) episodeAdv[b] = r.advantages[i];
          first = false;
        }
      });
      if (algo.normalizeAdvantages && n > 0) tokAdv = normalizeAdvantages(tokAdv, rows.mask);
    } else {
      if (n > 0) {
        const r = sequenceAdvantages({ ...algo, groupSize: grouped ? algo.groupSize : n }, totals, this.ema);
        this.ema = r.ema;
        episodeAdv = r.advantages;
      }
      tokAdv = n > 0 ? broadcastToTokens(episodeAdv, tokBatch) : new Float64Array(0);
    }
    const tokW = n > 0 ? aggregationWeights(tokBatch, algo.aggregation, algo.aggregationLen ?? T) : new Float64Array(0);

    // 4. update: epochs × minibatches of whole sequences; before any update the learner scores
    // the sampled ids as the rollout did (TITO: `mismatch`)
    const upd = await runTokenUpdate(
      this.learner,
      algo,
      {
        n,
        T,
        tokens: rows.tokens,
        actions: rows.actions,
        mask: rows.mask,
        oldLogprobs: rows.oldLogprobs,
        advantages: tokAdv,
        weights: tokW,
        refLogprobs: refLogp,
        groupSize,
        extra: tokRet ? { returns: Float32Array.from(tokRet), ...(algo.valueClip !== null ? { old_values: Float32Array.from(tokVal!) } : {}) } : undefined,
      },
      this.rng,
    );
    const nSteps = upd.steps;
    const { allApplied, mismatch } = upd;
    const t2 = performance.now();

    // 5. sync
    if (nSteps > 0) {
      this.version++;
      this.decoder.setWeights(await this.learner.getWeights(), this.version);
    }
    this.iteration++;
    const t3 = performance.now();

    // 6. metrics
    const learnerMetrics = upd.metrics;
    const policyAdv: number[] = [];
    const policyVal: number[] = [];
    const policyRet: number[] = [];
    for (let i = 0; i < tokAdv.length; i++) {
      if (!rows.mask[i]) continue;
      policyAdv.push(tokAdv[i]);
      if (tokVal && tokRet) {
        policyVal.push(tokVal[i]);
        policyRet.push(tokRet[i]);
      }
    }
    const rolloutS = (t1 - t0) / 1000;
    const trainS = (t2 - t1) / 1000;
    const rolloutEntropy: number[] = [];
    for (const ep of sampledEps) for (let i = 0; i < ep.lossMask.length; i++) if (ep.lossMask[i]) rolloutEntropy.push(ep.entropies[i]);
    const metrics = {
      ...buildIterationMetrics({
        episodes: sampledEps.map((ep, i) =>
          summarizeEpisode({ rewards: ep.rewards, infos: ep.infos, terminated: ep.terminated, truncated: ep.truncated, policyTokens: policyTokenCount(ep) }, sampledShaped[i]),
        ),
        advantages: { values: policyAdv },
        critic: tokRet ? { valueLoss: learnerMetrics['critic/value_loss'] ?? NaN, values: policyVal, returns: policyRet } : undefined,
        groups: grouped ? samplingStats(ds) : undefined,
        mismatch,
        staleness: { mean: 0, max: 0 },
        perf: {
          envStepsPerS: envSteps / Math.max(1e-9, rolloutS),
          tokensPerS: policyTokens / Math.max(1e-9, rolloutS),
          rolloutS,
          trainS,
          learnerIdleRatio: rolloutS / Math.max(1e-9, rolloutS + trainS),
          rolloutIdleRatio: trainS / Math.max(1e-9, rolloutS + trainS),
          kvCacheHitRate: cacheHit / rounds,
        },
        extra: grouped ? { groupsDropped: ds.droppedGroups, samplingRounds: rounds } : { samplingRounds: rounds },
      }),
      ...learnerMetrics,
      'actor/lr': this.learner.hyper.lr,
      'actor/rollout_entropy': rolloutEntropy.length ? rolloutEntropy.reduce((a, b) => a + b, 0) / rolloutEntropy.length : 0,
      'episode/forced_end_ratio': sampledEps.filter((e) => e.forcedEnds > 0).length / sampledEps.length,
      'episode/context_limited_ratio': sampledEps.filter((e) => e.contextLimited).length / sampledEps.length,
      'train/batch_success_rate': n ? episodes.filter((e) => e.success).length / n : 0,
      'train/updates': nSteps,
      'train/policy_version': this.version,
      'train/batch_episodes': n,
      'perf/iteration_s': (t3 - t0) / 1000,
    } as IterationReport<TokenEpisode>['metrics'];
    return { iteration: it, metrics, episodes, episodeRewards: totals, episodeAdvantages: episodeAdv, allApplied };
  }

  async release(): Promise<void> {
    await Promise.all([this.decoder.release(), this.learner.release(), this.reference?.release()]);
  }
}
