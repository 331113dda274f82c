/**
 * ReMax (Li et al. 2023): the baseline of a sampled episode is the reward of the greedy episode
 * from the same start, A_i = r_i − r_greedy(group of i). One greedy rollout per group replaces the
 * critic; unlike GRPO's group mean it does not depend on the other samples, and a group whose
 * samples all match the greedy reward gets no signal.
 */
import type { Numbers } from './stats.ts';

/** @param rewards [G·N] sampled episode rewards, group-major. @param greedy [G] each group's greedy reward. */
export function remaxAdvantages(rewards: Numbers, greedy: Numbers, groupSize: number): Float64Array {
  if (rewards.length !== greedy.length * groupSize) {
    throw new RangeError(`remaxAdvantages: ${rewards.length} rewards for ${greedy.length} greedy baselines of groups of ${groupSize}`);
  }
  return Float64Array.from(rewards, (r, i) => r - greedy[Math.floor(i / groupSize)]);
}
