import { describe, expect, it } from 'vitest';
import { buildIterationMetrics, referenceStats, rewardTermKey, rewardTermStdKey, summarizeEpisode, type EpisodeSummary, type IterationMetricInputs } from './iterationMetrics.ts';
import { metricDecl } from './lookup.ts';

describe('metric keys', () => {
  /** Every input given, each part as a run would give it (a tool batch with a failure run, a critic, async, perf). */
  const everything: IterationMetricInputs = {
    episodes: [
      { reward: 1, terms: { outcome: 1 }, success: true, steps: 3, policyTokens: 10, truncated: false, toolCalls: 2, toolFailures: 1, toolFailureRuns: 1, toolRecoveries: 1 },
      { reward: 0, terms: { outcome: 0 }, success: false, steps: 5, policyTokens: 20, truncated: true, toolCalls: 1, toolFailures: 0 },
    ],
    advantages: { values: [1, -1], mask: [1, 1] },
    groups: { nGroups: 2, zeroStdGroups: 1, fracZeroStd: 0.5, rewardStdMean: 0.3 },
    actor: { pgLoss: -0.5, clipfracLow: 0.1, clipfracHigh: 0.2, approxKl: 0.01, klRef: 0.02, entropy: 1.2, gradNorm: 3, lr: 1e-3 },
    critic: { valueLoss: 0.2, values: [1, 2, 3], returns: [1, 2, 4] },
    staleness: { mean: 1, max: 2 },
    tis: { ratioMean: 1.5, ratioMax: 3, clipfrac: 0.25 },
    partialRatio: 0.5,
    mismatch: { absDiffMean: 1e-7, absDiffMax: 1e-6 },
    perf: { envStepsPerS: 100, tokensPerS: 1000, rolloutS: 1, trainS: 2, learnerIdleRatio: 0.1, rolloutIdleRatio: 0.2, kvCacheHitRate: 0.7 },
    extra: { groupsDropped: 2, samplingRounds: 2 },
  };

  it('every key written is a per-iteration key of the registry, and every share-unit value lies in [0, 1]', () => {
    const m = buildIterationMetrics(everything);
    // 4 reward + 2 term + 4 episode + 3 tools + 3 adv + 2 groups + 8 actor + 2 critic + 6 async + 2 mismatch + 7 perf + 2 extras.
    expect(Object.keys(m)).toHaveLength(45);
    for (const [k, v] of Object.entries(m)) {
      const d = metricDecl(k);
      expect(d, `${k} is not in metrics/registry.ts`).toBeDefined();
      expect(d!.stream ?? 'iteration', k).toBe('iteration');
      if (d!.unit === 'share') expect(v! >= 0 && v! <= 1, `${k} = ${v} is declared a share`).toBe(true);
    }
    expect(metricDecl(rewardTermKey('format'))?.key).toBe('reward/format/mean');
    expect(metricDecl(rewardTermStdKey('myTerm'))?.key).toBe('reward/<term>/std');
  });
});

