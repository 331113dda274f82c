/**
 * Short real training runs: a learning regression fails CI. Budgets are small (seconds), the
 * thresholds well below what full runs reach (see `npm run bench -- learn`).
 */
import { describe, expect, it } from 'vitest';
import { defaultsFor, type Algo } from '../../core/algos/config.ts';
import { DEFAULT_STEP_TRAINER } from '../../core/trainer/stepConfig.ts';
import { createStepTrainer } from '../../core/trainer/stepCollector.ts';
import { loadNodeEngine } from './node.ts';

/** 20 iterations of `algo` on grid/empty-5x5 (8 groups, lr 1e-3, seed 1): the trainer, its first and last reports. */
async function emptyRoom(algo: Algo) {
  const engine = await loadNodeEngine('ort-web-wasm');
  const trainer = await createStepTrainer(
    { ...DEFAULT_STEP_TRAINER, env: { id: 'grid/empty-5x5' }, algo: { ...defaultsFor(algo), lr: 1e-3 }, groups: 8, learnerBatch: 512, seed: 1 },
    engine,
  );
  const first = await trainer.step();
  let last = first;
  for (let i = 1; i < 20; i++) last = await trainer.step();
  return { trainer, first, last };
}

describe('the step-pool Trainer learns grid worlds (ort-web WASM in Node)', () => {
  it('GRPO solves grid/empty-5x5 from scratch, with rollout and trainer log-probs equal', async () => {
    const { trainer, first, last } = await emptyRoom('grpo');
    // A random policy succeeds ~40% of the time within 100 steps, and slowly.
    expect(first.metrics['episode/success_rate']).toBeLessThan(0.7);
    expect(last.metrics['episode/success_rate']).toBeGreaterThanOrEqual(0.9);
    expect(last.metrics['episode/length_mean']).toBeLessThan(first.metrics['episode/length_mean']! / 2);
    // TITO: the learner, before its first update, scores the sampled actions as the rollout did.
    expect(first.metrics['mismatch/logprob_abs_diff_max']).toBeLessThanOrEqual(1e-4);
    expect(last.allApplied).toBe(true);
    // Held-out seeds, sampling from the trained policy (greedy decoding of a still-stochastic
    // policy can loop: e.g. argmax 'left' forever in a state it rarely visits).
    const evalEps = await trainer.evaluate([101, 102, 103, 104, 105, 106, 107, 108], 1);
    expect(evalEps.filter((e) => e.success).length).toBeGreaterThanOrEqual(7);
    await trainer.release();
  });

  it('ReMax (greedy-episode baseline) solves grid/empty-5x5 from scratch', async () => {
    const { trainer, first, last } = await emptyRoom('remax');
    expect(first.metrics['episode/success_rate']).toBeLessThan(0.7);
    expect(last.metrics['episode/success_rate']).toBeGreaterThanOrEqual(0.9);
    // The baseline episode itself: greedy decoding of the trained policy reaches the goal.
    expect(last.metrics['remax/greedy_success_rate']).toBeGreaterThanOrEqual(0.75);
    expect(last.allApplied).toBe(true);
    await trainer.release();
  });

  it('REINFORCE++ (group mean, batch-wide normalisation) solves grid/empty-5x5 from scratch', async () => {
    const { trainer, first, last } = await emptyRoom('reinforcepp');
    expect(first.metrics['episode/success_rate']).toBeLessThan(0.7);
    expect(last.metrics['episode/success_rate']).toBeGreaterThanOrEqual(0.9);
    expect(last.metrics['episode/length_mean']).toBeLessThan(first.metrics['episode/length_mean']! / 2);
    // Whitened over the batch's steps: unit spread whenever any group has one (adv/std is over steps).
    expect(first.metrics['adv/std']).toBeCloseTo(1, 2);
    expect(last.allApplied).toBe(true);
    await trainer.release();
  });

  it('PPO with a value head improves on grid/empty-5x5', async () => {
    const engine = await loadNodeEngine('ort-web-wasm');
    const trainer = await createStepTrainer(
      { ...DEFAULT_STEP_TRAINER, env: { id: 'grid/empty-5x5' }, algo: { ...defaultsFor('ppo'), lr: 1e-3 }, episodes: 32, learnerBatch: 512, seed: 2 },
      engine,
    );
    let last = await trainer.step();
    const firstLen = last.metrics['episode/length_mean']!;
    const firstValueLoss = last.metrics['critic/value_loss']!;
    for (let i = 1; i < 15; i++) last = await trainer.step();
    expect(last.metrics['episode/success_rate']).toBeGreaterThanOrEqual(0.9);
    expect(last.metrics['episode/length_mean']).toBeLessThan(firstLen);
    expect(Number.isFinite(last.metrics['critic/explained_variance'])).toBe(true);
    // The critic learns: it explains part of the returns' variance (EV = 1 − Var(R − V)/Var(R) ≤ 1),
    // and its loss falls from the untrained head's.
    expect(last.metrics['critic/explained_variance']).toBeGreaterThan(0);
    expect(last.metrics['critic/explained_variance']).toBeLessThanOrEqual(1);
    expect(last.metrics['critic/value_loss']).toBeLessThan(firstValueLoss);
    await trainer.release();
  });
});

