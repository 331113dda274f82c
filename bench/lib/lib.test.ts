import { describe, expect, it } from 'vitest';
import { parseArgs } from './args.ts';
import { interleave } from './interleave.ts';
import { pairedFlips, quantile, summarize } from './stats.ts';
import { computeRatios } from '../train-step/suite.ts';

describe('stats', () => {
  it('quantile interpolates between order statistics like numpy', () => {
    // numpy.quantile([1, 2, 3, 4, 10], [0.1, 0.5, 0.9]) = [1.4, 3, 7.6]
    const xs = [10, 1, 3, 2, 4];
    expect(quantile(xs, 0.1)).toBeCloseTo(1.4, 12);
    expect(quantile(xs, 0.5)).toBe(3);
    expect(quantile(xs, 0.9)).toBeCloseTo(7.6, 12);
    expect(summarize([5]).ms).toBe(5);
    expect(() => quantile([], 0.5)).toThrow(RangeError);
  });
});

describe('pairedFlips', () => {
  it('counts changed items and gives the exact two-sided sign-test p', () => {
    const T = true;
    const F = false;
    // 5 fixed, 0 broken: p = 2 · (1/2)^5 = 0.0625; the unchanged items carry no evidence.
    const r = pairedFlips([F, F, F, F, F, T, F], [T, T, T, T, T, T, F]);
    expect(r).toEqual({ fixed: 5, broken: 0, p: 0.0625 });
    // 2 fixed, 1 broken: p = 2 · (C(3,0) + C(3,1)) / 8 = 1.
    expect(pairedFlips([F, F, T], [T, T, F]).p).toBe(1);
    // 27 fixed, 3 broken: 2 · (1 + 30 + 435 + 4060) / 2^30 ≈ 8.43e-6.
    const big = pairedFlips([...Array(27).fill(F), ...Array(3).fill(T)], [...Array(27).fill(T), ...Array(3).fill(F)]);
    expect(big.p).toBeCloseTo((2 * (1 + 30 + 435 + 4060)) / 2 ** 30, 12);
    expect(pairedFlips([T, F], [T, F])).toEqual({ fixed: 0, broken: 0, p: 1 });
    expect(() => pairedFlips([T], [T, F])).toThrow(RangeError);
  });
});

describe('interleave', () => {
  it('runs each contender once per round, rotating who goes first, and drops warmup', async () => {
    const order: string[] = [];
    const mk = (key: string) => ({ key, run: async () => void order.push(key) });
    const samples = await interleave([mk('a'), mk('b'), mk('c')], { warmup: 1, rounds: 3 });
    expect(order.join('')).toBe('abc' + 'bca' + 'cab' + 'abc');
    expect([...samples.values()].map((s) => s.length)).toEqual([3, 3, 3]);
  });
});

describe('ratios', () => {
  it('compares medians against the targets, pairs rounds, and marks missing sides n/a', () => {
    // Round 2 is slow for everyone (background load): the paired ratio ignores it.
    const r = computeRatios({
      'ort-web-wasm': [2, 20, 2],
      'tfjs-wasm': [7, 70, 6],
      'jax-js-wasm': [2.2, 22, 2.2],
      'ort-node': [0.9, 9, 1],
    });
    expect(r['tfjs/ours']).toEqual({ value: 3.5, paired: 3.5, target: '>=3', pass: true });
    expect(r['jax/ours']).toEqual({ value: 1.1, paired: 1.1, target: '>=1.2', pass: false });
    // medians 2 / 1 = 2 (passes <= 2); per round 2/0.9, 20/9, 2/1 -> median 2.22
    expect(r['ours/ortnode']).toEqual({ value: 2, paired: 2.22, target: '<=2', pass: true });
    expect(computeRatios({ 'tfjs-wasm': [1] })['tfjs/ours']).toEqual({ value: null, paired: null, target: '>=3', pass: null });
  });
});

describe('parseArgs', () => {
  it('separates suites, switches and valued flags', () => {
    const a = parseArgs(['train-step', '--json', '--models', 'mlp-76k', '--rounds=5', '--quick', '--dry']);
    expect(a).toEqual({ suites: ['train-step'], json: true, quick: true, help: false, flags: { models: 'mlp-76k', rounds: '5', dry: true } });
    expect(parseArgs([]).suites).toEqual([]);
  });
});

describe('soak floorSlope', () => {
  it('reads the rise of the floor, not the spikes above it', async () => {
    const { floorSlope } = await import('../soak/suite.ts');
    // Floor rising 2 per step with spikes: halves [0,2,104,6] and [8,110,12,14] → (8 − 0) / 4.
    expect(floorSlope([0, 2, 104, 6, 8, 110, 12, 14])).toBe(2);
    expect(floorSlope([5, 900, 5, 700, 5, 5])).toBe(0);
    expect(floorSlope([1])).toBe(0);
  });
});
