/**
 * The agentic bench's behaviour metric on held-out episodes is the registry's definition, counted
 * by hand here on scripted flaky-api episodes; and its summary averages seeds.
 */
import { describe, expect, it } from 'vitest';
import { makeFlakyApi } from '../../src/core/envs/tools/flakyApi.ts';
import { makeKvLookup } from '../../src/core/envs/tools/kvLookup.ts';
import type { TokenEpisode } from '../../src/core/rollout/tokenEpisode.ts';
import { behaviourOf, summarize, type AgenticRow } from './suite.ts';

/** Plays `policy` (observation → action) on `env` (flaky-api unless given) from `seed`; the episode as behaviourOf reads it. */
function play(seed: number, policy: (obs: string) => string, env: ReturnType<typeof makeFlakyApi | typeof makeKvLookup> = makeFlakyApi({ failureProb: 0.5, keys: 3, maxTurns: 6 })): TokenEpisode {
  let obs = env.reset({ seed }).obs.text;
  const infos = [];
  const rewards = [];
  for (;;) {
    const r = env.step(policy(obs));
    infos.push(r.info);
    rewards.push(r.reward);
    obs = r.obs.text;
    if (r.terminated || r.truncated) {
      return { infos, rewards: Float64Array.from(rewards), terminated: r.terminated, truncated: r.truncated, lossMask: new Uint8Array(0), success: r.info.success === true } as unknown as TokenEpisode;
    }
  }
}

/** Calls the asked key until it answers, then copies the value (retries every failure). */
const retrier = (obs: string) => {
  const task = /stored under (k\d+)/.exec(obs);
  if (task) return `call(${task[1]})`;
  const got = /= (\d+)/.exec(obs);
  return got ? `answer(${got[1]})` : 'retry()';
};
/** Calls once; after a failure it answers a guess (never recovers). */
const quitter = (obs: string) => (obs.startsWith('task') ? retrier(obs) : obs.startsWith('result') ? retrier(obs) : 'answer(1000)');

describe('agentic bench: behaviour metrics', () => {
  it('recovery rate: failure runs ended by a successful call, over failure runs (not over failed calls)', () => {
    const seeds = Array.from({ length: 200 }, (_, i) => i);
    const eps = seeds.map((s) => play(s, retrier));
    // Hand count: a failure run is a failed call whose previous call succeeded (or that came first).
    let runs = 0;
    let recovered = 0;
    let failures = 0;
    for (const e of eps) {
      let prev = false;
      for (const info of e.infos) {
        if (info.toolFailed === undefined) continue;
        if (info.toolFailed) failures++;
        if (info.toolFailed && !prev) runs++;
        if (!info.toolFailed && prev) recovered++;
        prev = info.toolFailed;
      }
    }
    // failureProb 0.5 over 6 turns: some runs of 2+ failures, and a few that never end (turns out).
    expect(failures).toBeGreaterThan(runs);
    expect(recovered).toBeLessThan(runs);
    expect(behaviourOf(eps, 'tools/recovery_rate')).toBeCloseTo(recovered / runs, 3);
    // A policy that never retries recovers from nothing.
    expect(behaviourOf(seeds.map((s) => play(s, quitter)), 'tools/recovery_rate')).toBe(0);
    // Calls per episode: every call and retry that reached the service (answers are not calls).
    expect(behaviourOf(eps, 'tools/call_frequency')).toBeCloseTo((failures + recovered + eps.filter((e) => e.infos[0].toolFailed === false).length) / eps.length, 3);
    // Undefined where nothing failed: no runs to recover from.
    expect(behaviourOf(eps.filter((e) => !e.infos.some((i) => i.toolFailed)), 'tools/recovery_rate')).toBeNull();
  });

  it("kv-gather-discovery's metric: lookups per episode, 1 for the hasty demonstrator and 2 for the chain (answers are not calls)", () => {
    // The preset's training env; the expert plays it, hasty (always guesses) or following the chain.
    const kwargs = { hops: 2, teams: 3, maxTurns: 4, distractors: true, latencyMedianMs: 0, latencySigma: 0 };
    const seeds = Array.from({ length: 50 }, (_, i) => i);
    const expertOf = (guess: number) => seeds.map((s) => {
      const env = makeKvLookup({ ...kwargs, expertGuessProb: guess });
      return play(s, () => env.expertAction()!, env);
    });
    const hasty = expertOf(1);
    const chain = expertOf(0);
    // Hand count: the hasty expert looks up the team, then answers its home city (never the
    // manager's): 1 call, always wrong. The chain: team, manager, answer: 2 calls, always right.
    // Counting answer() as a call would give 2 and 3.
    expect(behaviourOf(hasty, 'tools/call_frequency')).toBe(1);
    expect(hasty.filter((e) => e.success)).toHaveLength(0);
    expect(behaviourOf(chain, 'tools/call_frequency')).toBe(2);
    expect(chain.every((e) => e.success)).toBe(true);
  });

  it('summarize: means over seeds, gains after RL − warm start', () => {
    const row = (seed: number, w: number, a: number): AgenticRow => ({
      preset: 'p',
      seed,
      metric: 'tools/recovery_rate',
      warm_start: { greedy: w, sampled: w / 2, behaviour_greedy: null, behaviour_sampled: 0 },
      after_rl: { greedy: a, sampled: a, behaviour_greedy: null, behaviour_sampled: 1 },
      iterations: 3,
      warm_s: 10,
      rl_s: 20 + seed,
      curve: [],
    });
    const [s] = summarize([row(1, 0.5, 0.9), row(2, 0.3, 1)]);
    expect(s).toMatchObject({ preset: 'p', seeds: 2, gain_greedy: 0.55, gain_sampled: 0.75, rl_s: 21.5 });
    expect(s.warm_start).toEqual({ greedy: 0.4, sampled: 0.2, behaviour_sampled: 0 });
  });
});
