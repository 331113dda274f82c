/**
 * Progressive shaping on token runs (a feature grid runs had, brought to token runs too): the schedule's stage
 * sets the shaping weights of the episodes it scores and advances after its iterations, in the
 * lockstep and the continuous token trainers; a checkpoint carries the stage and a resume
 * continues in it. Reference: each episode's shaped total recomputed by hand from its recorded
 * format term (reward/format) and env reward with the stage's weight.
 */
import { describe, expect, it } from 'vitest';
import { parseRunConfig } from '../../core/presets/schema.ts';
import { createTrainer } from '../../core/trainer/createTrainer.ts';
import { VirtualClock } from '../../core/envs/clock.ts';
import { shapeTokenEpisode, type TokenEpisode } from '../../core/rollout/tokenEpisode.ts';
import { weightsOf } from '../../core/reward/shaping.ts';
import { loadNodeEngine } from './node.ts';

const TINY = { kind: 'transformer', dModel: 16, nLayers: 1, nHeads: 2, dFF: 32, context: 128 };
/** Format shaping at 0.5 for two iterations, then off. */
const SCHEDULE = { stages: [{ name: 'format first', weights: { format: 0.5 }, advance: { afterIterations: 2 } }, { name: 'outcome only', weights: { format: 0 } }] };

describe('a progressive reward schedule on token runs', () => {
  for (const [name, algo] of [
    ['lockstep (reinforce)', { algo: 'reinforce', lr: 0.003 }],
    ['continuous (grpo)', { algo: 'grpo', lr: 0.003, groupSize: 4 }],
  ] as const) {
    it(`${name}: stage 0's weights shape the first two iterations, stage 1's the rest; a resume continues in stage 1`, { timeout: 180_000 }, async () => {
      const r = parseRunConfig({ env: { id: 'tools/calculator' }, model: TINY, algo, rollout: { groups: 2, episodes: 8, learnerBatch: 8, maxActionTokens: 12 }, schedule: SCHEDULE, iterations: 4, seed: 7 });
      if (!r.ok) throw new Error(r.messages.join('\n'));
      const engine = await loadNodeEngine('ort-web-wasm');
      const t = await createTrainer(r.config, engine, { clock: new VirtualClock() });
      const stages: number[] = [];
      for (let k = 0; k < 3; k++) {
        const rep = await t.step();
        stages.push(rep.metrics['schedule/stage'] ?? -1);
        const w = { ...weightsOf(r.config.shaping), format: k < 2 ? 0.5 : 0 };
        // The untrained tiny policy writes malformed calls: the format term is what moves.
        (rep.episodes as TokenEpisode[]).forEach((ep, i) => expect(rep.episodeRewards[i]).toBeCloseTo(shapeTokenEpisode(ep, r.config.shaping, w).total, 12));
        if (k < 2) expect(Array.from(rep.episodeRewards).some((x, i) => Math.abs(x - shapeTokenEpisode(rep.episodes[i] as TokenEpisode, r.config.shaping).total) > 1e-9)).toBe(true);
      }
      expect(stages).toEqual([0, 0, 1]);
      const cp = await t.checkpoint();
      expect(cp.schedule).toEqual({ stage: 1, iterationsInStage: 1, streak: 0 });
      await t.release();
      const resumed = await createTrainer(r.config, engine, { clock: new VirtualClock(), resume: cp });
      await resumed.restore(cp);
      expect((await resumed.step()).metrics['schedule/stage']).toBe(1);
      await resumed.release();
      // A checkpoint without schedule state does not fit a run with a schedule.
      const other = await createTrainer(r.config, engine, { clock: new VirtualClock(), resume: cp });
      await expect(other.restore({ ...cp, schedule: null })).rejects.toThrow(/schedule: the checkpoint has no reward schedule state, this run has/);
      await other.release();
    });
  }

  it('potential-based shaping is refused for token policies, by field', () => {
    const r = parseRunConfig({ env: { id: 'tools/calculator' }, model: TINY, algo: { algo: 'grpo' }, shaping: { potential: { weight: 0.5 } } });
    expect(!r.ok && r.messages).toEqual([expect.stringMatching(/^shaping\.potential\.weight: potential-based shaping reads the grid goal distance/)]);
    const s = parseRunConfig({ env: { id: 'grid/empty-5x5' }, model: TINY, algo: { algo: 'grpo' }, schedule: { stages: [{ name: 'a', weights: { potential: 1 }, advance: { afterIterations: 1 } }, { name: 'b', weights: {} }] } });
    expect(!s.ok && s.messages).toEqual([expect.stringMatching(/^schedule\.stages\.0\.weights\.potential: /)]);
  });
});
