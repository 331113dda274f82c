/**
 * Re-scoring token batches: real episodes of the token trainers (a tiny transformer on the
 * calculator, ort-web WASM in Node) scored by user terms in QuickJS, frozen as the page freezes
 * them, re-scored. References: the trainer's own advantages (the same code re-scored moves
 * nothing and recomputes them), and the edit's effect by hand from each episode's turns.
 */
import { describe, expect, it } from 'vitest';
import { parseRunConfig } from '../../core/presets/schema.ts';
import { createTrainer } from '../../core/trainer/createTrainer.ts';
import { VirtualClock } from '../../core/envs/clock.ts';
import type { FrozenEpisode } from '../../core/reward/rescore.ts';
import { policyTokenCount, type TokenEpisode } from '../../core/rollout/tokenEpisode.ts';
import { loadNodeEngine } from '../engine/node.ts';
import { rewardLabFor } from './index.ts';
import { rescoreEpisodes, type RescoreRequest } from './rescore.ts';

const TINY = { kind: 'transformer', dModel: 16, nLayers: 1, nHeads: 2, dFF: 32, context: 128 };
const OLD = "export const calcCall = (s) => (s.info.toolCall === 'calc' ? 0.5 : 0);\n";
const COST = `${OLD}export const turnCost = (s) => -0.2;\n`;

const RUNS = {
  grpo: { algo: { algo: 'grpo', lr: 0.003, groupSize: 4 }, rollout: { groups: 2, learnerBatch: 8, maxActionTokens: 12 } },
  ppo: { algo: { algo: 'ppo', lr: 0.003 }, rollout: { episodes: 8, learnerBatch: 8, maxActionTokens: 12 } },
} as const;

async function frozenTokenRun(which: keyof typeof RUNS) {
  const r = parseRunConfig({ env: { id: 'tools/calculator' }, model: TINY, ...RUNS[which], reward: { code: OLD }, iterations: 2, seed: 5 });
  if (!r.ok) throw new Error(r.messages.join('\n'));
  const engine = await loadNodeEngine('ort-web-wasm');
  const lab = (await rewardLabFor(r.config))!;
  const t = await createTrainer(r.config, engine, { clock: new VirtualClock(), rewardLab: lab });
  const out: FrozenEpisode[] = [];
  for (let k = 0; k < 2; k++) {
    const rep = await t.step();
    (rep.episodes as TokenEpisode[]).forEach((ep, index) =>
      out.push({
        iteration: rep.iteration,
        index,
        seed: ep.seed,
        group: ep.group,
        actions: [],
        rewards: Array.from(ep.rewards),
        total: rep.episodeRewards[index],
        advantage: rep.episodeAdvantages[index],
        success: ep.success,
        text: { actions: ep.actions, infos: ep.infos, observations: ep.observations, terminated: ep.terminated, truncated: ep.truncated, policyTokens: policyTokenCount(ep) },
      }),
    );
  }
  lab.scorer.close();
  await t.release();
  return { config: r.config, episodes: out };
}

describe('re-scoring token batches', () => {
  for (const which of ['grpo', 'ppo'] as const) {
    it(`${which}: the run's own code recomputes its advantages; a per-turn cost moves each return by −0.2 per turn`, { timeout: 120_000 }, async () => {
      const { config, episodes } = await frozenTokenRun(which);
      const req = (newCode: string): RescoreRequest => ({ envId: config.env.id, envKwargs: config.env.kwargs, algo: config.algo, oldCode: OLD, newCode, callTimeoutMs: 100, episodes });
      const same = await rescoreEpisodes(req(OLD));
      if (!same.ok) throw new Error(same.message);
      same.result.episodes.forEach((e, i) => {
        expect(e.oldAdv).toBeCloseTo(episodes[i].advantage, 6);
        expect(e.newAdv).toBe(e.oldAdv);
        expect(e.newReturn).toBe(e.oldReturn);
      });
      expect(same.result.changed).toBe(0);
      // The terms' values come from the recorded infos: calcCall sums 0.5 per calc call.
      const calc = same.result.distributions.find((d) => d.name === 'calcCall')!;
      const calls = episodes.map((ep) => 0.5 * ep.text!.infos.filter((i) => i.toolCall === 'calc').length);
      expect(calc.beforeSummary!.mean).toBeCloseTo(calls.reduce((a, b) => a + b, 0) / calls.length, 12);

      const r = await rescoreEpisodes(req(COST));
      if (!r.ok) throw new Error(r.message);
      expect(r.newTerms).toEqual(['calcCall', 'turnCost']);
      r.result.episodes.forEach((e, i) => expect(e.newReturn - e.oldReturn).toBeCloseTo(-0.2 * episodes[i].text!.actions.length, 9));
      if (which === 'ppo') {
        // Token GAE discounts per turn: the first token's advantage moves by Σ_k (γλ)^k · (−0.2).
        const { gamma, lambda } = config.algo;
        r.result.episodes.forEach((e, i) => {
          const turns = episodes[i].text!.actions.length;
          let d = 0;
          for (let k = 0; k < turns; k++) d += (gamma * lambda) ** k * -0.2;
          expect(e.newAdv - e.oldAdv).toBeCloseTo(d, 9);
        });
      } else {
        // Group-relative: a cost per turn shifts a group whose episodes all took the same number of
        // turns by one constant, which neither its mean subtraction nor its std division sees.
        r.result.episodes.forEach((e, i) => {
          const mates = episodes.filter((o) => o.iteration === episodes[i].iteration && o.group === episodes[i].group);
          if (mates.every((o) => o.text!.actions.length === episodes[i].text!.actions.length)) expect(e.newAdv).toBeCloseTo(e.oldAdv, 9);
        });
      }
    });
  }

  it('refuses a buffer that mixes token and grid episodes, naming it', async () => {
    const ep: FrozenEpisode = { iteration: 0, index: 0, seed: 1, group: 0, actions: [2], rewards: [0], total: 0, advantage: 0, success: false };
    const text = { ...ep, actions: [], text: { actions: ['answer(1)'], infos: [{}], observations: ['q', 'r'], terminated: true, truncated: false, policyTokens: 4 } };
    const r = await rescoreEpisodes({ envId: 'tools/calculator', envKwargs: {}, algo: RUNS.grpo.algo as never, oldCode: '', newCode: OLD, callTimeoutMs: 100, episodes: [ep, text] });
    expect(r.ok).toBe(false);
    expect(!r.ok && r.message).toMatch(/1 of 2 frozen episodes are token episodes/);
  });
});
