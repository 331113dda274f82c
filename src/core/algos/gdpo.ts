/**
 * GDPO (Group reward-Decoupled normalization Policy Optimization, arXiv 2601.05242; TRL's
 * `multi_objective_aggregation="normalize_then_sum"`). GRPO normalises the *sum* of a
 * multi-term reward within each group, so episodes whose reward vectors differ but sum alike —
 * (1, 0) and (0, 1) — get the same advantage, and a term with a wide spread drowns one with a
 * narrow spread. GDPO normalises each term within its group first (the algorithm's own episode
 * estimator, e.g. GRPO's (r_k − mean_k)/(std_k + ε)), sums the per-term advantages, and
 * standardises the sum over the batch so its scale does not grow with the number of terms.
 */
import { mean, std, type Numbers } from './stats.ts';
import { sequenceAdvantages } from './registry/index.ts';
import type { AlgoSettings } from './registry/types.ts';
import type { Algo } from './registry/index.ts';

/** How an episode's reward terms become the reward its advantage is computed from. */
export type RewardAggregation = 'sum' | 'gdpo';

/**
 * @param terms [n][K] each episode's reward per term (weight × raw), group-major as the estimator expects.
 * @param groupSize one size for every group, or the sizes of unequal groups.
 * @returns [n] advantages: Σ_k estimator(term k), standardised over the batch (sample std, + stdEps).
 */
export function gdpoAdvantages(cfg: AlgoSettings & { algo: Algo }, terms: readonly Numbers[], groupSize: number | readonly number[], positions?: Numbers): Float64Array {
  const n = terms.length;
  const K = n ? terms[0].length : 0;
  const sum = new Float64Array(n);
  for (let k = 0; k < K; k++) {
    const r = Float64Array.from(terms, (t) => t[k]);
    const a = sequenceAdvantages(cfg, r, undefined, positions, groupSize).advantages;
    for (let i = 0; i < n; i++) sum[i] += a[i];
  }
  if (n < 2) return sum;
  const m = mean(sum);
  const s = std(sum);
  return sum.map((x) => (x - m) / (s + cfg.stdEps));
}
