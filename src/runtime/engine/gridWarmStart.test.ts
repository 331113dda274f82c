/**
 * The grid MLP's imitation warm start (a feature token runs had, brought to grids too): behaviour cloning
 * of the env's expert on door-key, then RL from there. Reference: the same config from scratch;
 * learning is judged by the success of the first iteration's own sampled episodes (before any RL
 * update) and by the cross-entropy curve falling.
 */
import { describe, expect, it } from 'vitest';
import { parseRunConfig } from '../../core/presets/schema.ts';
import { createTrainer } from '../../core/trainer/createTrainer.ts';
import type { ImitationReport } from '../../core/trainer/imitation.ts';
import { loadNodeEngine } from './node.ts';

const base = { env: { id: 'grid/door-key-6x6' }, model: { kind: 'mlp', hidden: [64, 64] }, algo: { algo: 'grpo', lr: 0.001, klCoef: 0.01 }, rollout: { groups: 8, learnerBatch: 512 }, iterations: 2, seed: 3 };

describe('grid warm start', () => {
  it('cloning the door-key expert for 150 steps makes the first iteration succeed far more than from scratch; RL then trains from it', { timeout: 300_000 }, async () => {
    const engine = await loadNodeEngine('ort-web-wasm');
    const warm = parseRunConfig({ ...base, warmStart: { steps: 150, batch: 16, lr: 0.003 } });
    const cold = parseRunConfig(base);
    if (!warm.ok || !cold.ok) throw new Error('configs');
    const curve: ImitationReport[] = [];
    const tw = await createTrainer(warm.config, engine, { onWarmStart: (r) => void curve.push(r) });
    const tc = await createTrainer(cold.config, engine);
    const [w1, c1] = [await tw.step(), await tc.step()];
    const [sw, sc] = [w1.metrics['episode/success_rate'] ?? NaN, c1.metrics['episode/success_rate'] ?? NaN];
    console.log(`door-key 6x6: first-iteration success ${sw.toFixed(2)} warm-started vs ${sc.toFixed(2)} from scratch; CE ${curve[0].ceLoss.toFixed(3)} → ${curve[curve.length - 1].ceLoss.toFixed(3)}`);
    expect(curve).toHaveLength(150);
    expect(curve[curve.length - 1].ceLoss).toBeLessThan(curve[0].ceLoss * 0.5);
    expect(sw).toBeGreaterThan(0.6);
    expect(sw).toBeGreaterThan(sc + 0.3);
    // The warm start is the KL reference: the first iteration's KL to it stays small (0.017 here;
    // to the random initial weights, near uniform over 7 actions, it would be about
    // log 7 − H(π) ≈ 1, the warm policy putting ~0.8 on the expert's action).
    expect(w1.metrics['actor/kl_ref']).toBeLessThan(0.1);
    const w2 = await tw.step();
    expect(w2.metrics['train/policy_version']).toBe(2);
    await tw.release();
    await tc.release();
  });

  it('is refused where it cannot run, by field', () => {
    const two = parseRunConfig({ ...base, env: { id: 'grid/switch-door' }, warmStart: { steps: 10 } });
    expect(!two.ok && two.messages).toEqual([expect.stringMatching(/^warmStart: the grid warm start imitates one expert; grid\/switch-door has 2 agents/)]);
    const obsW = parseRunConfig({ ...base, warmStart: { steps: 10, observationWeight: 0.5 } });
    expect(!obsW.ok && obsW.messages).toEqual([expect.stringMatching(/^warmStart\.observationWeight: /)]);
  });
});
