/**
 * The lockstep collector for multi-turn text envs with a token policy (tiny transformer): tool
 * envs with REINFORCE, PPO or ReMax, and grid envs played as text (envs/grid/textAdapter.ts) with
 * any algorithm. Each collect:
 *
 *   rounds      groups of episodes (same seed per group) in lockstep on a KV-cached decoder
 *               (rollout/tokenLockstep.ts), with tree rollouts' branches; PPO: distinct seeds,
 *               and the decoder's value head records V beside every sampled token. The Trainer's
 *               collect pipeline (collect.ts) plays them through `rollouts`, scores them
 *               (tokenConfig.ts), resamples and serves the algorithm's needs (ReMax's greedy
 *               episodes are played by `evaluate`)
 *   sync        the learner's weights become the decoder's, version + 1
 *
 * Staleness is 0: every token in a batch was sampled by the version being trained, so before the
 * first update the learner's log-probs must equal the rollout's (`mismatch/*`, ≤ 1e-4 on WASM).
 */
import { GROUP_ALGOS } from '../algos/config.ts';
import { algoDescriptor } from '../algos/registry/index.ts';
import { makeTextEnv } from '../envs/grid/textAdapter.ts';
import type { ToolEnv } from '../envs/types.ts';
import { makeTokenModel, type TransformerPolicy } from '../models/transformer.ts';
import { initWeights, type Weights } from '../models/types.ts';
import type { RewardLab } from '../reward/userTerms.ts';
import { mixSeed, Rng } from '../util/rng.ts';
import type { Engine, Learner, TokenDecoder } from '../engine/types.ts';
import type { MetricRun } from '../metrics/lookup.ts';
import { trainStepOptions } from '../update/hyper.ts';
import type { Checkpoint } from '../runs/checkpoint.ts';
import { checkTokenCheckpoint, copyWeights } from './tokenCheckpoint.ts';
import { collectTokenEpisodes } from '../rollout/tokenLockstep.ts';
import { growBranches } from '../rollout/treeRollout.ts';
import type { BranchLink } from '../algos/treeAdvantages.ts';
import { sampledTokenEpisode, tokenStateKeys, type TokenEpisode } from '../rollout/tokenEpisode.ts';
import { tokenRolloutBatch } from '../update/batch.ts';
import { lengthBuckets, SequenceScorer } from '../update/sequenceScorer.ts';
import type { Collected, Skipped } from './collector.ts';
import type { Collector } from './collectorShell.ts';
import { makeScheduler } from './scheduler.ts';
import { collectedOf, skippedMetrics, type Gathered, type PlayedGroup, type RolloutSource } from './collect.ts';
import { RewardScoring } from './rewards.ts';
import { playTokenSeeds, shapeTokenEpisodes, type TokenTrainerConfig } from './tokenConfig.ts';
import { Trainer } from './trainer.ts';
import { allOrRelease } from '../util/allOrRelease.ts';

/** The decoder's counts over one collect's rounds, for the perf metrics. */
interface Counts {
  envSteps: number;
  policyTokens: number;
  /** Σ over rounds of each round's KV-cache hit rate. */
  cacheHit: number;
}

export class LockstepCollector implements Collector<TokenEpisode> {
  /** Tree rollouts: each branch episode's trunk and the token position it branched at. */
  private readonly branchOf = new WeakMap<TokenEpisode, { trunk: TokenEpisode; at: number }>();
  /** Lockstep rollouts sample with the learner's version: nothing is ever stale. */
  readonly proximal = null;
  readonly metricRun: MetricRun;
  /** One stream for sampling tokens and for shuffling minibatches (a checkpoint saves it as rng.sampling). */
  readonly rng: Rng;
  /** The algorithm its batches are sampled for (a distill stage's collector: REINFORCE). */
  get algo() {
    return this.config.algo;
  }

  constructor(
    readonly config: TokenTrainerConfig,
    readonly model: TransformerPolicy,
    private readonly envs: ToolEnv[],
    private readonly decoder: TokenDecoder,
    readonly reference: SequenceScorer | null,
    /** The KL reference policy's weights (what `reference` scores with); null without one. */
    private referenceWeights: Weights | null,
    private readonly rewards: RewardScoring,
    /** 'token', or 'token-distill' under a distill stage's objective (checkpoints of one do not restore into the other). */
    readonly kind: 'token' | 'token-distill' = 'token',
  ) {
    this.rng = new Rng(mixSeed(config.seed, 0x70c));
    this.metricRun = { family: envs[0].spec.family, policy: 'token' };
  }

  /** Rows of the rollout decoder (episodes per sampling round). */
  get rolloutBatch(): number {
    return this.envs.length;
  }

  evaluate(seeds: readonly number[], temperature: number): Promise<TokenEpisode[]> {
    return playTokenSeeds(this.envs, this.decoder, seeds, temperature, this.config);
  }

