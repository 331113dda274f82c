/**
 * The weights/TIS phase of a token iteration with stale tokens (continuous batching, staleness
 * ≥ 1). A token sampled by version v < V (the learner's) is stale: its π_old is the proximal
 * policy at V (decoupled PPO: the clip trust region sits around the current policy, not the
 * stale one), and with TIS its advantage is multiplied by min(π_old/μ, cap). The weight
 * multiplies the advantage only: it corrects the policy-gradient estimate and leaves the entropy
 * and KL regularisers unweighted. Without TIS, stale tokens keep μ as π_old.
 */
import type { AlgoConfig } from '../algos/config.ts';
import { staleness, truncatedIsWeights, type StalenessResult } from '../algos/offpolicy.ts';
import type { ShiftedRows } from './tokenAdvantages.ts';
import type { SequenceScorer } from './tokenUpdate.ts';

export interface TokenOffPolicy {
  /** Staleness of the batch's policy tokens (for the bound check and the metrics). */
  stale: StalenessResult;
  /** [n·T] 1 on policy tokens sampled by the learner's version. */
  fresh: Float32Array;
  /** [n·T] π_old the ratio is taken against. */
  oldLogp: Float32Array;
  /** [n·T] advantages with the TIS weights applied to stale tokens. */
  advUsed: Float64Array;
  /** [n·T] the proximal log-probs (μ on fresh tokens) when computed here, for the IS-ratio metrics. */
  proxLogp: Float32Array;
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
 * @param ver [n·T] version per training position (`shiftedVersions`).
 * @param proximal scorer of the learner's current weights (π_prox, computed here once for the
 *   whole update), or null when the learner's own forward pass serves as π_old (an update of one
 *   optimizer step with TIS, `learnerIsProximal`: it gets `prox_mask` and applies the weight).
 * @param tokAdv [n·T] advantages before correction.
 */
export async function tokenOffPolicy(
  algo: Pick<AlgoConfig, 'tis'>,
  version: number,
  rows: ShiftedRows,
  ver: Int32Array,
  tokAdv: Float64Array,
  proximal: SequenceScorer | null,
  shape: { n: number; T: number; V: number },
): Promise<TokenOffPolicy> {
  const { n, T } = shape;
  const stale = staleness(version, ver, rows.mask);
  const fresh = new Float32Array(n * T);
  const staleSeqs = new Set<number>();
  for (let i = 0; i < n * T; i++) {
    if (!rows.mask[i]) continue;
    if (ver[i] === version) fresh[i] = 1;
    else staleSeqs.add(Math.floor(i / T));
  }
  const oldLogp = rows.oldLogprobs.slice();
  const advUsed = Float64Array.from(tokAdv);
  let extra: Record<string, Float32Array> | undefined;
  let proxLogp = rows.oldLogprobs;
  if (!proximal) {
    const proxMask = new Float32Array(n * T);
    for (let i = 0; i < n * T; i++) if (rows.mask[i] && !fresh[i]) proxMask[i] = 1;
    extra = { prox_mask: proxMask };
  } else if (staleSeqs.size > 0) {
    proxLogp = rows.oldLogprobs.slice();
    const prox = await proximal.logprobs({ tokens: rows.tokens, actions: rows.actions, mask: rows.mask, ...shape }, [...staleSeqs]);
    for (let i = 0; i < n * T; i++) if (rows.mask[i] && !fresh[i]) proxLogp[i] = prox[i];
    if (algo.tis.enabled) {
      oldLogp.set(proxLogp);
      const w = truncatedIsWeights(proxLogp, rows.oldLogprobs, rows.mask, algo.tis.cap).weights;
      for (let i = 0; i < n * T; i++) if (rows.mask[i] && !fresh[i]) advUsed[i] *= w[i];
    }
  }
  return { stale, fresh, oldLogp, advUsed, proxLogp, extra };
}
