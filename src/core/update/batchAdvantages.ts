/**
 * The score (KL reward), advantages and aggregation-weight phases over a rollout batch
 * (update/batch.ts), once for every env family: per-position arrays are [batch.size].
 */
import { normalizeAdvantages, sequenceAggregationWeights, type EmaBaselineState } from '../algos/advantages.ts';
import type { AlgoConfig } from '../algos/config.ts';
import { sequenceGae } from '../algos/gae.ts';
import { gdpoAdvantages } from '../algos/gdpo.ts';
import { klK1, klK3 } from '../algos/losses.ts';
import { algoDescriptor, sequenceAdvantages, unequalGroupAdvantages } from '../algos/registry/index.ts';
import type { AdvantageEstimator } from '../algos/registry/types.ts';
import { remaxAdvantages } from '../algos/remax.ts';
import { gigpoAdvantages } from '../algos/stepGroups.ts';
import { sharedPrefixSegments, type BranchLink } from '../algos/treeAdvantages.ts';
import { mtGrpoAdvantages, turnRewardsOf } from '../algos/turnCredit.ts';
import type { Info } from '../envs/types.ts';
import { broadcast, positionCounts, type PositionLayout, type RolloutBatch } from './batch.ts';
import { stepEnds, stepRewardsOf } from './positionRewards.ts';

/**
 * Each trained position's turn (env step) index within sequence s, [lengths[s]] (−1 off the mask
 * or after the last turn the rewards cover: a half-written action cut by the context has no env
 * step). Checks that the sequence has as many turns as `turns` (one unfinished more is allowed
 * when the episode did not terminate): the per-step estimators refuse any other alignment.
 */
function turnIndex(b: RolloutBatch, s: number, turns: number): Int32Array {
  const idx = new Int32Array(b.lengths[s]).fill(-1);
  let turn = 0;
  for (let k = 0; k < b.lengths[s]; k++) {
    const i = b.starts[s] + k;
    if (b.mask[i] === 0) continue;
    if (turn < turns) idx[k] = turn;
    if (b.turnEnd[i]) turn++;
  }
  if (!(turn === turns || (turn === turns + 1 && !b.terminated[s]))) {
    throw new RangeError(`sequence ${s}: ${turn} actions but ${turns} turn rewards (the context may hold one unfinished action more)`);
  }
  return idx;
}

/**
 * The score phase's KL penalty (klMode 'reward'): each trained position's β·KL(μ ‖ π_ref) (the
 * configured estimator) is subtracted from the reward at its step's end position and from the
 * sequence's score, in place (on the score phase's copy, `withOwnRewards`), before advantages.
 * Both families take it per position, so a grid step and a policy token are charged alike.
 * @param refLogp [size] the reference's log-probs of the actions.
 */
export function klRewardPenalty(b: RolloutBatch, refLogp: Float32Array, algo: Pick<AlgoConfig, 'klCoef' | 'klEstimator'>): void {
  const f = algo.klEstimator === 'k1' ? klK1 : klK3;
  for (let s = 0; s < b.n; s++) {
    const ends = stepEnds(b, s, b.stepCounts[s]);
    let turn = 0;
    for (let i = b.starts[s]; i < b.starts[s] + b.lengths[s]; i++) {
      if (b.mask[i] === 0) continue;
      const kl = algo.klCoef * f(b.mu[i], refLogp[i]);
      if (turn < ends.length && ends[turn] >= 0) b.rewards[ends[turn]] -= kl;
      b.scores[s] -= kl;
      if (b.turnEnd[i]) turn++;
    }
  }
}

export interface BatchAdvantages {
  /** [size] advantage per position, 0 off the mask. */
  adv: Float64Array;
  /** [size] value targets (GAE returns) with a critic; null otherwise. */
  returns: Float64Array | null;
  /** [n] each sequence's advantage (GAE: its first position's), for trajectories and charts. */
  episodeAdv: Float64Array;
  /** The REINFORCE EMA baseline after this batch. */
  ema: EmaBaselineState;
  /** GiGPO: mean step groups per group and the share of steps in one. */
  stepGroups?: { perGroup: number; groupedShare: number };
}

