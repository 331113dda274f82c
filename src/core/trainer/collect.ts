/**
 * The collect pipeline, written once for every way of playing (grid step pool, lockstep token
 * decoder, continuous token decoder):
 *
 *   request → play   the source plays one sampling round: groups of episodes (one group holding
 *                    every episode for algorithms without groups)
 *   score            env reward + shaping + user reward terms, one call per round (the source's
 *                    scorer: grids replay step records from the seed, text envs read them off
 *                    the token episode)
 *   dynamic sampling group algorithms drop zero-spread groups and play refill rounds until the
 *                    batch is full or the round cap is hit; every sampled episode is kept for the
 *                    outcome metrics (the trained batch is filtered toward mixed outcomes)
 *   serve needs      what the algorithm's descriptor declares it needs (`collects`): ReMax's greedy
 *                    baseline episodes, GiGPO's anchor-state keys, MT-GRPO's turn infos
 *
 * A source only knows how to play, score and describe its own episodes (`RolloutSource`); it
 * never checks which algorithm runs.
 */
import type { AlgoConfig } from '../algos/config.ts';
import { GROUP_ALGOS } from '../algos/config.ts';
import { buildIterationMetrics, type IterationMetricInputs, type SampledEpisode } from '../metrics/iterationMetrics.ts';
import { algoDescriptor } from '../algos/registry/index.ts';
import type { CollectNeed } from '../algos/registry/types.ts';
import { sampleWithDynamicSampling, samplingStats, type DynamicSamplingState } from '../algos/sampling.ts';
import type { Info } from '../envs/types.ts';
import type { ShapedReward } from '../reward/shaping.ts';
import type { AdvantageContext } from '../update/batchAdvantages.ts';
import type { RolloutBatch } from '../update/batch.ts';
import { placeRewards } from '../update/positionRewards.ts';
import type { StepEpisode } from '../rollout/stepEpisode.ts';
import type { TokenEpisode } from '../rollout/tokenEpisode.ts';
import type { Collected, GreedyBaselines } from './collector.ts';

/** A group as a source played it (the source may carry its own bookkeeping beside the episodes). */
export interface PlayedGroup<E> {
  episodes: E[];
}

/** A played group with its episodes' shaped rewards: what dynamic sampling judges and the batch trains on. */
export type ScoredGroup<G> = G & {
  /** [size] each episode's env reward + shaping + user terms. */
  shaped: ShapedReward[];
  /** [size] each episode's shaped total (dynamic sampling's spread test). */
  rewards: number[];
};

/** What the collect pipeline asks of one way of playing. */
export interface RolloutSource<E, G extends PlayedGroup<E>> {
  /**
   * Plays sampling round `round` (0 first) of iteration `it`: the round's groups in order.
   * `need`: groups still missing from the batch (the whole target in round 0); a source may
   * return more (a lockstep decoder plays all its rows) or exactly `need` (a continuous loop).
   */
  play(it: number, round: number, need: number): Promise<G[]>;
  /** Env reward + shaping + user reward terms of `episodes`, in order (one sandbox call). */
  score(episodes: readonly E[]): Promise<ShapedReward[]>;
  /**
   * One greedy (temperature 0) episode per seed, by the version that sampled the batch, and the
   * env steps they took. Only asked for when the algorithm needs greedy baselines.
   */
  greedy(it: number, seeds: readonly number[]): Promise<{ episodes: E[]; envSteps: number }>;
  /** Each step's anchor-state key (the observation it acted on); `shaped` has one value per step. */
  stateKeys(ep: E, shaped: ShapedReward): string[];
  /** What the iteration metrics read of a sampled episode. */
  summarize(ep: E, shaped: ShapedReward): SampledEpisode;
}

/** What an episode must expose to the pipeline: its start seed, outcome and per-turn env infos. */
interface CollectedEpisode {
  seed: number;
  success: boolean;
  infos: readonly Info[];
}

/** One iteration's collect, before the source turns the episodes into a rollout batch. */
export interface Gathered<E, G> {
  /** The trained groups, in batch order (dynamic sampling's survivors). */
  groups: ScoredGroup<G>[];
  /** Their episodes, group-major, and the episodes' shaped rewards. */
  episodes: E[];
  shaped: ShapedReward[];
  /** Episodes per trained group, and whether they all equal algo.groupSize. */
  sizes: number[];
  equal: boolean;
  /** Dynamic sampling's state (group algorithms), else null. */
  ds: DynamicSamplingState<ScoredGroup<G>> | null;
  /** Sampling rounds played. */
  rounds: number;
  /** Every episode sampled this iteration, summarised for the metrics (dropped groups included). */
  sampled: SampledEpisode[];
  /** The raw sampled episodes, in sampling order (per-agent credit reads them). */
  sampledEpisodes: E[];
  /** What the estimator needs beyond rewards, as the algorithm's descriptor declares. */
  ctx: AdvantageContext;
  /** ReMax's baselines, when the algorithm needs them. */
  greedy: GreedyBaselines | null;
  /** Dynamic sampling's group statistics and counts (batchMetrics' inputs). */
  groupStats: IterationMetricInputs['groups'];
  extra: IterationMetricInputs['extra'];
}