  /**
   * Tree rollouts (rollout/treeRollout.ts): a round's episodes by group, each group's trunks
   * followed by their branches, whose trunk and branch point `branchOf` keeps. Without trees,
   * the groups of N as sampled.
   */
  private async branch(trunks: TokenEpisode[], c: Counts): Promise<TokenEpisode[][]> {
    const { algo, tree } = this.config;
    const N = GROUP_ALGOS.includes(algo.algo) ? algo.groupSize : trunks.length;
    const groups = Array.from({ length: trunks.length / N }, (_, g) => trunks.slice(g * N, (g + 1) * N));
    if (!tree?.enabled) return groups;
    const br = await growBranches(trunks, { envs: this.envs, decoder: this.decoder, rng: this.rng, temperature: this.config.temperature, maxActionTokens: this.config.maxActionTokens, constrained: this.config.constrained, tree });
    c.envSteps += br.envSteps;
    c.policyTokens += br.policyTokens;
    br.episodes.forEach((ep, k) => {
      this.branchOf.set(ep, { trunk: trunks[br.from[k].trunk], at: br.from[k].at });
      groups[Math.floor(br.from[k].trunk / N)].push(ep);
    });
    return groups;
  }

  /** The decoder's counts over this collect's rounds (perf metrics). */
  private counts: Counts = { envSteps: 0, policyTokens: 0, cacheHit: 0 };

  /** One sampling round is one decoder batch (every row plays); group algorithms share a seed per group, others take distinct seeds. */
  readonly rollouts: RolloutSource<TokenEpisode, PlayedGroup<TokenEpisode>> = {
    play: async (it, round) => {
      const grouped = GROUP_ALGOS.includes(this.config.algo.algo);
      const G = grouped ? this.config.groups : 1;
      const N = grouped ? this.config.algo.groupSize : this.envs.length;
      const seeds: number[] = [];
      const groups: number[] = [];
      for (let g = 0; g < G; g++) {
        const s = mixSeed(this.config.seed, it, round, g);
        for (let k = 0; k < N; k++) {
          seeds.push(grouped ? s : mixSeed(this.config.seed, it, round, g, k));
          groups.push(grouped ? g : -1);
        }
      }
      const ro = await collectTokenEpisodes({ envs: this.envs, seeds, groups, decoder: this.decoder, rng: this.rng, temperature: this.config.temperature, maxActionTokens: this.config.maxActionTokens, constrained: this.config.constrained });
      this.counts.envSteps += ro.envSteps;
      this.counts.policyTokens += ro.policyTokens;
      this.counts.cacheHit += ro.kvCacheHitRate;
      const grown = await this.branch(ro.episodes.slice(0, G * N), this.counts);
      return grown.map((episodes) => ({ episodes }));
    },
    score: (episodes) => shapeTokenEpisodes(this.rewards, episodes),
    greedy: async (_it, seeds) => {
      const episodes = await this.evaluate(seeds, 0);
      return { episodes, envSteps: episodes.reduce((n, ep) => n + ep.turns, 0) };
    },
    stateKeys: (ep, shaped) => tokenStateKeys(ep, shaped.perStep.length),
    summarize: sampledTokenEpisode,
  };

  /** The groups of a batch: rollout.groups, or one group of every episode for algorithms without groups. */
  async begin(): Promise<number> {
    const { algo } = this.config;
    this.counts = { envSteps: 0, policyTokens: 0, cacheHit: 0 };
    return GROUP_ALGOS.includes(algo.algo) ? this.config.groups : 1;
  }

  /** The gathered episodes as a token batch (with tree rollouts' branch links), with the decoder's counts. */
  finish(g: Gathered<TokenEpisode, PlayedGroup<TokenEpisode>>): Collected<TokenEpisode> | Skipped {
    const { algo } = this.config;
    const c = { ...this.counts, rounds: g.rounds };
    if (g.greedy) c.envSteps += g.greedy.envSteps;
    if (g.episodes.length === 0) return { skipped: skippedMetrics(g) };
    const { episodes } = g;
    // Branches make groups unequal; the learner then runs every sequence whole (no shared prompt).
    const groupSize = g.ds && g.equal ? algo.groupSize : undefined;
    const branches = branchLinks(episodes, this.branchOf);
    return collectedOf(g, episodes, tokenRolloutBatch(episodes, this.model.config.context, this.model.numActions, groupSize), {
      ctx: { branches },
      metrics: (_sc, _tr, t) => {
        const rolloutS = (t.collected - t.start) / 1000;
        const trainS = (t.trained - t.collected) / 1000;
        const perf = {
          envStepsPerS: c.envSteps / Math.max(1e-9, rolloutS),
          tokensPerS: c.policyTokens / Math.max(1e-9, rolloutS),
          rolloutS,
          trainS,
          learnerIdleRatio: rolloutS / Math.max(1e-9, rolloutS + trainS),
          rolloutIdleRatio: trainS / Math.max(1e-9, rolloutS + trainS),
          kvCacheHitRate: c.cacheHit / c.rounds,
        };
        return { perf, keys: { 'perf/iteration_s': (t.synced - t.start) / 1000 } };
      },
    });
  }

  async sync(w: Weights | null, version: number): Promise<void> {
    if (w) this.decoder.setWeights(w, version);
  }

