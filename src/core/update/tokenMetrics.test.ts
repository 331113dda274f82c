/**
 * The token trainers' metrics report tool recovery from the episodes' infos: two flaky-api
 * episodes played by hand go through tokenIterationMetrics (the function both token trainers call).
 */
import { describe, expect, it } from 'vitest';
import { makeFlakyApi } from '../envs/tools/flakyApi.ts';
import type { Info } from '../envs/types.ts';
import type { TokenEpisode } from '../rollout/tokenEpisode.ts';
import { tokenIterationMetrics } from './tokenMetrics.ts';

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

describe('tokenIterationMetrics', () => {
  it('reports tools/recovery_rate beside the tool call metrics', () => {
    // Every call fails (p = 1): one failure run, never recovered. Then p = 0: a missing key
    // (a failed call) and a successful call after it: one run, recovered.
    const a = episode(['call(k1)', 'retry()', 'answer(1)'], 1, 1);
    const b = episode(['call(k99)', 'call(k1)'], 2, 0);
    expect(b.infos.map((i) => i.recovered)).toEqual([undefined, true]);
    const m = tokenIterationMetrics({
      sampled: [a, b],
      sampledShaped: [a, b].map((e) => ({ total: e.rewards.reduce((s, x) => s + x, 0), terms: {}, raw: {}, perStep: e.rewards }) as never),
      episodes: [],
      mask: [],
      adv: { tokAdv: new Float32Array(0), tokRet: null, tokVal: null } as never,
      learner: {},
      lr: 1e-4,
      updates: 0,
      version: 0,
    });
    expect(m['tools/call_frequency']).toBe(2); // 4 calls / 2 episodes
    expect(m['tools/failure_frequency']).toBe(3 / 4);
    expect(m['tools/recovery_rate']).toBe(1 / 2);
  });

  it('episode/distinct_ratio: distinct action texts over the sampled episodes (what the tab and the CLI both log)', () => {
    const eps = [episode(['call(k1)', 'answer(1)'], 1, 0), episode(['call(k1)', 'answer(1)'], 2, 0), episode(['call(k2)'], 3, 0), episode(['call(k1)answer(1)'], 4, 0)];
    const m = tokenIterationMetrics({
      sampled: eps,
      sampledShaped: eps.map((e) => ({ total: 0, terms: {}, raw: {}, perStep: e.rewards }) as never),
      episodes: [],
      mask: [],
      adv: { tokAdv: new Float32Array(0), tokRet: null, tokVal: null } as never,
      learner: {},
      lr: 1e-4,
      updates: 0,
      version: 0,
    });
    // Three distinct sequences of four; turn boundaries count ('call(k1)' + 'answer(1)' ≠ one turn 'call(k1)answer(1)').
    expect((m as Record<string, number>)['episode/distinct_ratio']).toBe(3 / 4);
  });
});
