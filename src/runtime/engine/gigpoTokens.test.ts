/**
 * GiGPO on token policies (every algorithm runs on every env family, not only grids): the anchor state of an
 * action is the observation text it answered, so a group's episodes that meet the same env reply
 * are compared by their returns from there. Reference: the advantages recomputed from the
 * reported episodes (their observations, shaped per-turn rewards and totals) with the estimator
 * alone, and by hand for the first turn, whose anchor (the task) every episode of a group shares.
 */
import { describe, expect, it } from 'vitest';
import { parseRunConfig } from '../../core/presets/schema.ts';
import { createTrainer } from '../../core/trainer/createTrainer.ts';
import { VirtualClock } from '../../core/envs/clock.ts';
import { shapeTokenEpisode, type TokenEpisode } from '../../core/rollout/tokenEpisode.ts';
import { gigpoAdvantages } from '../../core/algos/stepGroups.ts';
import { loadNodeEngine } from './node.ts';

const TINY = { kind: 'transformer', dModel: 16, nLayers: 1, nHeads: 2, dFF: 32, context: 128 };

describe('GiGPO on a tool env', () => {
  it('episode advantages are GRPO\'s part and the step groups are those of the observation texts (anchors), recomputed from the reported episodes', { timeout: 300_000 }, async () => {
    const r = parseRunConfig({
      env: { id: 'tools/calculator', kwargs: { minDigits: 1, maxDigits: 1 } },
      model: TINY,
      warmStart: { steps: 150, batch: 8, lr: 0.003 },
      algo: { algo: 'gigpo', lr: 0.003, groupSize: 4 },
      shaping: { format: { weight: 0.1 } },
      rollout: { groups: 2, learnerBatch: 8, maxActionTokens: 12 },
      iterations: 1,
      seed: 5,
    });
    if (!r.ok) throw new Error(r.messages.join('\n'));
    const algo = r.config.algo;
    const engine = await loadNodeEngine('ort-web-wasm');
    const t = await createTrainer(r.config, engine, { clock: new VirtualClock() });
    const rep = await t.step();
    await t.release();
    const eps = rep.episodes as TokenEpisode[];
    expect(eps).toHaveLength(8);
    const shaped = eps.map((ep) => shapeTokenEpisode(ep, r.config.shaping));
    // The turn count each trained episode's keys cover: one per rewarded action.
    const steps = eps.map((ep, i) => ({ stateKeys: ep.observations.slice(0, shaped[i].perStep.length), rewards: shaped[i].perStep }));
    const g = gigpoAdvantages(steps, rep.episodeRewards, algo.groupSize, { gamma: algo.gamma, normalizeStd: algo.normalizeStd, eps: algo.stdEps, omega: algo.stepAdvantageWeight });
    // The trainer's episode advantage is its GRPO part.
    eps.forEach((_, i) => expect(rep.episodeAdvantages[i]).toBeCloseTo(g.episodeAdvantages[i], 9));
    // Turn 0's anchor is the task, shared by the group: its step part is the episode's whole
    // return from turn 0 compared within the group (all episodes in one step group).
    expect(g.stepGroupsPerGroup).toBeGreaterThanOrEqual(1);
    expect(rep.metrics['groups/step_groups_mean']).toBeCloseTo(g.stepGroupsPerGroup, 9);
    expect(rep.metrics['groups/grouped_step_share']).toBeCloseTo(g.groupedStepShare, 9);
    // Not vacuous: the returns from the task differ within some group.
    expect(new Set(eps.map((_, i) => shaped[i].total.toFixed(6))).size).toBeGreaterThan(1);
  });
});
