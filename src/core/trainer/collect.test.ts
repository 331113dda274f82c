/**
 * The collect pipeline over a scripted source: which rounds it asks for, which groups dynamic
 * sampling keeps, and which of the algorithm's declared needs it serves, checked against
 * hand-worked expectations.
 */
import { describe, expect, it } from 'vitest';
import { defaultsFor } from '../algos/config.ts';
import type { SampledEpisode } from '../metrics/iterationMetrics.ts';
import type { ShapedReward } from '../reward/shaping.ts';
import { gather, type PlayedGroup, type RolloutSource } from './collect.ts';

/** A scripted episode: its reward is `r`, its seed names its group. */
interface Ep {
  seed: number;
  success: boolean;
  infos: { step: number }[];
  r: number;
}

const ep = (seed: number, r: number): Ep => ({ seed, success: r > 0, infos: [{ step: 0 }, { step: 1 }], r });
const shaped = (r: number): ShapedReward => ({ total: r, terms: {} as ShapedReward['terms'], raw: {} as ShapedReward['raw'], perStep: Float64Array.from([0, r]) });

/** A source whose rounds are given as lists of groups' rewards; it records every call. */
function scripted(rounds: number[][][]) {
  const calls = { play: [] as [number, number][], greedy: [] as number[][], stateKeys: 0, scored: 0 };
  const src: RolloutSource<Ep, PlayedGroup<Ep>> = {
    play: async (_it, round, need) => {
      calls.play.push([round, need]);
      return rounds[round].map((rs, g) => ({ episodes: rs.map((r) => ep(100 * round + g, r)) }));
    },
    score: async (eps) => {
      calls.scored += eps.length;
      return eps.map((e) => shaped(e.r));
    },
    greedy: async (_it, seeds) => {
      calls.greedy.push([...seeds]);
      return { episodes: seeds.map((s) => ep(s, s / 1000)), envSteps: 3 * seeds.length };
    },
    stateKeys: (e, s) => {
      calls.stateKeys++;
      return Array.from(s.perStep, (_, t) => `${e.seed}:${t}`);
    },
    summarize: (e, s): SampledEpisode => ({ summary: { reward: s.total } as unknown as SampledEpisode['summary'], entropies: [], actionKey: String(e.seed) }),
  };
  return { src, calls };
}

describe('gather: the collect pipeline', () => {
  it('dynamic sampling drops zero-spread groups, refills only what is missing, and keeps every sampled episode for the metrics', async () => {
    const algo = { ...defaultsFor('grpo'), groupSize: 2, dynamicSampling: { enabled: true, maxRounds: 3, spreadTol: 1e-9 } };
    // Round 0: group 0 has spread, group 1 none (dropped). Round 1 is asked for the one missing group; its first has spread.
    const { src, calls } = scripted([
      [[1, 0], [1, 1]],
      [[0, 1], [0, 0]],
    ]);
    const g = await gather(src, algo, 0, 2);
    expect(calls.play).toEqual([[0, 2], [1, 1]]);
    expect(g.groups.map((x) => x.episodes.map((e) => e.seed))).toEqual([[0, 0], [100, 100]]);
    expect(g.shaped.map((s) => s.total)).toEqual([1, 0, 0, 1]);
    expect(g.sampled).toHaveLength(8); // dropped groups and the surplus round-1 group included
    // Dropped: round 0's group 1 and round 1's group 1 (a zero-spread group is judged in every round).
    expect(g.extra).toEqual({ groupsDropped: 2, samplingRounds: 2 });
    expect(g.ctx.groupSize).toBe(2);
    // GRPO declares no needs: neither greedy episodes nor anchor states are gathered.
    expect(calls.greedy).toEqual([]);
    expect(calls.stateKeys).toBe(0);
    expect(g.ctx.stateKeys).toBeUndefined();
    expect(g.ctx.turnInfos).toBeUndefined();
  });

  it("ReMax: one greedy episode per trained group, from the group's own seed, scored like the sampled ones", async () => {
    const algo = { ...defaultsFor('remax'), groupSize: 2 };
    const { src, calls } = scripted([[[1, 0], [0, 0], [1, 1]]]);
    const g = await gather(src, algo, 0, 3);
    expect(calls.greedy).toEqual([[0, 1, 2]]);
    // The scripted greedy episode's reward is seed / 1000: [0, 0.001, 0.002].
    expect(Array.from(g.greedy!.totals)).toEqual([0, 0.001, 0.002]);
    expect(g.greedy!.envSteps).toBe(9);
    expect(g.greedy!.success).toBeCloseTo(2 / 3, 12);
    expect(g.ctx.greedyTotals).toBe(g.greedy!.totals);
    expect(calls.scored).toBe(6 + 3);
  });

  it('GiGPO gets anchor-state keys and MT-GRPO turn infos of the trained episodes, in batch order', async () => {
    const gigpo = scripted([[[1, 0], [0, 1]]]);
    const a = await gather(gigpo.src, { ...defaultsFor('gigpo'), groupSize: 2 }, 0, 2);
    expect(a.ctx.stateKeys).toEqual([['0:0', '0:1'], ['0:0', '0:1'], ['1:0', '1:1'], ['1:0', '1:1']]);
    const mt = scripted([[[1, 0]]]);
    const b = await gather(mt.src, { ...defaultsFor('mt-grpo'), groupSize: 2 }, 0, 1);
    expect(b.ctx.turnInfos).toEqual([[{ step: 0 }, { step: 1 }], [{ step: 0 }, { step: 1 }]]);
    expect(mt.calls.stateKeys).toBe(0);
  });

  it('an algorithm without groups plays one round of one group and reports it as one round, no dynamic sampling', async () => {
    const { src, calls } = scripted([[[0, 0, 0]]]);
    const g = await gather(src, defaultsFor('reinforce'), 0, 1);
    expect(calls.play).toEqual([[0, 1]]);
    expect(g.ds).toBeNull();
    expect(g.episodes).toHaveLength(3);
    expect(g.ctx.groupSize).toBe(3);
    expect(g.extra).toEqual({ samplingRounds: 1 });
  });
});
