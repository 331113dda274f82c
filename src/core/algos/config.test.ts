import { describe, expect, it } from 'vitest';
import { DEFAULT_ALGO_CONFIG, defaultsFor, parseAlgoConfig } from './config.ts';
import { ALGOS, sequenceAdvantages } from './registry/index.ts';
import { trainStepOptions } from '../update/hyper.ts';

const messages = (x: unknown): string[] => {
  const r = parseAlgoConfig(x);
  if (r.ok) throw new Error(`expected a rejection of ${JSON.stringify(x)}`);
  return r.messages;
};

describe('algorithm config', () => {
  it('an empty object gives the GRPO defaults', () => {
    const r = parseAlgoConfig({});
    expect(r.ok && r.config).toEqual(DEFAULT_ALGO_CONFIG);
  });

  it('algorithm-dependent defaults: drgrpo -> no std, constant aggregation; gspo -> sequence aggregation; ppo -> 4 epochs', () => {
    const d = parseAlgoConfig({ algo: 'drgrpo' });
    expect(d.ok && [d.config.normalizeStd, d.config.aggregation]).toEqual([false, 'constant']);
    // GSPO's objective (1/G) Σ_i min(s_i·Â_i, clip(s_i)·Â_i) weighs each sequence alike.
    const g = parseAlgoConfig({ algo: 'gspo' });
    expect(g.ok && [g.config.normalizeStd, g.config.aggregation]).toEqual([true, 'sequence']);
    expect(g.ok && g.config).toEqual(defaultsFor('gspo'));
    const gt = parseAlgoConfig({ algo: 'gspo', aggregation: 'token' });
    expect(gt.ok && gt.config.aggregation).toBe('token');
    const p = parseAlgoConfig({ algo: 'ppo', gamma: 0.9 });
    expect(p.ok && [p.config.updateEpochs, p.config.normalizeStd, p.config.gamma]).toEqual([4, false, 0.9]);
    expect(p.ok && p.config).toEqual({ ...defaultsFor('ppo'), gamma: 0.9 });
  });

  it('cispo: a group algorithm with GRPO-normalised advantages by default, and the clipped surrogate swapped for CISPO', () => {
    const c = parseAlgoConfig({ algo: 'cispo' });
    expect(c.ok && [c.config.normalizeStd, c.config.aggregation, c.config.updateEpochs]).toEqual([true, 'token', 1]);
    expect(parseAlgoConfig({ algo: 'cispo', groupSize: 1 }).ok).toBe(false);
    // Group [1, 0, 0, 1]: mean ½, sample std √(1/3); GRPO and CISPO give the same advantages.
    const r = [1, 0, 0, 1];
    const cispo = sequenceAdvantages({ ...defaultsFor('cispo'), groupSize: 4 }, r).advantages;
    expect(Array.from(cispo)).toEqual(Array.from(sequenceAdvantages({ ...defaultsFor('grpo'), groupSize: 4 }, r).advantages));
    expect(cispo[0]).toBeCloseTo(0.5 / Math.sqrt(1 / 3), 5);
    expect(trainStepOptions(defaultsFor('cispo'), 8).loss).toMatchObject({ objective: 'cispo' });
    expect(trainStepOptions(defaultsFor('grpo'), 8).loss).toMatchObject({ objective: 'clip' });
  });

  it('names the bad field, the rule and the value given', () => {
    expect(messages({ clipHigh: -0.1 })).toEqual(['clipHigh: must be > 0 (got -0.1)']);
    expect(messages({ gamma: 'x' })).toEqual(['gamma: must be a number (got "x")']);
    expect(messages({ gamma: 1.5 })).toEqual(['gamma: must be in [0, 1] (got 1.5)']);
    expect(messages({ algo: 'remax', dynamicSampling: { enabled: true } })[0]).toMatch(/^dynamicSampling\.enabled: ReMax's baseline is one greedy episode per group/);
    // The registered names, in registry order (registry.test.ts checks that list by hand).
    expect(messages({ algo: 'ppo2' })).toEqual([`algo: must be one of ${ALGOS.map((a) => `'${a}'`).join(', ')} (got "ppo2")`]);
    expect(messages({ dynamicSampling: { maxRounds: 2.5 } })).toEqual(['dynamicSampling.maxRounds: must be an integer (got 2.5)']);
    expect(messages({ tis: { cap: 0.5 } })[0]).toMatch(/^tis\.cap: must be ≥ 1 .*\(got 0\.5\)$/);
    expect(messages({ klEstimator: 'k2' })[0]).toMatch(/^klEstimator: must be one of 'k1', 'k3'/);
    expect(messages(5)).toEqual(['config must be a JSON object (got 5)']);
  });

  it('reports every problem at once, unknown fields included', () => {
    const m = messages({ lr: 0, clipLo: 0.1, dynamicSampling: { enable: true } });
    expect(m).toHaveLength(3);
    expect(m).toContain('lr: must be > 0 (got 0)');
    expect(m.some((x) => x.startsWith('clipLo: unknown field'))).toBe(true);
    expect(m.some((x) => x.startsWith('dynamicSampling.enable: unknown field'))).toBe(true);
  });

  it('cross-field rules', () => {
    expect(messages({ algo: 'rloo', groupSize: 1 })[0]).toMatch(/^groupSize: must be ≥ 2 for rloo \(a leave-one-out/);
    expect(messages({ algo: 'grpo', groupSize: 1 })[0]).toMatch(/^groupSize: must be ≥ 2 for grpo/);
    expect(messages({ algo: 'drgrpo', normalizeStd: true })[0]).toMatch(/^normalizeStd: Dr\.GRPO does not divide/);
    expect(messages({ algo: 'drgrpo', aggregation: 'sequence' })[0]).toMatch(/^aggregation: Dr\.GRPO removes/);
    expect(messages({ algo: 'ppo', dynamicSampling: { enabled: true } })[0]).toMatch(/^dynamicSampling\.enabled: needs a group algorithm/);
    // A single-episode REINFORCE "group" is fine.
    expect(parseAlgoConfig({ algo: 'reinforce', groupSize: 1 }).ok).toBe(true);
  });

  it('null disables optional limits', () => {
    const r = parseAlgoConfig({ maxGradNorm: null, valueClip: null, aggregationLen: 64 });
    expect(r.ok && [r.config.maxGradNorm, r.config.valueClip, r.config.aggregationLen]).toEqual([null, null, 64]);
  });

  it('refuses knobs the train graph would silently ignore', () => {
    expect(parseAlgoConfig({ algo: 'ppo', valueClip: 0.2 }).ok).toBe(true);
    const k1 = parseAlgoConfig({ klCoef: 0.01, klMode: 'loss', klEstimator: 'k1' });
    expect(k1.ok).toBe(false);
    if (!k1.ok) expect(k1.messages.join('\n')).toMatch(/^klEstimator: k1 as a loss term/m);
    expect(parseAlgoConfig({ klCoef: 0.01, klMode: 'reward', klEstimator: 'k1' }).ok).toBe(true);
  });
});
