/**
 * ReMax on a tool env (every algorithm runs on every env family, not only grids): the lockstep token trainer
 * plays one greedy episode per group from the group's seed and subtracts its reward. References:
 * a twin trainer of the same config plays the same seeds greedily with the same (initial)
 * weights, independently, and its shaped totals must be the baselines the first iteration used.
 */
import { describe, expect, it } from 'vitest';
import { parseRunConfig } from '../../core/presets/schema.ts';
import { createTrainer } from '../../core/trainer/createTrainer.ts';
import { VirtualClock } from '../../core/envs/clock.ts';
import { shapeTokenEpisode, type TokenEpisode } from '../../core/rollout/tokenEpisode.ts';
import { loadNodeEngine } from './node.ts';

const TINY = { kind: 'transformer', dModel: 16, nLayers: 1, nHeads: 2, dFF: 32, context: 128 };

// The calculator after a short warm start, so its episodes differ (some answers right, some
// malformed); an untrained tiny policy writes malformed actions only, and every advantage is 0.
const CASES = [['tools/calculator, warm-started', { env: { id: 'tools/calculator', kwargs: { minDigits: 1, maxDigits: 1 } }, warmStart: { steps: 150, batch: 8, lr: 0.003 }, shaping: { format: { weight: 0.1 } } }]] as const;

describe('ReMax on token policies', () => {
  it.each(CASES)('%s: each episode\'s advantage is its reward minus its group\'s greedy episode reward, played by the sampling weights', { timeout: 300_000 }, async (_, extra) => {
    const r = parseRunConfig({ model: TINY, algo: { algo: 'remax', lr: 0.003, groupSize: 4 }, rollout: { groups: 3, learnerBatch: 12, maxActionTokens: 12 }, iterations: 2, seed: 5, ...extra });
    if (!r.ok) throw new Error(r.messages.join('\n'));
    const engine = await loadNodeEngine('ort-web-wasm');
    const t = await createTrainer(r.config, engine, { clock: new VirtualClock() });
    const twin = await createTrainer(r.config, engine, { clock: new VirtualClock() });
    const rep = await t.step();
    const eps = rep.episodes as TokenEpisode[];
    expect(eps).toHaveLength(12);
    const groups = [...new Set(eps.map((ep) => ep.group))];
    expect(groups).toHaveLength(3);
    const seeds = groups.map((g) => eps.find((ep) => ep.group === g)!.seed);
    const greedy = (await twin.evaluate(seeds, 0)) as TokenEpisode[];
    const baselines = greedy.map((ep) => shapeTokenEpisode(ep, r.config.shaping).total);
    // Not a vacuous batch: some episodes beat or trail their baseline.
    expect(Array.from(rep.episodeAdvantages).some((a) => Math.abs(a) > 1e-6)).toBe(true);
    groups.forEach((g, k) => {
      eps.forEach((ep, i) => {
        if (ep.group === g) expect(rep.episodeRewards[i] - rep.episodeAdvantages[i]).toBeCloseTo(baselines[k], 9);
      });
    });
    expect(rep.metrics['remax/greedy_reward_mean']).toBeCloseTo(baselines.reduce((a, b) => a + b, 0) / baselines.length, 9);
    expect(rep.metrics['remax/greedy_success_rate']).toBe(greedy.filter((ep) => ep.success).length / greedy.length);
    // The update happened on those advantages: a second iteration trains on a new version.
    const rep2 = await t.step();
    expect(rep2.metrics['train/policy_version']).toBeGreaterThan(rep.metrics['train/policy_version']!);
    await t.release();
    await twin.release();
  });
});
