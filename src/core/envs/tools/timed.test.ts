import { describe, expect, it } from 'vitest';
import { RealClock, VirtualClock } from '../clock.ts';
import { makeFlakyApi } from './flakyApi.ts';
import { makeCalculator } from './calculator.ts';
import { stepTimed } from './timed.ts';
import type { ToolEnv } from '../types.ts';

/** Plays the expert through `stepTimed`; returns each step's latency and the clock at each step's end. */
async function playTimed(env: ToolEnv, seed: number, clock: VirtualClock): Promise<{ latencies: number[]; endTimes: number[] }> {
  env.reset({ seed });
  const latencies: number[] = [];
  const endTimes: number[] = [];
  for (let a = env.expertAction(); a !== null; a = env.expertAction()) {
    const r = await stepTimed(env, a, clock);
    latencies.push(r.info.latencyMs ?? 0);
    endTimes.push(clock.now());
  }
  return { latencies, endTimes };
}

describe('stepTimed', () => {
  it('runs long-tailed flaky-api episodes in virtual time: elapsed = sum of latencies, no real waiting', async () => {
    const clock = new VirtualClock(true);
    const env = makeFlakyApi(); // median 20 ms, sigma 1.7: p99 about 1 s
    const t0 = performance.now();
    let sum = 0;
    let max = 0;
    let calls = 0;
    for (let seed = 0; seed < 300; seed++) {
      const { latencies } = await playTimed(env, seed, clock);
      for (const l of latencies) {
        sum += l;
        max = Math.max(max, l);
        if (l > 0) calls++;
      }
    }
    const realMs = performance.now() - t0;
    expect(clock.now()).toBe(sum); // same additions in the same order: exact
    expect(calls).toBeGreaterThan(300);
    expect(max).toBeGreaterThan(1000); // the tail is there: over ~430 calls, some beyond p99
    expect(clock.now()).toBeGreaterThan(10_000); // tens of seconds of simulated waiting ...
    expect(realMs).toBeLessThan(1_000); // ... in well under a second of real time
  });

  it('interleaves concurrent episodes on one virtual clock in time order', async () => {
    const clock = new VirtualClock();
    const seeds = [1, 2, 3, 4];
    const log: { seed: number; at: number }[] = [];
    let finished = 0;
    const runs = seeds.map(async (seed) => {
      try {
        const env = makeFlakyApi();
        env.reset({ seed });
        let own = 0;
        for (let a = env.expertAction(); a !== null; a = env.expertAction()) {
          const r = await stepTimed(env, a, clock);
          own += r.info.latencyMs ?? 0;
          // Each episode's steps end at its own running sum of latencies, whatever the others do.
          expect(clock.now()).toBeCloseTo(own, 9);
          log.push({ seed, at: clock.now() });
        }
        return own;
      } finally {
        finished++;
      }
    });
    // Drive virtual time until every episode is done (sleeps are registered asynchronously).
    for (let rounds = 0; finished < seeds.length && rounds < 1000; rounds++) {
      await clock.runUntilIdle();
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
    const totals = await Promise.all(runs);
    expect(clock.now()).toBeCloseTo(Math.max(...totals), 9);
    const times = log.map((e) => e.at);
    expect(times).toEqual([...times].sort((x, y) => x - y));
    expect(new Set(log.map((e) => e.seed)).size).toBe(seeds.length);
  });

  it('waits the reported latency on a real clock', async () => {
    const env = makeCalculator({ latencyMedianMs: 15, latencySigma: 0 });
    env.reset({ seed: 0 });
    const clock = new RealClock();
    const t0 = clock.now();
    const r = await stepTimed(env, env.expertAction()!, clock);
    expect(r.info.latencyMs).toBe(15);
    expect(clock.now() - t0).toBeGreaterThanOrEqual(14); // timers may fire up to 1 ms early
  });
});
