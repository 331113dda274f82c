/**
 * The rollout-correction phase on a hand-built batch: what the update trains on in decoupled and
 * bypass mode, rejected positions leaving the loss, and the on-policy case (π_old = μ: every
 * weight exactly 1).
 */
import { describe, expect, it } from 'vitest';
import { defaultsFor, parseAlgoConfig, type AlgoConfig } from '../algos/config.ts';
import { DEFAULT_ROLLOUT_CORRECTION, type RolloutCorrectionConfig } from '../algos/correction/config.ts';
import type { RolloutBatch } from './batch.ts';
import { correctBatch, rolloutCorrection } from './rolloutCorrection.ts';
import type { OffPolicy, PositionScorer } from './offPolicy.ts';

/** Two episodes of 3 and 2 steps; μ = log 0.5 everywhere. */
function batch(): RolloutBatch {
  const size = 5;
  return {
    n: 2, starts: Int32Array.from([0, 3]), lengths: Int32Array.from([3, 2]), size, mask: new Float32Array(size).fill(1),
    mu: new Float32Array(size).fill(Math.log(0.5)), versions: new Int32Array(size), values: new Float32Array(size), turnEnd: new Uint8Array(size),
    bootstrap: new Float64Array(2), terminated: Uint8Array.from([1, 1]), groups: Int32Array.from([0, 0]), horizon: 10,
    feed: { kind: 'rows', D: 1, obs: new Float32Array(size), actions: new Int32Array(size) },
  } as RolloutBatch;
}
const RHO = [2.5, 1, 0.5, 1.2, 0.8];
const b = batch();
const oldLogp = Float32Array.from(RHO, (r, i) => b.mu[i] + Math.log(r));
const off = { oldLogp: b.mu.slice(), advUsed: Float64Array.from([1, -1, 2, 0.5, -0.5]) };
const algo = (c: Partial<RolloutCorrectionConfig>): AlgoConfig => ({ ...defaultsFor('grpo'), rolloutCorrection: { ...DEFAULT_ROLLOUT_CORRECTION, ...c } });
/** The float32 ratio the phase actually sees (π_old is stored in float32). */
const rho32 = (i: number) => Math.exp(oldLogp[i] - b.mu[i]);

describe('correctBatch', () => {
  it('decoupled + token IS: π_old is the scored log-prob, each advantage × min(ρ, 2)', () => {
    const r = correctBatch(algo({ is: 'token' }), b, off, oldLogp);
    expect(Array.from(r.oldLogp)).toEqual(Array.from(oldLogp));
    const w = [2, rho32(1), rho32(2), rho32(3), rho32(4)];
    w.forEach((x, i) => expect(r.isWeights[i]).toBeCloseTo(x, 12));
    w.forEach((x, i) => expect(r.advUsed[i]).toBeCloseTo(off.advUsed[i] * x, 12));
    expect(Array.from(r.keep)).toEqual([1, 1, 1, 1, 1]);
  });
  it('bypass: π_old stays μ (the ratio π_θ/μ carries the correction), no IS weight', () => {
    const r = correctBatch(algo({ mode: 'bypass', rs: 'token_k1' }), b, off, oldLogp);
    expect(Array.from(r.oldLogp)).toEqual(Array.from(b.mu));
    expect(Array.from(r.isWeights)).toEqual([1, 1, 1, 1, 1]);
  });
  it('rejected positions leave the loss: advantage 0, aggregation weight 0, token weights 1/kept over the rest', () => {
    // token_k1 on [0.45, 2] (the default upper bound) drops only ρ = 2.5
    const r = correctBatch(algo({ is: 'sequence', rs: 'token_k1', rsLow: 0.45 }), b, off, oldLogp);
    expect(Array.from(r.keep)).toEqual([0, 1, 1, 1, 1]);
    expect(r.advUsed[0]).toBe(0);
    expect(Array.from(r.weights)).toEqual([0, 0.25, 0.25, 0.25, 0.25]);
    // sequence IS on the kept positions: episode 1 min(1.25, 2), episode 2 0.96
    expect(r.isWeights[1]).toBeCloseTo(1.25, 6);
    expect(r.isWeights[3]).toBeCloseTo(0.96, 6);
    expect(r.metrics['correction/rs_masked_fraction']).toBeCloseTo(0.2, 12);
  });
  it('M2PO and RS combine: a position stays only if both keep it', () => {
    const r = correctBatch(algo({ rs: 'token_k1', rsLow: 0.9, rsHigh: 2, m2po: 0.04 }), b, off, oldLogp);
    // token_k1 [0.9, 2] drops ρ 2.5 and 0.5 and 0.8; M2PO: (ln ρ)² = [0.8396, 0, 0.4805, 0.0332, 0.0498] → drops 2.5, 0.5
    expect(Array.from(r.keep)).toEqual([0, 1, 0, 1, 0]);
    expect(r.metrics['correction/second_moment_masked_fraction']).toBeCloseTo(0.4, 12);
  });
  it('on-policy (π_old = μ): every IS weight exactly 1, nothing rejected, ESS 1, χ² 0', () => {
    const r = correctBatch(algo({ is: 'token', rs: 'token_k1', rsHigh: 1.001, m2po: 1e-6 }), b, off, b.mu.slice());
    expect(Array.from(r.isWeights)).toEqual([1, 1, 1, 1, 1]);
    expect(Array.from(r.keep)).toEqual([1, 1, 1, 1, 1]);
    expect(Array.from(r.advUsed)).toEqual(Array.from(off.advUsed));
    expect(r.metrics['correction/is_ess']).toBe(1);
    expect(r.metrics['correction/chi_squared_token']).toBe(0);
  });
});