describe('step-pool Trainer knobs', () => {
  it('dynamic sampling drops zero-spread groups and reports it; potential shaping and KL-as-reward run', async () => {
    const engine = await loadNodeEngine('ort-web-wasm');
    const algo = { ...defaultsFor('grpo'), lr: 1e-3, groupSize: 4, klCoef: 0.01, klMode: 'reward' as const, dynamicSampling: { enabled: true, maxRounds: 3, spreadTol: 1e-9 } };
    const shaping = { ...DEFAULT_STEP_TRAINER.shaping, potential: { weight: 0.05, gamma: 1 } };
    const trainer = await createStepTrainer(
      // lava-crossing: most random groups all fail (zero spread), so dynamic sampling has work.
      { ...DEFAULT_STEP_TRAINER, env: { id: 'grid/lava-crossing-9x9' }, algo, shaping, groups: 4, learnerBatch: 512, seed: 3 },
      engine,
    );
    const r = await trainer.step();
    const m = r.metrics;
    expect(m['groups/sampling_rounds']).toBeGreaterThanOrEqual(1);
    expect(m['groups/sampling_rounds']).toBeLessThanOrEqual(3);
    // With dynamic sampling on, every group that reaches the learner has reward spread.
    const byGroup = new Map<number, number[]>();
    r.episodes.forEach((ep, i) => byGroup.set(ep.group, [...(byGroup.get(ep.group) ?? []), r.episodeRewards[i]]));
    for (const rewards of byGroup.values()) expect(Math.max(...rewards) - Math.min(...rewards)).toBeGreaterThan(1e-9);
    expect(byGroup.size).toBeLessThanOrEqual(4);
    expect(m['reward/potential/mean']).not.toBe(0);
    expect(Number.isFinite(m['reward/mean'])).toBe(true);
    await trainer.release();
  });

  it('the progressive schedule moves to its next stage and changes the weights', async () => {
    const engine = await loadNodeEngine('ort-web-wasm');
    const schedule = {
      stages: [
        { name: 'dense', weights: { potential: 0.1 }, advance: { afterIterations: 2 } },
        { name: 'outcome only', weights: { potential: 0 } },
      ],
    };
    const trainer = await createStepTrainer(
      { ...DEFAULT_STEP_TRAINER, env: { id: 'grid/empty-5x5' }, algo: { ...defaultsFor('grpo'), lr: 1e-3 }, schedule, groups: 2, learnerBatch: 256, seed: 4 },
      engine,
    );
    const stages: number[] = [];
    const potential: number[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await trainer.step();
      stages.push(r.metrics['schedule/stage'] ?? -1);
      potential.push(r.metrics['reward/potential/mean'] ?? NaN);
    }
    expect(stages).toEqual([0, 0, 1, 1]);
    expect(potential[0]).not.toBe(0);
    expect(potential[3]).toBe(0);
    await trainer.release();
  });
});
