/**
 * REINFORCE++ with a group baseline (Hu 2025, "REINFORCE++: a simple and efficient approach for
 * aligning LLMs"; veRL's `reinforce_plus_plus_baseline`). Two steps:
 *   1. a_i = r_i − mean_g: the episode's reward minus its group's mean, with no per-group std
 *      (a lone episode, possible with the prompt pool's unequal groups, keeps r_i, as in veRL);
 *   2. A_i = (a_i − μ) / √(σ² + 1e-8), μ and σ² (Bessel, n−1) over every policy position of the
 *      batch (tokens, or grid steps), so an episode weighs as many times as it has positions:
 *      veRL's `masked_whiten` over the response mask of the broadcast advantages.
 * Normalising over the whole batch instead of each small group keeps the advantage scale stable
 * without the noisy per-group std that over-weights nearly-solved groups.
 */
import type { Numbers } from '../stats.ts';
import { defineAlgo, groupSizes, type EpisodeBatch } from './types.ts';

/** veRL's `masked_whiten` floor under the variance (not the std), in squared reward units. */
const VAR_EPS = 1e-8;

/** Step 1: reward minus its group's mean; an all-equal group gets exactly 0, a lone episode its reward. */
function centred(rewards: Numbers, sizes: readonly number[]): Float64Array {
  const out = new Float64Array(rewards.length);
  let o = 0;
  for (const n of sizes) {
    let s = 0;
    let equal = true;
    for (let j = 0; j < n; j++) {
      s += rewards[o + j];
      if (rewards[o + j] !== rewards[o]) equal = false;
    }
    const m = n === 1 ? 0 : s / n;
    if (n === 1 || !equal) for (let j = 0; j < n; j++) out[o + j] = rewards[o + j] - m;
    o += n;
  }
  return out;
}

/** Step 2: whiten over positions (episode i counted positions[i] times); unchanged with < 2 positions. */
function whitenOverPositions(a: Float64Array, positions: Numbers | undefined): Float64Array {
  const w = (i: number) => (positions ? positions[i] : 1);
  let total = 0;
  let sum = 0;
  for (let i = 0; i < a.length; i++) {
    total += w(i);
    sum += w(i) * a[i];
  }
  if (total < 2) return a;
  const mu = sum / total;
  let ss = 0;
  for (let i = 0; i < a.length; i++) ss += w(i) * (a[i] - mu) * (a[i] - mu);
  const scale = 1 / Math.sqrt(ss / (total - 1) + VAR_EPS);
  return Float64Array.from(a, (x) => (x - mu) * scale);
}

export const reinforcepp = defineAlgo({
  name: 'reinforcepp',
  label: 'REINFORCE++ (group mean + batch norm)',
  help: "'reinforcepp': REINFORCE++ with a group baseline: reward minus its group's mean, then normalised over every step or token of the batch (no per-group std).",
  advantage: {
    kind: 'episode',
    estimate: (_cfg, b: EpisodeBatch) => ({ advantages: whitenOverPositions(centred(b.rewards, groupSizes(b.groupSize, b.rewards.length, 'reinforcepp')), b.positions), ema: b.ema }),
  },
  group: true,
});
