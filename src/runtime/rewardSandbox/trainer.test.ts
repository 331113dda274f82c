/**
 * User reward terms through a real grid trainer (ort-web WASM in Node) and the QuickJS sandbox.
 * Reference: a twin trainer with the same seed and no terms; iteration 0 plays the same episodes,
 * so every difference in the metrics is the terms' doing.
 */
import { describe, expect, it } from 'vitest';
import { defaultsFor } from '../../core/algos/config.ts';
import '../../core/envs/index.ts';
import { DEFAULT_STEP_TRAINER } from '../../core/trainer/stepConfig.ts';
import { createStepTrainer } from '../../core/trainer/stepCollector.ts';
import { loadNodeEngine } from '../engine/node.ts';
import { createRewardSandbox } from './quickjs.ts';

const config = { ...DEFAULT_STEP_TRAINER, env: { id: 'grid/empty-5x5' }, algo: { ...defaultsFor('grpo'), lr: 1e-3, groupSize: 4 }, groups: 2, learnerBatch: 256, seed: 4 };

describe('user reward terms in the grid trainer', () => {
  it('adds each term to the reward and reports reward/<term>/mean as the mean episode sum', async () => {
    const engine = await loadNodeEngine('ort-web-wasm');
    const scorer = await createRewardSandbox('export const stepCost = () => -0.01;\nexport const forward = (s) => (s.actionName === "forward" ? 0.1 : 0);');
    const lab = await createStepTrainer(config, engine, undefined, undefined, { scorer, onNonFinite: 'skip' });
    const twin = await createStepTrainer(config, engine);
    const [r, t] = [await lab.step(), await twin.step()];
    expect(Array.from(r.episodes[0].actions)).toEqual(Array.from(t.episodes[0].actions)); // same episodes
    const lengths = r.episodes.map((ep) => ep.actions.length);
    const forwards = r.episodes.map((ep) => Array.from(ep.actions).filter((a) => a === 2).length);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    expect(r.metrics['reward/stepCost/mean']).toBeCloseTo(-0.01 * mean(lengths), 12);
    expect(r.metrics['reward/forward/mean']).toBeCloseTo(0.1 * mean(forwards), 12);
    expect(r.metrics['reward/mean']).toBeCloseTo(t.metrics['reward/mean']! - 0.01 * mean(lengths) + 0.1 * mean(forwards), 12);
    expect(r.metrics['reward/version']).toBe(1);
    expect(r.metrics['reward/terms_skipped']).toBe(0);
    // The episode totals the advantages were computed from include the terms.
    r.episodes.forEach((ep, i) => expect(r.episodeRewards[i]).toBeCloseTo(Array.from(ep.rewards).reduce((a, b) => a + b, 0) - 0.01 * lengths[i] + 0.1 * forwards[i], 12));
    // A new version applies from the next iteration and is recorded with it.
    const v2 = await createRewardSandbox('export const stepCost = () => -0.02;');
    lab.setRewardLab({ scorer: v2, onNonFinite: 'skip', version: 2 });
    scorer.close();
    const r1 = await lab.step();
    expect(r1.metrics['reward/version']).toBe(2);
    expect(r1.metrics['reward/stepCost/mean']).toBeCloseTo(-0.02 * mean(r1.episodes.map((ep) => ep.actions.length)), 12);
    v2.close();
    await Promise.all([lab.release(), twin.release()]);
  });

  it('skips a term that returns NaN for the episode, reports it, and keeps advantages finite', async () => {
    const engine = await loadNodeEngine('ort-web-wasm');
    const scorer = await createRewardSandbox('export const ok = () => 0.5;\nexport const bad = (s) => (s.t === 0 ? NaN : 1);');
    const problems: string[] = [];
    const lab = await createStepTrainer(config, engine, undefined, undefined, { scorer, onNonFinite: 'skip', onProblem: (m) => problems.push(m) });
    const r = await lab.step();
    expect(r.metrics['reward/bad/mean']).toBe(0);
    expect(r.metrics['reward/terms_skipped']).toBe(r.episodes.length);
    expect(problems[0]).toMatch(/reward term 'bad' \(line 2\) returned NaN at step 0 of the episode with seed \d+.*counts 0/);
    expect(Array.from(r.episodeAdvantages).every(Number.isFinite)).toBe(true);
    expect(Number.isFinite(r.metrics['adv/abs_mean'])).toBe(true);
    scorer.close();
    await lab.release();
  });

  it('stops the iteration when a term loops forever, naming the term and the seed', async () => {
    const engine = await loadNodeEngine('ort-web-wasm');
    const scorer = await createRewardSandbox('export const spin = () => { for (;;) {} };', { callTimeoutMs: 50 });
    const lab = await createStepTrainer(config, engine, undefined, undefined, { scorer, onNonFinite: 'skip' });
    await expect(lab.step()).rejects.toThrow(/reward term 'spin' \(line 1\) ran past its 50 ms limit per call at step 0 of the episode with seed \d+/);
    scorer.close();
    await lab.release();
  });
});
