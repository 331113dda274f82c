/**
 * Step-level credit for multi-step episodes (GiGPO: Feng et al. 2025, "Group-in-Group Policy
 * Optimization for LLM Agent Training"). Episodes of one GRPO group start from the same state and
 * often pass through the same states again (the same room corner, the same tool reply). Steps
 * taken from one such anchor state form a step group; comparing their discounted returns says
 * which action was better *from there*, credit that the episode-level advantage spreads evenly
 * over every step.
 *
 *   A(i, t) = A_episode(i) + ω · A_step(i, t)
 *   A_step(i, t) = (G(i, t) − mean of G over the step group of state s(i, t)) [/ its std]
 *   G(i, t) = Σ_k γ^k r(i, t + k)          (discounted return from step t)
 *
 * A state seen once in the group forms a step group of one: its step advantage is 0.
 */
import { grpoAdvantages } from './advantages.ts';
import { mean, std, type Numbers } from './stats.ts';

/** One episode of a group: a key per step for the state the action was taken in, and the rewards. */
export interface StepGroupEpisode {
  /** [T] identity of the state before step t's action (equal keys = the same anchor state). */
  stateKeys: readonly string[];
  /** [T] reward received after step t's action. */
  rewards: Numbers;
}

export interface StepGroupOptions {
  /** Discount of the return from each step. */
  gamma: number;
  /** Divide by the step group's sample std (as GRPO does per episode group). */
  normalizeStd: boolean;
  /** Added to the std before dividing, so an all-equal step group gives 0. */
  eps: number;
}

/** G(t) = Σ_k γ^k r(t + k), computed backwards. */
export function discountedReturns(rewards: Numbers, gamma: number): Float64Array {
  const out = new Float64Array(rewards.length);
  let acc = 0;
  for (let t = rewards.length - 1; t >= 0; t--) out[t] = acc = rewards[t] + gamma * acc;
  return out;
}

/**
 * Step advantages of one group's episodes, [episode][step]. Step groups collect every step of
 * every episode of the group that was taken from the same state key.
 */
export function stepGroupAdvantages(group: readonly StepGroupEpisode[], o: StepGroupOptions): { advantages: Float64Array[]; stepGroups: number; groupedSteps: number } {
  const returns = group.map((ep) => {
    if (ep.stateKeys.length !== ep.rewards.length) throw new RangeError(`stepGroupAdvantages: ${ep.stateKeys.length} state keys for ${ep.rewards.length} rewards`);
    return discountedReturns(ep.rewards, o.gamma);
  });
  const byState = new Map<string, { ep: number; t: number }[]>();
  group.forEach((ep, i) => ep.stateKeys.forEach((k, t) => (byState.get(k) ?? byState.set(k, []).get(k)!).push({ ep: i, t })));
  const advantages = group.map((ep) => new Float64Array(ep.rewards.length));
  let stepGroups = 0;
  let groupedSteps = 0;
  for (const members of byState.values()) {
    if (members.length < 2) continue;
    stepGroups++;
    groupedSteps += members.length;
    const g = members.map((m) => returns[m.ep][m.t]);
    // Equal returns carry no step signal: exactly 0 (not a rounding error, not 0/0).
    if (g.every((x) => x === g[0])) continue;
    const mu = mean(g);
    const scale = o.normalizeStd ? std(g) + o.eps : 1;
    members.forEach((m, j) => (advantages[m.ep][m.t] = (g[j] - mu) / scale));
  }
  return { advantages, stepGroups, groupedSteps };
}

/**
 * GiGPO advantages per step for a batch of groups (group-major, `groupSize` episodes each):
 * the GRPO episode advantage of each episode's total reward plus ω times its step advantage.
 * `groups/step_groups_mean` and `groups/grouped_step_share` say how much step credit there was.
 */
export function gigpoAdvantages(
  episodes: readonly StepGroupEpisode[],
  totals: Numbers,
  groupSize: number,
  o: StepGroupOptions & { omega: number },
): { advantages: Float64Array[]; episodeAdvantages: Float64Array; stepGroupsPerGroup: number; groupedStepShare: number } {
  if (episodes.length % groupSize !== 0) throw new RangeError(`gigpoAdvantages: ${episodes.length} episodes is not a whole number of groups of ${groupSize}`);
  const episodeAdvantages = grpoAdvantages(totals, groupSize, { normalizeStd: o.normalizeStd, eps: o.eps });
  const advantages: Float64Array[] = [];
  let stepGroups = 0, grouped = 0, steps = 0;
  for (let g = 0; g < episodes.length / groupSize; g++) {
    const group = episodes.slice(g * groupSize, (g + 1) * groupSize);
    const s = stepGroupAdvantages(group, o);
    stepGroups += s.stepGroups;
    grouped += s.groupedSteps;
    s.advantages.forEach((a, j) => {
      const i = g * groupSize + j;
      steps += a.length;
      advantages.push(a.map((x) => episodeAdvantages[i] + o.omega * x));
    });
  }
  const nGroups = episodes.length / groupSize;
  return { advantages, episodeAdvantages, stepGroupsPerGroup: nGroups ? stepGroups / nGroups : 0, groupedStepShare: steps ? grouped / steps : 0 };
}