/** Whether algorithm `algo` declares collect need `need` in its descriptor. */
export function needs(algo: string, need: CollectNeed): boolean {
  return algoDescriptor(algo).collects?.includes(need) ?? false;
}

/**
 * Collects one iteration's batch from `src`: rounds, scoring, dynamic sampling (group algorithms
 * only) and the algorithm's needs, in that order.
 * @param target groups the batch holds (rollout.groups, or the prompt pool's planned groups).
 */
export async function gather<E extends CollectedEpisode, G extends PlayedGroup<E>>(src: RolloutSource<E, G>, algo: AlgoConfig, it: number, target: number): Promise<Gathered<E, G>> {
  const sampledEpisodes: E[] = [];
  const sampledShaped: ShapedReward[] = [];
  let rounds = 0;
  const round = async (r: number, need: number): Promise<ScoredGroup<G>[]> => {
    const played = await src.play(it, r, need);
    rounds++;
    const shapedAll = await src.score(played.flatMap((g) => g.episodes));
    let o = 0;
    return played.map((g) => {
      const shaped = shapedAll.slice(o, (o += g.episodes.length));
      sampledEpisodes.push(...g.episodes);
      sampledShaped.push(...shaped);
      return { ...g, shaped, rewards: shaped.map((x) => x.total) };
    });
  };
  let groups: ScoredGroup<G>[];
  let ds: DynamicSamplingState<ScoredGroup<G>> | null = null;
  if (GROUP_ALGOS.includes(algo.algo)) {
    const r = await sampleWithDynamicSampling(round, target, algo.dynamicSampling);
    ds = r.state;
    groups = r.batch;
  } else groups = await round(0, target);
  const episodes = groups.flatMap((g) => g.episodes);
  const shaped = groups.flatMap((g) => g.shaped);
  const sizes = groups.map((g) => g.episodes.length);
  const equal = sizes.every((x) => x === algo.groupSize);
  const greedy = needs(algo.algo, 'greedy-baseline') && episodes.length > 0 ? await greedyBaselines(src, it, groups) : null;
  return {
    groups,
    episodes,
    shaped,
    sizes,
    equal,
    ds,
    rounds,
    sampled: sampledEpisodes.map((ep, i) => src.summarize(ep, sampledShaped[i])),
    sampledEpisodes,
    ctx: {
      groupSize: ds ? (equal ? algo.groupSize : sizes) : episodes.length,
      greedyTotals: greedy?.totals,
      stateKeys: needs(algo.algo, 'anchor-states') ? episodes.map((ep, i) => src.stateKeys(ep, shaped[i])) : undefined,
      turnInfos: needs(algo.algo, 'turn-infos') ? episodes.map((ep) => ep.infos) : undefined,
    },
    greedy,
    groupStats: ds ? samplingStats(ds) : undefined,
    extra: ds ? { groupsDropped: ds.droppedGroups, samplingRounds: rounds } : { samplingRounds: rounds },
  };
}

/**
 * ReMax's baselines: one greedy episode per trained group from the group's start seed, played
 * before the update by the version that sampled the batch, and scored as the sampled episodes
 * are (shaping and user terms; a KL-as-reward penalty is not charged to it). Their env steps
 * count in the iteration's compute.
 */
async function greedyBaselines<E extends CollectedEpisode, G extends PlayedGroup<E>>(src: RolloutSource<E, G>, it: number, groups: readonly ScoredGroup<G>[]): Promise<GreedyBaselines> {
  const r = await src.greedy(it, groups.map((g) => g.episodes[0].seed));
  const shaped = await src.score(r.episodes);
  return {
    totals: Float64Array.from(shaped, (s) => s.total),
    envSteps: r.envSteps,
    success: r.episodes.filter((ep) => ep.success).length / Math.max(1, r.episodes.length),
  };
}

/** The metrics of an iteration whose every group was dropped (nothing to train on). */
export function skippedMetrics(g: Pick<Gathered<unknown, unknown>, 'sampled' | 'ds' | 'rounds'>): Record<string, number> {
  const ds = g.ds!;
  return {
    ...buildIterationMetrics({ episodes: g.sampled.map((s) => s.summary), groups: samplingStats(ds) }),
    'groups/dropped': ds.droppedGroups,
    'groups/sampling_rounds': g.rounds,
  };
}

/**
 * The Trainer's view of a gathered iteration: the trained `episodes` (the source may have copied
 * them, e.g. renumbered their groups) and their rollout batch with the shaped rewards placed in it
 * (update/positionRewards.ts), with the source's own additions to
 * the estimator's context, the prompt pool's outcomes and its perf metrics.
 */
export function collectedOf<E extends StepEpisode | TokenEpisode, G>(g: Gathered<unknown, G>, episodes: E[], batch: RolloutBatch, own: Pick<Collected<E>, 'metrics' | 'outcomes'> & { ctx?: Partial<Collected<E>['ctx']> }): Collected<E> {
  return {
    episodes,
    batch: placeRewards(batch, g.shaped),
    ctx: { ...g.ctx, ...own.ctx },
    greedy: g.greedy,
    sampled: g.sampled,
    groups: g.groupStats,
    extra: g.extra,
    ...(own.outcomes ? { outcomes: own.outcomes } : {}),
    metrics: own.metrics,
  };
}