  /**
   * The lockstep part of a checkpoint. The envs need none (every episode resets with its seed),
   * the decoder holds the learner's weights at `policyVersion` and resets its KV cache per
   * episode, and the episodes' seeds are a function of (seed, iteration, round, group): so the one
   * sampling/minibatch stream and the KL reference's weights (a warm start's imitation result,
   * when klCoef > 0) complete what a resumed run needs to compute what an uninterrupted one would
   * (bit for bit on the same engine).
   */
  async checkpoint(): Promise<Pick<Checkpoint, 'rng' | 'reference'>> {
    return { rng: { sampling: this.rng.getState() }, ...(this.referenceWeights ? { reference: copyWeights(this.referenceWeights) } : {}) };
  }

  checkRestore(cp: Checkpoint, learner: Learner, who: string): Checkpoint {
    checkTokenCheckpoint(cp, { who, trainer: this.kind, iteration: 0, version: 0, hyper: learner.hyper, rng: ['sampling'], model: this.model, hasReference: this.reference !== null });
    return cp;
  }

  /** The decoder takes the weights at the checkpoint's version (also at version 0: createTrainer may have skipped the warm start for a resume), the KL reference its saved weights. */
  async restore(cp: Checkpoint, w: Weights): Promise<void> {
    this.rng.setState(cp.rng.sampling!);
    this.decoder.setWeights(w, cp.policyVersion);
    if (cp.reference && this.reference) {
      this.referenceWeights = copyWeights(cp.reference);
      await this.reference.setWeights(this.referenceWeights, 0);
    }
  }

  async release(): Promise<void> {
    await this.decoder.release();
    await this.reference?.release();
  }
}

/**
 * The Trainer of the lockstep token loop (always synchronous).
 * @param initial starting weights (e.g. the imitation warm start); default a fresh init.
 * @param reference weights of the KL reference policy (default `initial`); used when algo.klCoef > 0.
 * @param rewardLab user reward terms (the reward lab), scored on every sampled episode.
 */
export async function createLockstepTrainer(config: TokenTrainerConfig, engine: Engine, initial?: Weights, reference?: Weights, rewardLab?: RewardLab): Promise<Trainer<TokenEpisode, LockstepCollector>> {
  const { algo } = config;
  const descriptor = algoDescriptor(algo.algo);
  const ppo = descriptor.critic;
  if (ppo && algo.klCoef > 0 && algo.klMode === 'reward') throw new Error("createLockstepTrainer: PPO takes the KL to the reference as a loss term (klMode 'loss'), not as a reward penalty");
  // Throws, naming the env, when it has no text form.
  makeTextEnv(config.env.id, config.env.kwargs);
  const model = makeTokenModel(config.model, ppo);
  // Fresh init for whatever `initial` lacks (a warm start without a value head gets a fresh one).
  const fresh = initWeights(model, mixSeed(config.seed, 0x1e1));
  const weights = { ...fresh, ...initial };
  const grouped = GROUP_ALGOS.includes(algo.algo);
  const n = grouped ? config.groups * algo.groupSize : config.episodes;
  const envs = Array.from({ length: n }, () => makeTextEnv(config.env.id, config.env.kwargs));
  // The value term exists only with the value head (PPO).
  const opts = { ...trainStepOptions(ppo ? algo : { ...algo, valueCoef: 0 }, config.learnerBatch), logitMask: config.constrained };
  const lens = lengthBuckets(model.config.context);
  // A group's episodes start from one prompt: the learner runs it once per group when a
  // minibatch holds whole groups (Learner.prefixGroups).
  const prefixGroups = grouped && config.learnerBatch % algo.groupSize === 0 ? config.learnerBatch / algo.groupSize : undefined;
  const [decoder, learner] = await allOrRelease([engine.createDecoder(model, n, weights, config.prefillStep), engine.createLearner(model, opts, weights, lens, prefixGroups)]);
  const refWeights = algo.klCoef > 0 ? { ...fresh, ...(reference ?? initial) } : null;
  const ref = refWeights ? new SequenceScorer(engine, model, config.learnerBatch, refWeights, lens) : null;
  // Token episodes record no potentials Φ, so the potential weight must stay 0.
  const rewards = new RewardScoring(config.shaping, config.schedule ?? null, false);
  const collector = new LockstepCollector(config, model, envs, decoder, ref, refWeights, rewards);
  const trainer = new Trainer<TokenEpisode, LockstepCollector>({ algo, collector, scheduler: makeScheduler(0), learner, rewards });
  if (rewardLab) trainer.setRewardLab(rewardLab);
  return trainer;
}

/** The batch's branch links (episode indices in `episodes`), for the shared-prefix advantages; undefined without branches. */
function branchLinks(episodes: readonly TokenEpisode[], branchOf: WeakMap<TokenEpisode, { trunk: TokenEpisode; at: number }>): BranchLink[] | undefined {
  const index = new Map(episodes.map((ep, i) => [ep, i]));
  const links: BranchLink[] = [];
  episodes.forEach((ep, i) => {
    const b = branchOf.get(ep);
    const trunk = b ? index.get(b.trunk) : undefined;
    if (b && trunk !== undefined) links.push({ trunk, branch: i, at: b.at });
  });
  return links.length ? links : undefined;
}
