/**
 * Live reward weights (LiveHyper.rewardWeights), end to end through real trainers on ort-web WASM
 * in Node. Reference: a twin trainer with the same seed that never got the edit. Both play and
 * train iteration 0 identically, so iteration 1 samples the same episodes (same weights, same
 * sampling seeds), and a term's contribution (weight × raw) must scale by exactly new/old weight.
 */
import { describe, expect, it } from 'vitest';
import { defaultsFor } from '../../core/algos/config.ts';
import '../../core/envs/index.ts';
import { DEFAULT_SHAPING } from '../../core/reward/shaping.ts';
import { withShapingWeights } from '../../core/reward/shaping.ts';
import { DEFAULT_STEP_TRAINER } from '../../core/trainer/stepConfig.ts';
import { createStepTrainer } from '../../core/trainer/stepCollector.ts';
import { DEFAULT_TOKEN_TRAINER } from '../../core/trainer/tokenConfig.ts';
import { createLockstepTrainer } from '../../core/trainer/lockstepCollector.ts';
import { loadNodeEngine } from '../engine/node.ts';

describe('withShapingWeights', () => {
  it('replaces only the named weights, in a new object, and refuses bad values', () => {
    const base = { ...DEFAULT_SHAPING, length: { weight: 0.01, freeTokens: 20 } };
    const next = withShapingWeights(base, { format: 0.5, length: 0.02 }, false);
    expect(next.format.weight).toBe(0.5);
    expect(next.length).toEqual({ weight: 0.02, freeTokens: 20 });
    expect(next.outcome.weight).toBe(1);
    expect(base.format.weight).toBe(0); // input untouched
    expect(() => withShapingWeights(base, { format: -1 }, false)).toThrow(/≥ 0/);
    expect(() => withShapingWeights(base, { potential: 0.1 }, false)).toThrow(/does not record potentials/);
    expect(withShapingWeights(base, { potential: 0.1 }, true).potential.weight).toBe(0.1);
    expect(() => withShapingWeights(base, { bogus: 1 } as never, true)).toThrow(/not a shaping term/);
  });
});

describe('live reward weights change the next iteration', () => {
  it('grid trainer: outcome weight 1 → 3 triples reward/outcome/mean against an unedited twin', async () => {
    const engine = await loadNodeEngine('ort-web-wasm');
    const config = { ...DEFAULT_STEP_TRAINER, env: { id: 'grid/empty-5x5' }, algo: { ...defaultsFor('grpo'), lr: 1e-3, groupSize: 4 }, groups: 2, learnerBatch: 256, seed: 4 };
    const edited = await createStepTrainer(config, engine);
    const twin = await createStepTrainer(config, engine);
    const [e0, t0] = [await edited.step(), await twin.step()];
    expect(e0.metrics['reward/outcome/mean']).toBe(t0.metrics['reward/outcome/mean']);
    edited.setHyper({ rewardWeights: { outcome: 3 } });
    const [e1, t1] = [await edited.step(), await twin.step()];
    const base = t1.metrics['reward/outcome/mean']!;
    expect(base).toBeGreaterThan(0); // a random policy reaches the 5×5 goal often
    expect(e1.metrics['reward/outcome/mean']).toBeCloseTo(3 * base, 12);
    expect(e1.metrics['reward/mean']).toBeCloseTo(3 * t1.metrics['reward/mean']!, 12);
    expect(Array.from(e1.episodes[0].actions)).toEqual(Array.from(t1.episodes[0].actions)); // same episodes
    // A refused edit (potentials are not recorded in this run) leaves the weights as they were.
    expect(() => edited.setHyper({ rewardWeights: { potential: 1 } })).toThrow(/potentials/);
    await Promise.all([edited.release(), twin.release()]);
  });

  it('token trainer: format weight 0.1 → 0.5 scales reward/format/mean by 5', async () => {
    const engine = await loadNodeEngine('ort-web-wasm');
    const config = {
      ...DEFAULT_TOKEN_TRAINER,
      env: { id: 'tools/calculator' },
      model: { kind: 'transformer' as const, dModel: 16, nLayers: 1, nHeads: 2, dFF: 32, context: 96 },
      algo: { ...defaultsFor('grpo'), lr: 1e-3, groupSize: 2 },
      shaping: { ...DEFAULT_SHAPING, format: { weight: 0.1 } },
      groups: 2,
      learnerBatch: 4,
      maxActionTokens: 8,
      seed: 5,
    };
    const edited = await createLockstepTrainer(config, engine);
    const twin = await createLockstepTrainer({ ...config, shaping: structuredClone(config.shaping) }, engine);
    await edited.step();
    await twin.step();
    edited.setHyper({ rewardWeights: { format: 0.5 } });
    const [e1, t1] = [await edited.step(), await twin.step()];
    const base = t1.metrics['reward/format/mean']!;
    // An untrained policy's actions are mostly malformed: the raw term is negative.
    expect(base).toBeLessThan(0);
    expect(e1.metrics['reward/format/mean']).toBeCloseTo(5 * base, 12);
    await Promise.all([edited.release(), twin.release()]);
  });
});