describe('buildIterationMetrics', () => {
  const ep = (reward: number, success: boolean, steps: number, policyTokens: number, truncated: boolean, toolCalls: number, toolFailures: number, terms: Record<string, number>): EpisodeSummary =>
    ({ reward, success, steps, policyTokens, truncated, toolCalls, toolFailures, terms });
  const episodes = [
    ep(1, true, 3, 10, false, 2, 1, { outcome: 1, length: 0 }),
    ep(0, false, 5, 20, true, 0, 0, { outcome: 0, length: 0 }),
    ep(0.5, true, 4, 30, false, 1, 0, { outcome: 1, length: -0.5 }),
  ];

  it('episode, advantage, group, actor, critic and async keys from hand-worked inputs', () => {
    const m = buildIterationMetrics({
      episodes,
      advantages: { values: [1, -1, 2, 99], mask: [1, 1, 1, 0] },
      groups: { nGroups: 4, zeroStdGroups: 1, fracZeroStd: 0.25, rewardStdMean: 0.3 },
      actor: { pgLoss: -0.5, clipfracLow: 0.1, clipfracHigh: 0.2, approxKl: 0.01, klRef: NaN, entropy: 1.2, gradNorm: 3, lr: 1e-3 },
      critic: { valueLoss: 0.2, values: [1, 2, 3], returns: [1, 2, 4] },
      staleness: { mean: 1.25, max: 3 },
      tis: { ratioMean: 1.5, ratioMax: 3, clipfrac: 0.25 },
      perf: { tokensPerS: 1000 },
      extra: { groupsDropped: 2 },
    });
    // Rewards [1, 0, 0.5]: mean 0.5; deviations ±0.5, 0 -> sample var 0.5/2 = 0.25, std 0.5.
    expect(m['reward/mean']).toBe(0.5);
    expect(m['reward/std']).toBeCloseTo(0.5, 12);
    expect([m['reward/min'], m['reward/max']]).toEqual([0, 1]);
    // Terms: outcome (1 + 0 + 1)/3, length −0.5/3.
    expect(m['reward/outcome/mean']).toBeCloseTo(2 / 3, 12);
    expect(m['reward/length/mean']).toBeCloseTo(-1 / 6, 12);
    // Per-term sample std: outcome [1, 0, 1] (mean 2/3, Σ dev² = 2/3, /2 → 1/3); length [0, 0, −0.5] (mean −1/6, Σ dev² = 1/6, /2 → 1/12).
    expect(m['reward/outcome/std']).toBeCloseTo(Math.sqrt(1 / 3), 12);
    expect(m['reward/length/std']).toBeCloseTo(Math.sqrt(1 / 12), 12);
    expect(m['episode/success_rate']).toBeCloseTo(2 / 3, 12);
    expect(m['episode/length_mean']).toBe(20); // tokens (10 + 20 + 30)/3
    expect(m['episode/turns_mean']).toBe(4); // steps (3 + 5 + 4)/3
    expect(m['episode/truncated_ratio']).toBeCloseTo(1 / 3, 12);
    expect(m['tools/call_frequency']).toBe(1); // 3 calls / 3 episodes
    expect(m['tools/failure_frequency']).toBeCloseTo(1 / 3, 12); // 1 failed of 3 calls
    // Advantages over the 3 policy tokens [1, −1, 2]: mean 2/3; deviations 1/3, −5/3, 4/3 ->
    // squares 42/9, sample var 21/9, std √(7/3) = 1.5275252; |a| mean 4/3.
    expect(m['adv/mean']).toBeCloseTo(2 / 3, 12);
    expect(m['adv/std']).toBeCloseTo(1.5275252, 7);
    expect(m['adv/abs_mean']).toBeCloseTo(4 / 3, 12);
    expect(m['groups/frac_zero_std']).toBe(0.25);
    expect(m['actor/entropy']).toBe(1.2);
    expect(m['actor/grad_norm']).toBe(3);
    expect('actor/kl_ref' in m).toBe(false); // no reference policy: key absent, not NaN
    expect(m['critic/explained_variance']).toBeCloseTo(6 / 7, 12);
    expect(m['async/staleness_max']).toBe(3);
    expect(m['async/is_clipfrac']).toBe(0.25);
    expect(m['perf/tokens_per_s']).toBe(1000);
    expect(m['groups/dropped']).toBe(2);
    expect('async/partial_ratio' in m).toBe(false);
  });

  it('only the keys whose inputs were given', () => {
    expect(buildIterationMetrics({})).toEqual({});
    expect(Object.keys(buildIterationMetrics({ groups: { nGroups: 1, zeroStdGroups: 0, fracZeroStd: 0, rewardStdMean: 1 } }))).toEqual([
      'groups/frac_zero_std',
      'groups/reward_std_mean',
    ]);
  });

  it('summarizeEpisode counts tool calls and failures and reads success from the last step', () => {
    const s = summarizeEpisode({
      rewards: [0, 0, 1],
      infos: [{ toolCall: 'calc' }, { toolCall: 'lookup', toolFailed: true }, { success: true }],
      terminated: true,
      truncated: false,
      policyTokens: 12,
    });
    expect(s).toEqual({
      reward: 1, terms: undefined, success: true, steps: 3, policyTokens: 12, truncated: false,
      toolCalls: 2, toolFailures: 1, toolFailureRuns: 1, toolRecoveries: 0,
    });
  });

  it('tools/recovery_rate: recoveries over failure runs, by hand', () => {
    // Episode A (flaky-api style): fail, fail, ok (recovered), fail, malformed, ok (recovered), answer.
    // Two failure runs (the malformed turn neither ends nor extends the second), two recoveries.
    const a = summarizeEpisode({
      rewards: [0, 0, 0, 0, 0, 0, 1],
      infos: [
        { toolCall: 'call', toolFailed: true },
        { toolCall: 'retry', toolFailed: true },
        { toolCall: 'retry', toolFailed: false, recovered: true },
        { toolCall: 'call', toolFailed: true },
        { malformed: true },
        { toolCall: 'retry', toolFailed: false, recovered: true },
        { success: true },
      ],
      terminated: true,
      truncated: false,
      policyTokens: 30,
    });
    expect([a.toolFailures, a.toolFailureRuns, a.toolRecoveries]).toEqual([3, 2, 2]);
    // Episode B: one failure, then the agent answers without trying again: a run not recovered.
    const b = summarizeEpisode({
      rewards: [0, 0],
      infos: [{ toolCall: 'call', toolFailed: true }, { success: false }],
      terminated: true,
      truncated: false,
      policyTokens: 8,
    });
    expect([b.toolFailures, b.toolFailureRuns, b.toolRecoveries]).toEqual([1, 1, 0]);
    // Over the batch: 2 recoveries / 3 failure runs.
    expect(buildIterationMetrics({ episodes: [a, b] })['tools/recovery_rate']).toBeCloseTo(2 / 3, 12);
    // No failures: the rate is undefined, so the key is absent.
    const c = summarizeEpisode({ rewards: [0, 1], infos: [{ toolCall: 'call', toolFailed: false }, { success: true }], terminated: true, truncated: false, policyTokens: 5 });
    expect('tools/recovery_rate' in buildIterationMetrics({ episodes: [c] })).toBe(false);
  });
});

describe('referenceStats (KL-as-reward and distillation)', () => {
  it('hand-worked: k3 per step and the reference probability of the action taken', () => {
    // Step 1: π(a) = 0.5, π_ref(a) = 0.25 → ρ = π_ref/π = 0.5, k3 = ρ − 1 − ln ρ = 0.5 − 1 + ln 2 = 0.193147…
    // Step 2: π(a) = π_ref(a) = 0.8 → k3 = 0.
    const r = referenceStats([Math.log(0.5), Math.log(0.8)], Float32Array.from([Math.log(0.25), Math.log(0.8)]));
    expect(r.klRef).toBeCloseTo((0.5 - 1 + Math.log(2)) / 2, 6);
    expect(r.refProb).toBeCloseTo((0.25 + 0.8) / 2, 6);
  });

  it('no steps: NaN, not 0 (nothing was measured); unequal lengths throw', () => {
    expect(referenceStats([], [])).toEqual({ klRef: NaN, refProb: NaN });
    expect(() => referenceStats([0], [])).toThrow(/1 log-probs but 0 reference/);
  });
});