/** What some estimators need beyond rewards, supplied by the rollout side. */
export interface AdvantageContext {
  /** Episodes per group: one size (equal groups) or each group's (the adaptive budget). */
  groupSize: number | readonly number[];
  /** ReMax: each group's greedy episode reward ([groups]). */
  greedyTotals?: Float64Array;
  /** GiGPO: each sequence's anchor-state key per turn (the observation the action was taken in). */
  stateKeys?: readonly (readonly string[])[];
  /** MT-GRPO: each sequence's env infos per turn (`info.progress` is a turn-reward source). */
  turnInfos?: readonly (readonly Info[])[];
  /** Tree rollouts: which sequences branched from which, and where (their shared prefixes take the mean advantage). */
  branches?: readonly BranchLink[];
}

/** What every advantage estimator reads: the config, the batch (its per-position rewards, scores, masks, groups), the carried EMA baseline and the collect's extras. */
export type BatchEstimator = (algo: AlgoConfig, b: RolloutBatch, ema: EmaBaselineState, ctx: AdvantageContext) => BatchAdvantages;

/**
 * Advantages per position, by the descriptor's estimator kind (`ESTIMATORS`), all over the same
 * input: the batch with its rewards placed (update/positionRewards.ts).
 */
export function computeAdvantages(algo: AlgoConfig, b: RolloutBatch, ema: EmaBaselineState, ctx: AdvantageContext): BatchAdvantages {
  return ESTIMATORS[algoDescriptor(algo.algo).advantage.kind](algo, b, ema, ctx);
}

/** GiGPO: per-turn advantages from anchor states (algos/stepGroups.ts) over each sequence's per-step rewards. */
function stepGroupAdvantages(algo: AlgoConfig, b: RolloutBatch, ema: EmaBaselineState, ctx: AdvantageContext): BatchAdvantages {
  if (!ctx.stateKeys) throw new Error(`computeAdvantages: ${algo.algo} needs each step's anchor state (grid episodes)`);
  const steps = ctx.stateKeys.map((keys, s) => ({ stateKeys: keys, rewards: stepRewardsOf(b, s) }));
  const g = gigpoAdvantages(steps, b.scores, algo.groupSize, { gamma: algo.gamma, normalizeStd: algo.normalizeStd, eps: algo.stdEps, omega: algo.stepAdvantageWeight });
  const adv = new Float64Array(b.size);
  for (let s = 0; s < b.n; s++) {
    const turn = turnIndex(b, s, steps[s].rewards.length);
    for (let k = 0; k < b.lengths[s]; k++) if (turn[k] >= 0) adv[b.starts[s] + k] = g.advantages[s][turn[k]];
  }
  return { adv, returns: null, episodeAdv: g.episodeAdvantages, ema, stepGroups: { perGroup: g.stepGroupsPerGroup, groupedShare: g.groupedStepShare } };
}

/** ReMax: each sequence's score minus its group's greedy episode reward, on every trained position. */
function greedyBaselineAdvantages(algo: AlgoConfig, b: RolloutBatch, ema: EmaBaselineState, ctx: AdvantageContext): BatchAdvantages {
  if (!ctx.greedyTotals) throw new Error(`computeAdvantages: ${algo.algo} needs each group's greedy reward`);
  const a = remaxAdvantages(b.scores, ctx.greedyTotals, algo.groupSize);
  return { adv: broadcast(b, a), returns: null, episodeAdv: a, ema };
}