describe('rolloutCorrection (the phase)', () => {
  const scorer: PositionScorer = { logprobsAt: async () => oldLogp, setWeights: () => {}, release: async () => {} };
  it('off by default: null, nothing scored', async () => {
    expect(await rolloutCorrection(defaultsFor('grpo'), b, off as OffPolicy, null)).toBeNull();
  });
  it('scores π_old with the trainer\'s scorer; refuses a trainer without one, naming where it runs', async () => {
    const r = await rolloutCorrection(algo({ is: 'token' }), b, off as OffPolicy, scorer);
    expect(r!.metrics['correction/is_ratio_fraction_high']).toBeCloseTo(0.2, 12);
    await expect(rolloutCorrection(algo({ is: 'token' }), b, off as OffPolicy, 'learner')).rejects.toThrow(/grid MLP runs/);
  });
});

describe('algo.rolloutCorrection in the config schema', () => {
  const messages = (rc: unknown, extra: Record<string, unknown> = {}) => {
    const r = parseAlgoConfig({ algo: 'grpo', rolloutCorrection: rc, ...extra });
    return r.ok ? [] : r.messages;
  };
  it('defaults: everything off', () => {
    const r = parseAlgoConfig({ algo: 'grpo' });
    expect(r.ok && r.config.rolloutCorrection).toEqual(DEFAULT_ROLLOUT_CORRECTION);
  });
  it('names the modes the registry holds, the field and the value given', () => {
    expect(messages({ rs: 'seq_mean_k1' })[0]).toBe("rolloutCorrection.rs: must be one of 'off', 'token_k1', 'seq_sum_k1', 'seq_mean_k3' (got \"seq_mean_k1\")");
    expect(messages({ is: 'tok' })[0]).toMatch(/^rolloutCorrection\.is: must be one of 'off', 'token', 'sequence'/);
    expect(messages({ isCap: 0.5 })[0]).toMatch(/^rolloutCorrection\.isCap: must be ≥ 1/);
    expect(messages({ mismatch: 'fp4' })[0]).toMatch(/^rolloutCorrection\.mismatch: must be one of 'off', 'fp16', 'bf16', 'fp8'/);
  });
  it('cross-field rules: bypass with an IS mode, a lower bound on a divergence, bounds without RS, TIS twice', () => {
    expect(messages({ mode: 'bypass', is: 'token' })[0]).toMatch(/^rolloutCorrection\.is: bypass mode trains on the ratio π_θ\/μ/);
    expect(messages({ rs: 'seq_mean_k3', rsLow: 0.5 })[0]).toMatch(/^rolloutCorrection\.rsLow: 'seq_mean_k3' bounds a divergence from above only/);
    expect(messages({ rs: 'token_k1', rsHigh: 0.9 })[0]).toMatch(/^rolloutCorrection\.rsHigh: must be > 1 for 'token_k1'/);
    expect(messages({ rsHigh: 2 })[0]).toMatch(/^rolloutCorrection\.rsHigh: bounds rejection sampling, which is off/);
    expect(messages({ is: 'token' }, { tis: { enabled: true } })[0]).toMatch(/^tis\.enabled: rolloutCorrection\.is 'token' weights every position/);
  });
});
