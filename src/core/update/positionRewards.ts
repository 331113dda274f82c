/**
 * Per-position rewards in the rollout batch (veRL's token_level_rewards): the score phase's
 * per-episode rewards (env reward + shaping + user terms, one value per env step) placed at the
 * position where each step's action ends, so every advantage estimator reads one input, the batch.
 *
 * A step's action is a run of trained positions closed by a turn end (a grid step is one position;
 * a token action is its policy tokens). Step j of a sequence lands on its j-th turn end. A
 * half-written action cut by the context is closed by a turn end too but never reached the env:
 * it is one turn more than the steps and takes no reward. A sequence with fewer turn ends than
 * steps (a tree branch, whose copy of the shared prefix is context, mask 0) places its first steps
 * on the turns it has and the rest nowhere (they still count in `scores`): the alignment the KL
 * penalty always used; GAE and GiGPO refuse such a sequence (batchAdvantages.ts, `turnIndex`).
 */
import type { RolloutBatch } from './batch.ts';

/** What the score phase gives per episode: its total, its terms' contributions, and [steps] rewards per env step. */
export interface EpisodeRewards {
  total: number;
  terms: Readonly<Record<string, number>>;
  perStep: ArrayLike<number>;
}

/** Each env step's end position in sequence s, [steps]: its j-th trained turn end (−1 past the last). */
export function stepEnds(b: Pick<RolloutBatch, 'starts' | 'lengths' | 'mask' | 'turnEnd'>, s: number, steps: number): Int32Array {
  const out = new Int32Array(steps).fill(-1);
  let turn = 0;
  for (let i = b.starts[s]; i < b.starts[s] + b.lengths[s] && turn < steps; i++) {
    if (b.mask[i] !== 0 && b.turnEnd[i]) out[turn++] = i;
  }
  return out;
}

/**
 * Places each episode's rewards into the batch, in place: `rewards` (step j's reward at its end
 * position), `scores` (the totals), `stepCounts` and `termScores`. Episodes are the batch's
 * sequences, in order. The values are copied as they are, so the estimators see the numbers the
 * score phase computed.
 */
export function placeRewards(b: RolloutBatch, episodes: readonly EpisodeRewards[]): RolloutBatch {
  if (episodes.length !== b.n) throw new RangeError(`placeRewards: ${episodes.length} episodes' rewards for a batch of ${b.n} sequences`);
  b.rewards.fill(0);
  const names = [...new Set(episodes.flatMap((e) => Object.keys(e.terms)))].sort();
  b.termScores = Object.fromEntries(names.map((k) => [k, new Float64Array(b.n)]));
  episodes.forEach((e, s) => {
    b.scores[s] = e.total;
    b.stepCounts[s] = e.perStep.length;
    const ends = stepEnds(b, s, e.perStep.length);
    for (let j = 0; j < ends.length; j++) if (ends[j] >= 0) b.rewards[ends[j]] = e.perStep[j];
    for (const k of names) b.termScores[k][s] = e.terms[k] ?? 0;
  });
  return b;
}

/** Sequence s's reward per env step, [stepCounts[s]], read back from its positions (0 for a step placed nowhere). */
export function stepRewardsOf(b: Pick<RolloutBatch, 'starts' | 'lengths' | 'mask' | 'turnEnd' | 'rewards' | 'stepCounts'>, s: number): Float64Array {
  const ends = stepEnds(b, s, b.stepCounts[s]);
  return Float64Array.from(ends, (i) => (i >= 0 ? b.rewards[i] : 0));
}

/**
 * A copy of the batch whose reward arrays the score phase may change (KL penalty, overlong term)
 * without touching the placed rewards others read; the other arrays are shared.
 */
export function withOwnRewards(b: RolloutBatch): RolloutBatch {
  return { ...b, rewards: b.rewards.slice(), scores: b.scores.slice() };
}
