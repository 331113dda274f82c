/**
 * Per-agent credit for multi-agent envs (EnvSpec.agents; turn-taking, so every step belongs to
 * exactly one agent, named by `info.agent`). Keys, for agent `<n>` (e.g. `agents/a/adv_mean`):
 *
 * - `agents/<n>/adv_mean`, `agents/<n>/adv_abs_mean`: the advantage over that agent's steps of
 *   the trained batch (the learning signal its actions got);
 * - `agents/<n>/adv_share`: its share of Σ|advantage| over the batch (how the credit is split;
 *   the shares sum to 1, 0 each when every advantage is 0);
 * - `agents/<n>/entropy`: mean rollout entropy over its steps (nats);
 * - `agents/<n>/steps_mean`: its steps per episode;
 * - `agents/<n>/subgoal_rate`: share of episodes in which it reached its own subgoal
 *   (`info.subgoal` on one of its steps; grid/switch-door: A stood on the switch, B passed the door);
 * - `agents/<n>/subgoal_step_mean`: the mean env step (1-based, both agents' steps counted) of
 *   that first subgoal, over the episodes that reached it (NaN when none did).
 *
 * Episode-level keys (steps, subgoals) are over every sampled episode, like
 * `episode/success_rate`; advantage keys over the trained batch, like `adv/*`.
 */
import type { Info } from '../envs/types.ts';

/** What an episode must show: per step its info (with `agent`) and the behaviour entropy. */
export interface AgentEpisode {
  infos: readonly Info[];
  entropies: ArrayLike<number>;
}

/** The agent index of step `t` (info.agent; turn order t mod n when an info lacks it). */
function agentOf(info: Info | undefined, t: number, n: number): number {
  const a = info?.agent;
  return typeof a === 'number' && Number.isInteger(a) && a >= 0 && a < n ? a : t % n;
}

/**
 * @param names the agents' names (EnvSpec.agents), in index order
 * @param trained the trained batch's episodes, in the order of `advantages`' rows
 * @param advantages one per step of `trained`, episode after episode
 * @param sampled every episode sampled this iteration (outcome keys)
 */
export function agentCreditMetrics(names: readonly string[], trained: readonly AgentEpisode[], advantages: ArrayLike<number>, sampled: readonly AgentEpisode[]): Record<string, number> {
  const n = names.length;
  const advSum = new Float64Array(n);
  const advAbs = new Float64Array(n);
  const advCount = new Float64Array(n);
  let row = 0;
  for (const ep of trained) {
    for (let t = 0; t < ep.infos.length; t++, row++) {
      const a = agentOf(ep.infos[t], t, n);
      const v = advantages[row];
      advSum[a] += v;
      advAbs[a] += Math.abs(v);
      advCount[a]++;
    }
  }
  if (row !== advantages.length) throw new Error(`agentCreditMetrics: ${advantages.length} advantages for ${row} steps`);
  const entSum = new Float64Array(n);
  const steps = new Float64Array(n);
  const reached = new Float64Array(n);
  const reachedAt = new Float64Array(n);
  for (const ep of sampled) {
    const first = new Array<number>(n).fill(-1);
    for (let t = 0; t < ep.infos.length; t++) {
      const a = agentOf(ep.infos[t], t, n);
      steps[a]++;
      entSum[a] += ep.entropies[t];
      if (ep.infos[t]?.subgoal === true && first[a] < 0) first[a] = t + 1;
    }
    first.forEach((s, a) => {
      if (s < 0) return;
      reached[a]++;
      reachedAt[a] += s;
    });
  }
  const totalAbs = advAbs.reduce((s, v) => s + v, 0);
  const E = Math.max(1, sampled.length);
  const out: Record<string, number> = {};
  names.forEach((name, a) => {
    const k = `agents/${name}/`;
    out[`${k}adv_mean`] = advCount[a] > 0 ? advSum[a] / advCount[a] : 0;
    out[`${k}adv_abs_mean`] = advCount[a] > 0 ? advAbs[a] / advCount[a] : 0;
    out[`${k}adv_share`] = totalAbs > 0 ? advAbs[a] / totalAbs : 0;
    out[`${k}entropy`] = steps[a] > 0 ? entSum[a] / steps[a] : NaN;
    out[`${k}steps_mean`] = steps[a] / E;
    out[`${k}subgoal_rate`] = reached[a] / E;
    out[`${k}subgoal_step_mean`] = reached[a] > 0 ? reachedAt[a] / reached[a] : NaN;
  });
  return out;
}