/** Episode-level estimators (GRPO, RLOO, REINFORCE(++), …; GDPO by term): one advantage per sequence from its score, on every trained position. */
function episodeAdvantages(algo: AlgoConfig, b: RolloutBatch, ema: EmaBaselineState, ctx: AdvantageContext): BatchAdvantages {
  if (b.n === 0) return { adv: new Float64Array(0), returns: null, episodeAdv: new Float64Array(0), ema };
  const positions = positionCounts(b);
  if (algo.rewardAggregation === 'gdpo') {
    const a = gdpoAdvantages(algo, termVectorsOf(b), ctx.groupSize, positions);
    const adv = broadcast(b, a);
    if (ctx.branches) sharePrefixes(b, adv, a, ctx.branches);
    return { adv, returns: null, episodeAdv: a, ema };
  }
  const r =
    typeof ctx.groupSize === 'number'
      ? sequenceAdvantages({ ...algo, groupSize: ctx.groupSize }, b.scores, ema, positions)
      : { advantages: unequalGroupAdvantages(algo, b.scores, ctx.groupSize, positions), ema };
  const adv = broadcast(b, r.advantages);
  if (ctx.branches) sharePrefixes(b, adv, r.advantages, ctx.branches);
  return { adv, returns: null, episodeAdv: r.advantages, ema: r.ema };
}

/** Each sequence's term contributions [n][terms], terms in name order (GDPO's input). */
function termVectorsOf(b: Pick<RolloutBatch, 'n' | 'termScores'>): number[][] {
  const names = Object.keys(b.termScores).sort();
  return Array.from({ length: b.n }, (_, s) => names.map((k) => b.termScores[k][s]));
}

/**
 * Tree rollouts: each trunk's shared stretches take the mean advantage of the leaves that contain
 * them (algos/treeAdvantages.ts), in place. Token t of a sequence is trained at position t − 1
 * (the position that predicts it); a branch's copy of the prefix is untrained (mask 0) already.
 */
export function sharePrefixes(b: Pick<RolloutBatch, 'starts' | 'mask'>, adv: Float64Array, episodeAdv: ArrayLike<number>, links: readonly BranchLink[]): void {
  for (const seg of sharedPrefixSegments(links, episodeAdv)) {
    for (let t = Math.max(1, seg.from); t < seg.to; t++) {
      const i = b.starts[seg.trunk] + t - 1;
      if (b.mask[i] !== 0) adv[i] = seg.advantage;
    }
  }
}

/**
 * Each trained position's action index within its sequence, [size] (−1 off the mask): actions
 * are the runs of trained positions, each closed by a turn end; a half-written action the
 * context cut (no turn end) is one more. Also each sequence's action count.
 */
export function actionIndex(b: Pick<RolloutBatch, 'n' | 'starts' | 'lengths' | 'mask' | 'turnEnd' | 'size'>): { index: Int32Array; actions: Int32Array } {
  const index = new Int32Array(b.size).fill(-1);
  const actions = new Int32Array(b.n);
  for (let s = 0; s < b.n; s++) {
    let a = 0;
    let open = false;
    for (let i = b.starts[s]; i < b.starts[s] + b.lengths[s]; i++) {
      if (b.mask[i] === 0) continue;
      index[i] = a;
      open = true;
      if (b.turnEnd[i]) {
        a++;
        open = false;
      }
    }
    actions[s] = a + (open ? 1 : 0);
  }
  return { index, actions };
}

/**
 * The advantage of each action of each sequence, [n][actions]: the mean over the action's trained
 * positions (one value for every estimator that gives an action's tokens one advantage: the
 * episode's, GiGPO's per step, MT-GRPO's per turn; PPO's per-token GAE averaged). What the
 * trajectory inspector tints each action by.
 */
export function perActionAdvantages(b: Pick<RolloutBatch, 'n' | 'starts' | 'lengths' | 'mask' | 'turnEnd' | 'size'>, adv: ArrayLike<number>): Float64Array[] {
  const { index, actions } = actionIndex(b);
  return Array.from({ length: b.n }, (_, s) => {
    const sum = new Float64Array(actions[s]);
    const count = new Float64Array(actions[s]);
    for (let i = b.starts[s]; i < b.starts[s] + b.lengths[s]; i++) {
      if (index[i] < 0) continue;
      sum[index[i]] += adv[i];
      count[index[i]]++;
    }
    return sum.map((x, k) => (count[k] ? x / count[k] : 0));
  });
}

/**
 * MT-GRPO (algos/turnCredit.ts): per-action advantages from each intermediate turn's reward
 * (`algo.turnCredit.source`: the per-step reward and/or `info.progress`) and the outcome (the
 * sequence's score), on every trained position of the action. `episodeAdv` is Â^O.
 */
