/**
 * The shape of an algorithm descriptor: everything about one algorithm that the config schema,
 * the form, the trainers and the dashboard need, in one object, so adding an algorithm is one
 * file plus one line in `index.ts`.
 *
 * Descriptors read hyperparameters through `AlgoSettings`, a structural subset of AlgoConfig
 * (config.ts imports the registry for the name list, so the registry cannot import config.ts).
 */
import type { Aggregation, EmaBaselineState } from '../advantages.ts';
import type { Numbers } from '../stats.ts';
import type { PlayTarget } from '../../envs/families.ts';

/** The hyperparameters descriptors read (AlgoConfig satisfies it; config.ts checks that). */
export interface AlgoSettings {
  groupSize: number;
  baseline: 'batch' | 'ema';
  baselineDecay: number;
  normalizeStd: boolean;
  stdEps: number;
  gamma: number;
  lambda: number;
  stepAdvantageWeight: number;
  aggregation: Aggregation;
  dynamicSampling: { enabled: boolean };
}

/** One batch of episode rewards for an episode-level estimator. */
export interface EpisodeBatch {
  /** [n] episode rewards (shaped totals), group-major for group algorithms. */
  rewards: Numbers;
  /**
   * Episodes per group: one size when all groups are equal, or each group's size in order (the
   * prompt pool's unequal groups); they sum to n. Algorithms without groups ignore it.
   */
  groupSize: number | readonly number[];
  /**
   * [n] policy positions of each episode (grid steps, or policy tokens), i.e. how many loss
   * positions its advantage is broadcast onto; batch statistics "over tokens" weigh by it.
   * Absent (re-scoring a frozen buffer) = 1 each.
   */
  positions?: Numbers;
  /** The REINFORCE EMA baseline carried across iterations (returned unchanged by others). */
  ema: EmaBaselineState;
}

/** An episode-level estimator: one advantage per episode, broadcast onto all its positions. */
export type EpisodeEstimator = (cfg: AlgoSettings, batch: EpisodeBatch) => { advantages: Float64Array; ema: EmaBaselineState };

/**
 * Where an algorithm's advantages come from; the kind says what the trainers must collect.
 * - 'episode': from episode rewards alone (`estimate`);
 * - 'gae': per step from a learned critic (PPO; `sequenceGae` in algos/gae.ts, per turn, on every family);
 * - 'step-groups': GiGPO's per-step credit from steps taken in the same observed state (grid steps and token turns);
 * - 'greedy-baseline': ReMax, each group's reward of one greedy episode as the baseline;
 * - 'turn-credit': MT-GRPO's per-turn advantages from turn-level rewards (algos/turnCredit.ts).
 * `episodePart` is the episode-level estimator re-scoring uses where the full one needs data a
 * frozen buffer lacks (GiGPO's and MT-GRPO's GRPO part).
 */
export type AdvantageEstimator =
  | { kind: 'episode'; estimate: EpisodeEstimator }
  | { kind: 'gae' }
  | { kind: 'step-groups'; episodePart: EpisodeEstimator }
  | { kind: 'greedy-baseline' }
  | { kind: 'turn-credit'; episodePart: EpisodeEstimator };

/** The loss the train-step graph builds, and how a batch is cut into minibatches. */
export interface LossOptions {
  /**
   * 'clip': PPO's clipped surrogate on each token's ratio; 'cispo': the clipped, detached
   * importance weight times log π (MiniMax-M1); 'gspo': the clipped surrogate on the episode's
   * length-normalised sequence ratio (Qwen3), so minibatches take whole episodes; 'sapo': a soft
   * gate (4/τ)·σ(τ(r − 1)) in place of the clip; 'gmpo': the geometric mean of each episode's
   * sign-clipped token ratios (whole episodes, as 'gspo'). Graph code: update/surrogates.ts.
   */
  objective: 'clip' | 'cispo' | 'gspo' | 'sapo' | 'gmpo';
  /** Default `aggregation` (how per-token losses are summed; see AlgoConfig.aggregation). */
  aggregation: Aggregation;
  /** Default of `overlong.enabled` (DAPO's soft overlong punishment on the reward). */
  overlong: boolean;
  /** Default of `maskTruncated` (episodes cut by a limit carry no loss). */
  maskTruncated: boolean;
}

/** The env family and policy a run pairs: MLP on grids, a transformer on grids as text, or on tool envs. */
export type AlgoTarget = PlayTarget;

/** One line of an algorithm's extra chart; `tone` picks the dashboard's colour for it. */
export interface AlgoChartLine {
  /**
   * A key declared in the metric registry (metrics/registry.ts; metrics/algoKeys.test.ts holds
   * every descriptor to it): charts read declared keys only. A plain string here, since the
   * metrics room reads the algorithms and not the other way round.
   */
  key: string;
  label: string;
  tone: 'primary' | 'secondary';
}

/** A chart the dashboard adds to the Signal section for runs of this algorithm. */
export interface AlgoChart {
  id: string;
  title: string;
  /** How to read it (tooltip). */
  help: string;
  lines: readonly AlgoChartLine[];
  /** Y range; 'auto' = fit the data. */
  domain?: readonly [number | 'auto', number | 'auto'];
}

/** What a run-level rule sees: the env's time limit and the rollout's learner batch. */
export interface RunContext {
  target: AlgoTarget;
  envId: string;
  /** The env's time limit, in steps. */
  maxSteps: number;
  /** Rows (grid steps) or sequences (tokens) per train step. */
  learnerBatch: number;
}

