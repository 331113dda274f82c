/**
 * The token trainers' metrics report tool recovery from the episodes' infos: two flaky-api
 * episodes played by hand go through batchMetrics (the metrics phase every trainer calls).
 */
import { describe, expect, it } from 'vitest';
import { makeFlakyApi } from '../envs/tools/flakyApi.ts';
import type { Info } from '../envs/types.ts';
import { EMA_BASELINE_INIT } from '../algos/advantages.ts';
import { sampledTokenEpisode, type TokenEpisode } from '../rollout/tokenEpisode.ts';
import type { ShapedReward } from '../reward/shaping.ts';
import { tokenRolloutBatch } from '../update/batch.ts';
import { batchMetrics } from './batchMetrics.ts';
import type { OffPolicy } from '../update/offPolicy.ts';

/** The metrics phase over sampled episodes and an empty trained batch. */
function metricsOf(sampled: TokenEpisode[], shaped: ShapedReward[]): Record<string, number> {
  const batch = tokenRolloutBatch([], 8, 8);
  return batchMetrics({
    sampled: sampled.map((e, i) => sampledTokenEpisode(e, shaped[i])), batch, trainedSuccess: [],
    adv: { adv: new Float64Array(0), returns: null, episodeAdv: new Float64Array(0), ema: EMA_BASELINE_INIT },
    off: { stale: { perToken: new Int32Array(0), mean: 0, max: 0 }, fresh: new Float32Array(0), staleCount: 0 } as unknown as OffPolicy,
    tis: { weights: new Float64Array(0), ratioMean: 1, ratioMax: 1, clipfrac: 0 },
    upd: { metrics: {}, steps: 0, allApplied: true, stepLogprobs: new Float32Array(0) }, lr: 1e-4, version: 0,
  });
}

/** A token episode carrying only what the metrics read: the env's rewards and infos (no tokens). */
function episode(actions: string[], seed: number, failureProb: number): TokenEpisode {
  const env = makeFlakyApi({ failureProb });
  env.reset({ seed });
  const rewards: number[] = [];
  const infos: Info[] = [];
  let terminated = false;
  for (const a of actions) {
    const r = env.step(a);
    rewards.push(r.reward);
    infos.push(r.info);
    terminated = r.terminated;
  }
  const none = new Float32Array(0);
  return {
    envId: env.spec.id, seed, group: 0, tokens: new Int32Array(0), lossMask: new Uint8Array(0), logprobs: none, entropies: none,
    versions: new Int32Array(0), rewards: Float64Array.from(rewards), infos, actions, observations: [], forcedEnds: 0,
    turns: actions.length, terminated, truncated: false, contextLimited: false, success: infos.at(-1)?.success === true, transcript: '',
  };
}

describe('batchMetrics on token episodes', () => {
  it('reports tools/recovery_rate beside the tool call metrics', () => {
    // Every call fails (p = 1): one failure run, never recovered. Then p = 0: a missing key
    // (a failed call) and a successful call after it: one run, recovered.
    const a = episode(['call(k1)', 'retry()', 'answer(1)'], 1, 1);
    const b = episode(['call(k99)', 'call(k1)'], 2, 0);
    expect(b.infos.map((i) => i.recovered)).toEqual([undefined, true]);
    const m = metricsOf([a, b], [a, b].map((e) => ({ total: e.rewards.reduce((s, x) => s + x, 0), terms: {}, raw: {}, perStep: e.rewards }) as never));
    expect(m['tools/call_frequency']).toBe(2); // 4 calls / 2 episodes
    expect(m['tools/failure_frequency']).toBe(3 / 4);
    expect(m['tools/recovery_rate']).toBe(1 / 2);
  });

  it('episode/distinct_ratio: distinct action texts over the sampled episodes (what the tab and the CLI both log)', () => {
    const eps = [episode(['call(k1)', 'answer(1)'], 1, 0), episode(['call(k1)', 'answer(1)'], 2, 0), episode(['call(k2)'], 3, 0), episode(['call(k1)answer(1)'], 4, 0)];
    const m = metricsOf(eps, eps.map((e) => ({ total: 0, terms: {}, raw: {}, perStep: e.rewards }) as never));
    // Three distinct sequences of four; turn boundaries count ('call(k1)' + 'answer(1)' ≠ one turn 'call(k1)answer(1)').
    expect(m['episode/distinct_ratio']).toBe(3 / 4);
  });
});
