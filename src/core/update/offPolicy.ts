/**
 * The weights/TIS phase over a rollout batch, for every env family. A position sampled by version
 * v < V (the learner's) is stale: its π_old is the proximal policy at V (decoupled PPO: the clip
 * trust region sits around the current policy, not the stale one), and with TIS its advantage is
 * multiplied by min(π_old/μ, cap). The weight multiplies the advantage only: it corrects the
 * policy-gradient estimate and leaves the entropy, KL and value terms unweighted. Without TIS,
 * stale positions keep μ as π_old. Fresh positions: π_old = μ, weight 1. See ARCHITECTURE.md,
 * 'Off-policy correction'.
 */
import type { AlgoConfig } from '../algos/config.ts';
import { staleness, truncatedIsWeights, type StalenessResult, type TisResult } from './importanceWeights.ts';
import type { PolicyRunner } from '../models/runners.ts';
import { maskedPositions, type RolloutBatch } from './batch.ts';

/**
 * A policy that scores a batch's actions: log π(a_i | context of i) at the listed positions
 * (default: every trained one), [size] with 0 elsewhere (it may fill more positions than asked).
 * The MLP scores rows (`RowScorer`), the transformer whole sequences (`SequenceScorer`).
 */
export interface PositionScorer {
  logprobsAt(b: RolloutBatch, positions?: readonly number[]): Promise<Float32Array>;
  setWeights(weights: Parameters<PolicyRunner['setWeights']>[0], version: number): void | Promise<void>;
  release(): Promise<void>;
}

/** Scores MLP rows with a policy runner, B rows per call in the order asked (unused slots zero). */
export class RowScorer implements PositionScorer {
  constructor(
    readonly runner: PolicyRunner,
    /** Actions per distribution (the runner's logprobs are [batch·A]). */
    private readonly A: number,
  ) {}

  async logprobsAt(b: RolloutBatch, positions?: readonly number[]): Promise<Float32Array> {
    if (b.feed.kind !== 'rows') throw new Error('RowScorer: the batch is not fed as rows');
    const { D, obs: all, actions } = b.feed;
    const which = positions ?? maskedPositions(b);
    const B = this.runner.batch;
    const out = new Float32Array(b.size);
    const obs = new Float32Array(B * D);
    for (let c = 0; c < which.length; c += B) {
      const chunk = which.slice(c, c + B);
      obs.fill(0);
      chunk.forEach((r, j) => obs.set(all.subarray(r * D, (r + 1) * D), j * D));
      const res = await this.runner.run({ obs });
      chunk.forEach((r, j) => (out[r] = res.logprobs[j * this.A + actions[r]]));
    }
    return out;
  }

  setWeights(weights: Parameters<PolicyRunner['setWeights']>[0], version: number): void {
    this.runner.setWeights(weights, version);
  }

  release(): Promise<void> {
    return this.runner.release();
  }
}

export interface OffPolicy {
  /** Staleness of the batch's trained positions (for the bound check and the metrics). */
  stale: StalenessResult;
  /** [size] 1 on trained positions sampled by the learner's version. */
  fresh: Float32Array;
  /** Trained positions sampled by an older version. */
  staleCount: number;
  /** [size] π_old the ratio is taken against. */
  oldLogp: Float32Array;
  /** [size] advantages with the TIS weights applied to stale positions. */
  advUsed: Float64Array;
  /** [size] π_prox (μ on fresh positions) when computed here; null when the learner computes it. */
  proxLogp: Float32Array | null;
  /** Extra train-graph inputs: `prox_mask` when the learner computes π_old itself. */
  extra: Record<string, Float32Array> | undefined;
}

/**
 * Whether the learner's own forward pass may serve as the proximal policy (train-graph option
 * proximal 'self'): TIS on, and the update of `seqs` sequences is one optimizer step (one epoch,
 * one minibatch of ≤ `learnerBatch`). Decoupled PPO fixes π_prox for the whole update, as the
 * weights before it; a learner's forward pass in a later step would see the weights earlier
 * steps left, so with more steps a scorer computes π_prox once, before the update.
 */
export function learnerIsProximal(algo: Pick<AlgoConfig, 'tis' | 'updateEpochs' | 'minibatches'>, seqs: number, learnerBatch: number): boolean {
  return algo.tis.enabled && algo.updateEpochs === 1 && Math.max(algo.minibatches, Math.ceil(seqs / learnerBatch)) === 1;
}

/**
 * @param adv [size] advantages before correction.
 * @param proximal scorer of the learner's current weights (π_prox, computed here once for the
 *   whole update), or 'learner' when the learner's own forward pass serves as π_old (an update
 *   of one optimizer step with TIS, `learnerIsProximal`: it gets `prox_mask` and applies the weight),
 *   or null where every position is fresh by construction (lockstep rollouts).
 */
export async function offPolicyWeights(algo: Pick<AlgoConfig, 'tis'>, version: number, b: RolloutBatch, adv: Float64Array, proximal: PositionScorer | 'learner' | null): Promise<OffPolicy> {
  const stale = staleness(version, b.versions, b.mask);
  const fresh = new Float32Array(b.size);
  const stalePos: number[] = [];
  for (let i = 0; i < b.size; i++) {
    if (!b.mask[i]) continue;
    if (b.versions[i] === version) fresh[i] = 1;
    else stalePos.push(i);
  }
  const oldLogp = b.mu.slice();
  const advUsed = Float64Array.from(adv);
  if (proximal === 'learner') {
    const proxMask = new Float32Array(b.size);
    for (const i of stalePos) proxMask[i] = 1;
    return { stale, fresh, staleCount: stalePos.length, oldLogp, advUsed, proxLogp: null, extra: { prox_mask: proxMask } };
  }
  const proxLogp = b.mu.slice();
  if (stalePos.length > 0) {
    if (!proximal) throw new Error(`offPolicyWeights: ${stalePos.length} positions are older than version ${version}, and this trainer has no proximal policy`);
    const prox = await proximal.logprobsAt(b, stalePos);
    for (const i of stalePos) proxLogp[i] = prox[i];
    if (algo.tis.enabled) {
      oldLogp.set(proxLogp);
      const w = truncatedIsWeights(proxLogp, b.mu, b.mask, algo.tis.cap).weights;
      for (const i of stalePos) advUsed[i] *= w[i];
    }
  }
  return { stale, fresh, staleCount: stalePos.length, oldLogp, advUsed, proxLogp, extra: undefined };
}

/**
 * The IS ratios π_prox/μ over the trained positions, for the metrics (reported even with TIS off:
 * they show how far the data drifted). `learnerLogp` is the learner's pre-step log-probs, which
 * are π_prox when the learner served as it.
 */
export function isRatios(b: RolloutBatch, off: OffPolicy, learnerLogp: Float32Array, cap: number): TisResult {
  return truncatedIsWeights(off.proxLogp ?? learnerLogp, b.mu, b.mask, cap);
}