/**
 * What an algorithm needs from collection beyond the sampled episodes and their rewards; the
 * collect pipeline (trainer/collect.ts) serves it, whichever source played the episodes.
 * - 'greedy-baseline': one greedy (temperature 0) episode per group from its start, played by the
 *   version that sampled the batch and scored as the sampled ones (ReMax's baseline);
 * - 'anchor-states': each step's anchor-state key (the observation it was taken in; GiGPO);
 * - 'turn-infos': each episode's env info per turn (MT-GRPO's turn-reward source).
 */
export type CollectNeed = 'greedy-baseline' | 'anchor-states' | 'turn-infos';

/** AlgoConfig fields only some algorithms read (the form shows them for those). */
export type AlgoField = 'gamma' | 'lambda' | 'stepAdvantageWeight' | 'turnCredit' | 'sapo';

/** One algorithm, as the rest of the playground sees it. */
export interface AlgoDescriptor<N extends string = string> {
  /** The config value (`algo.algo`). */
  name: N;
  /** Short label for the form's select. */
  label: string;
  /** One line: what it does and when to pick it (the form's tooltip lists every algorithm's). */
  help: string;
  advantage: AdvantageEstimator;
  /** What the collect pipeline must gather for its estimator beyond episodes and rewards (absent = nothing). */
  collects?: readonly CollectNeed[];
  loss: LossOptions;
  /** Advantages compare episodes of a group from one start state (rollout.groups × groupSize episodes). */
  group: boolean;
  /** Divides group-relative advantages by the group's reward std: the normalizeStd default, and only such algorithms accept true. */
  groupStd: boolean;
  /** Trains a value head (critic) beside the policy. */
  critic: boolean;
  /** Default passes over each batch (updateEpochs). */
  updateEpochs: number;
  /** AlgoConfig fields only some algorithms read, shown in the form when this one is chosen. */
  fields?: readonly AlgoField[];
  /** Why it does not run on a target, or in async mode (absent = it does); shown as the refusal. */
  refuses?: Partial<Record<AlgoTarget | 'async', string>>;
  /** Why a group of one cannot work for it (default: no spread, every advantage 0). */
  groupOfOne?: string;
  /** Cross-field rules of its own, on a parsed config: field path (in the algo config) and message. */
  check?: (c: AlgoSettings) => { path: string; message: string }[];
  /** Rules that need the env: messages with their run-config path. */
  runCheck?: (run: RunContext) => string[];
  /**
   * Per-iteration metric keys only it logs (each declared, with its doc and unit, in the metric
   * registry, as a per-iteration key; metrics/algoKeys.test.ts checks): the architecture table lists them, and a short run of each algorithm is held to
   * logging them while runs of the others do not (runtime/engine/metricKeys.test.ts).
   */
  metrics?: readonly string[];
  /** Charts the dashboard adds for it. */
  charts?: readonly AlgoChart[];
}

/** A descriptor as written: the fields most algorithms share may be left out (`defineAlgo` fills them). */
export type AlgoSpec<N extends string> = Omit<AlgoDescriptor<N>, 'loss' | 'groupStd' | 'critic' | 'updateEpochs'> & {
  /** Default: PPO's clipped surrogate, 'token' aggregation, no overlong term, truncated episodes trained. */
  loss?: Partial<LossOptions>;
  /** Default false. */
  groupStd?: boolean;
  /** Default false. */
  critic?: boolean;
  /** Default 1 (on-policy). */
  updateEpochs?: number;
};

/**
 * A descriptor from its spec, the shared defaults filled; keeps the name as a literal type, so
 * the registry's names form the `Algo` union.
 */
export function defineAlgo<const N extends string>(spec: AlgoSpec<N>): AlgoDescriptor<N> {
  return {
    ...spec,
    loss: { objective: 'clip', aggregation: 'token', overlong: false, maskTruncated: false, ...spec.loss },
    groupStd: spec.groupStd ?? false,
    critic: spec.critic ?? false,
    updateEpochs: spec.updateEpochs ?? 1,
  };
}

/** Group sizes as a list: `groupSize` repeated over n rewards, or the given list (checked to sum to n). */
export function groupSizes(groupSize: number | readonly number[], n: number, who: string): readonly number[] {
  if (typeof groupSize !== 'number') {
    const total = groupSize.reduce((a, b) => a + b, 0);
    if (total !== n) throw new RangeError(`${who}: group sizes sum to ${total}, but there are ${n} rewards`);
    return groupSize;
  }
  if (!Number.isInteger(groupSize) || groupSize < 1) throw new RangeError(`${who}: groupSize must be a positive integer, got ${groupSize}`);
  if (n % groupSize !== 0) throw new RangeError(`${who}: ${n} rewards do not split into groups of ${groupSize}`);
  return Array.from({ length: n / groupSize }, () => groupSize);
}

/**
 * An estimator from a function over equal groups: called once on the whole batch when the groups
 * are equal, else once per group (each compared only within itself).
 */
export function perGroup(fn: (rewards: Numbers, groupSize: number, cfg: AlgoSettings) => Float64Array): EpisodeEstimator {
  return (cfg, b) => {
    if (typeof b.groupSize === 'number') return { advantages: fn(b.rewards, b.groupSize, cfg), ema: b.ema };
    const sizes = groupSizes(b.groupSize, b.rewards.length, 'perGroup');
    const out = new Float64Array(b.rewards.length);
    let o = 0;
    for (const n of sizes) {
      out.set(fn(Array.prototype.slice.call(b.rewards, o, o + n) as number[], n, cfg), o);
      o += n;
    }
    return { advantages: out, ema: b.ema };
  };
}