function turnCreditAdvantages(algo: AlgoConfig, b: RolloutBatch, ema: EmaBaselineState, ctx: AdvantageContext): BatchAdvantages {
  if (!ctx.turnInfos) throw new Error(`computeAdvantages: ${algo.algo} needs each turn's env info (the collector passes turnInfos)`);
  const { index, actions } = actionIndex(b);
  const episodes = Array.from({ length: b.n }, (_, s) => ({
    outcome: b.scores[s],
    turnRewards: turnRewardsOf(algo.turnCredit.source, stepRewardsOf(b, s), ctx.turnInfos![s]),
    actions: Math.max(1, actions[s]),
  }));
  const r = mtGrpoAdvantages(episodes, ctx.groupSize, { lambda: algo.turnCredit.lambda, normalizeStd: algo.normalizeStd, eps: algo.stdEps });
  const adv = new Float64Array(b.size);
  for (let s = 0; s < b.n; s++) {
    for (let i = b.starts[s]; i < b.starts[s] + b.lengths[s]; i++) if (index[i] >= 0) adv[i] = r.perAction[s][index[i]];
  }
  return { adv, returns: null, episodeAdv: r.outcomeAdv, ema };
}

/** PPO: GAE per sequence over its per-position rewards (each step's at its end), then (optionally) normalised over the mask. */
function gaeAdvantages(algo: AlgoConfig, b: RolloutBatch, ema: EmaBaselineState): BatchAdvantages {
  let adv: Float64Array<ArrayBufferLike> = new Float64Array(b.size);
  const returns = new Float64Array(b.size);
  const episodeAdv = new Float64Array(b.n);
  for (let s = 0; s < b.n; s++) {
    turnIndex(b, s, b.stepCounts[s]);
    sequenceGae({ start: b.starts[s], length: b.lengths[s], mask: b.mask, turnEnd: b.turnEnd, rewards: b.rewards, values: b.values, bootstrap: b.bootstrap[s] }, algo.gamma, algo.lambda, adv, returns);
    for (let i = b.starts[s]; i < b.starts[s] + b.lengths[s]; i++) {
      if (b.mask[i] === 0) continue;
      episodeAdv[s] = adv[i];
      break;
    }
  }
  if (algo.normalizeAdvantages && b.n > 0) adv = normalizeAdvantages(adv, b.mask);
  return { adv, returns, episodeAdv, ema };
}

/** The estimator of each advantage kind (the algorithm descriptor's `advantage.kind`). */
const ESTIMATORS: Readonly<Record<AdvantageEstimator['kind'], BatchEstimator>> = {
  episode: episodeAdvantages,
  gae: (algo, b, ema) => gaeAdvantages(algo, b, ema),
  'step-groups': stepGroupAdvantages,
  'greedy-baseline': greedyBaselineAdvantages,
  'turn-credit': turnCreditAdvantages,
};

/**
 * Aggregation weights per position (`sequenceAggregationWeights` over each sequence's trained
 * positions); 'constant' divides by `aggregationLen`, default the batch's horizon (the env's time
 * limit for grids, the context for tokens). Token rows built without a batch pass `paddedLayout`.
 */
export function aggregationWeightsOf(b: PositionLayout, algo: Pick<AlgoConfig, 'aggregation' | 'aggregationLen'>): Float64Array {
  if (b.n === 0) return new Float64Array(0);
  return broadcast(b, sequenceAggregationWeights(positionCounts(b), algo.aggregation, algo.aggregationLen ?? b.horizon));
}

/** A critic's extra train-graph inputs [size]: the value targets, and the rollout's V when the value loss is clipped; undefined without a critic. */
export function valueTargets(b: RolloutBatch, returns: Float64Array | null, valueClip: number | null): Record<string, Float32Array> | undefined {
  if (!returns) return undefined;
  return { returns: Float32Array.from(returns), ...(valueClip !== null ? { old_values: b.values.slice() } : {}) };
}
