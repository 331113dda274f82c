/**
 * Log-only terms and the eval reward in a real grid run (ort-web WASM in Node, QuickJS sandbox):
 * the log-only term is logged but the training reward leaves it out; the eval reward is the sum
 * of the named terms' means.
 */
import { describe, expect, it } from 'vitest';
import { parseRunConfig } from '../../core/presets/schema.ts';
import { createTrainer } from '../../core/trainer/createTrainer.ts';
import { loadNodeEngine } from '../engine/node.ts';
import { rewardLabFor } from './index.ts';

describe('reward.logOnly and reward.evalTerms in a grid run', () => {
  it('bonus (log only) is in reward/bonus/mean but not in reward/mean; eval/reward_mean = outcome + bonus', { timeout: 60_000 }, async () => {
    const code = 'export const stepCost = () => -0.01;\nexport const bonus = () => 1;';
    const parsed = parseRunConfig({ env: { id: 'grid/empty-5x5' }, model: { kind: 'mlp', hidden: [16], activation: 'tanh' }, algo: { algo: 'grpo', groupSize: 4 }, rollout: { groups: 2, learnerBatch: 64 }, reward: { code, logOnly: ['bonus'], evalTerms: ['outcome', 'bonus'] }, iterations: 1, seed: 3 });
    if (!parsed.ok) throw new Error(parsed.messages.join('\n'));
    const lab = await rewardLabFor(parsed.config);
    const trainer = await createTrainer(parsed.config, await loadNodeEngine('ort-web-wasm'), { rewardLab: lab });
    const r = await trainer.step();
    await trainer.release();
    lab!.scorer.close();
    const m = r.metrics as Record<string, number>;
    const steps = r.episodes.map((ep) => ep.actions.length);
    const meanSteps = steps.reduce((a, b) => a + b, 0) / steps.length;
    expect(m['reward/bonus/mean']).toBeCloseTo(meanSteps, 9);
    // The training reward: the env's outcome, progress and the step cost, without the bonus.
    const trainedTerms = Object.keys(m).filter((k) => /^reward\/[^/]+\/mean$/.test(k) && k !== 'reward/bonus/mean');
    const sumTrained = trainedTerms.reduce((a, k) => a + m[k], 0);
    expect(m['reward/mean']).toBeCloseTo(sumTrained, 9);
    expect(m['eval/reward_mean']).toBeCloseTo(m['reward/outcome/mean'] + meanSteps, 9);
    // episodeRewards (what the advantages saw) exclude the bonus too
    r.episodes.forEach((ep, i) => expect(r.episodeRewards[i]).toBeLessThan(ep.actions.length));
  });
  it('a log-only name that is no term of the code stops the run before training, naming it', async () => {
    const parsed = parseRunConfig({ env: { id: 'grid/empty-5x5' }, model: { kind: 'mlp', hidden: [16], activation: 'tanh' }, algo: { algo: 'grpo', groupSize: 4 }, rollout: { groups: 2, learnerBatch: 64 }, reward: { code: 'export const bonus = () => 1;', logOnly: ['bonsu'] }, iterations: 1, seed: 3 });
    if (!parsed.ok) throw new Error(parsed.messages.join('\n'));
    await expect(rewardLabFor(parsed.config)).rejects.toThrow("reward.logOnly: 'bonsu' is not a term of the reward code (its terms: bonus)");
  });
});
