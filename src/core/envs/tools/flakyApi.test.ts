import { describe, expect, it } from 'vitest';
import { makeFlakyApi } from './flakyApi.ts';

/** Empirical quantile (linear interpolation between order statistics). */
function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  const pos = (s.length - 1) * q;
  const lo = Math.floor(pos);
  return s[lo] + (s[Math.min(lo + 1, s.length - 1)] - s[lo]) * (pos - lo);
}

/** Makes `n` service calls (`call(k0)`, 99 per episode) and returns what each step reported. */
function sampleCalls(kwargs: Record<string, unknown>, n: number): { failed: boolean[]; latency: number[] } {
  const env = makeFlakyApi({ maxTurns: 100, ...kwargs });
  const failed: boolean[] = [];
  const latency: number[] = [];
  for (let seed = 0; failed.length < n; seed++) {
    env.reset({ seed });
    for (let t = 0; t < 99 && failed.length < n; t++) {
      const r = env.step('call(k0)');
      failed.push(r.info.toolFailed === true);
      latency.push(r.info.latencyMs!);
    }
  }
  return { failed, latency };
}

describe('tools/flaky-api', () => {
  it('fails at rate p', () => {
    const n = 20_000;
    for (const p of [0.3, 0.05, 0.8]) {
      const { failed } = sampleCalls({ failureProb: p }, n);
      const rate = failed.filter(Boolean).length / n;
      // 4 standard errors: sqrt(p(1-p)/n) <= 0.0035 here.
      expect(Math.abs(rate - p)).toBeLessThan(4 * Math.sqrt((p * (1 - p)) / n));
    }
    expect(sampleCalls({ failureProb: 0 }, 500).failed.some(Boolean)).toBe(false);
    expect(sampleCalls({ failureProb: 1 }, 500).failed.every(Boolean)).toBe(true);
  });

  it('has log-normal latency: median 20 ms, p99 near 1 s (sigma 1.7)', () => {
    const { latency } = sampleCalls({}, 20_000);
    // Reference: p99 = median * exp(sigma * z_0.99) = 20 * exp(1.7 * 2.3263) = 1043 ms.
    const p99 = 20 * Math.exp(1.7 * 2.3263);
    expect(p99).toBeGreaterThan(1000);
    expect(p99).toBeLessThan(1100);
    expect(quantile(latency, 0.5)).toBeGreaterThan(19);
    expect(quantile(latency, 0.5)).toBeLessThan(21);
    expect(quantile(latency, 0.99)).toBeGreaterThan(0.85 * p99);
    expect(quantile(latency, 0.99)).toBeLessThan(1.15 * p99);
    // In log space: mean ln(20), standard deviation 1.7.
    const logs = latency.map(Math.log);
    const mean = logs.reduce((a, b) => a + b, 0) / logs.length;
    const sd = Math.sqrt(logs.reduce((a, b) => a + (b - mean) ** 2, 0) / logs.length);
    expect(Math.abs(mean - Math.log(20))).toBeLessThan(0.05);
    expect(Math.abs(sd - 1.7)).toBeLessThan(0.05);
    expect(Math.min(...latency)).toBeGreaterThan(0);
  });

  it('plays a hand-checked episode with retries (seed 1) and charges every call', () => {
    const env = makeFlakyApi();
    expect(env.reset({ seed: 1 }).obs.text).toBe(
      'task: fetch the value stored under k13 and answer with it. tools: call(key), retry(), answer(value). each call costs 0.05.',
    );
    const steps = [];
    for (let a = env.expertAction(); a !== null; a = env.expertAction()) steps.push({ a, ...env.step(a) });
    expect(steps.map((s) => [s.a, s.obs.text, s.reward])).toEqual([
      ['call(k13)', 'error: request timed out, try again', -0.05],
      ['retry()', 'error: 503 service unavailable, try again', -0.05],
      ['retry()', 'result: k13 = 6208', -0.05],
      ['answer(6208)', 'done: correct, 6208.', 1],
    ]);
    expect(steps.map((s) => s.info.toolCall)).toEqual(['call', 'retry', 'retry', undefined]);
    expect(steps.map((s) => s.info.toolFailed)).toEqual([true, true, false, undefined]);
    // The successful retry after two failures is the recovery (tools/recovery_rate counts it).
    expect(steps.map((s) => s.info.recovered)).toEqual([undefined, undefined, true, undefined]);
    // Progress: only the call that first shows the asked-for value.
    expect(steps.map((s) => s.info.progress)).toEqual([undefined, undefined, 1, undefined]);
    expect(steps.at(-1)!.info.success).toBe(true);
    expect(env.frame().messages.map((m) => m.role)).toEqual(['task', 'agent', 'error', 'agent', 'error', 'agent', 'tool', 'agent', 'result']);
  });

  it('retry() repeats the last call; without one it is a free error; malformed calls cost nothing', () => {
    const env = makeFlakyApi({ failureProb: 0 });
    env.reset({ seed: 2 });
    expect(env.step('retry()')).toMatchObject({
      reward: 0,
      obs: { text: 'error: nothing to retry yet; use call(key) first' },
      info: { toolCall: 'retry', toolFailed: true, malformed: false, latencyMs: 0 },
    });
    expect(env.step('retry(k1)')).toMatchObject({ reward: 0, info: { malformed: true }, obs: { text: 'error: retry takes no argument: write retry()' } });
    const first = env.step('call(k4)');
    expect(first.reward).toBe(-0.05);
    expect(first.obs.text).toMatch(/^result: k4 = \d{4}$/);
    expect(env.step('retry()')).toMatchObject({ reward: -0.05, obs: { text: first.obs.text } });
    expect(env.step('call(k20)')).toMatchObject({ reward: -0.05, obs: { text: 'error: no such key "k20"' }, info: { toolFailed: true } });
    expect(env.step('call()')).toMatchObject({ reward: 0, info: { malformed: true } });
  });

  it('marks a recovery only on a successful call right after a failed one; malformed turns do not break the run', () => {
    const env = makeFlakyApi({ failureProb: 0 });
    env.reset({ seed: 2 });
    const rec = (a: string) => env.step(a).info.recovered;
    expect(rec('call(k4)')).toBeUndefined(); // success, nothing failed before
    expect(rec('call(k20)')).toBeUndefined(); // no such key: a failed call
    expect(rec('call(')).toBeUndefined(); // malformed: not a call
    expect(rec('call(k4)')).toBe(true); // success after the failure
    expect(rec('call(k5)')).toBeUndefined(); // success after a success
  });

  it('scores a wrong value 0 and ends the episode', () => {
    const env = makeFlakyApi();
    env.reset({ seed: 1 });
    expect(env.step('answer(6209)')).toMatchObject({ reward: 0, terminated: true, info: { success: false }, obs: { text: 'done: wrong, the value is 6208.' } });
  });

  it('gives the k-th call of every rollout from one seed the same luck (common random numbers)', () => {
    const env = makeFlakyApi();
    const luck = (keys: string[]) => {
      env.reset({ seed: 5 });
      return keys.map((k) => {
        const r = env.step(k === 'junk' ? 'not a call' : `call(${k})`);
        return r.info.malformed ? 'skip' : `${/timed out|503|reset/.test(r.obs.text)}:${r.info.latencyMs}`;
      });
    };
    const a = luck(['k1', 'k2', 'k3', 'k4', 'k5', 'k6']);
    const b = luck(['k9', 'junk', 'k0', 'k7', 'k7', 'k8', 'k3']).filter((x) => x !== 'skip');
    expect(b).toEqual(a);
  });
});
