/**
 * User reward terms through the token trainers (ort-web WASM in Node, QuickJS sandbox) on the
 * calculator tool env with a tiny transformer (d 16, 1 layer, context 128): one step record per
 * env step (each tool call or answer turn). Reference: a twin trainer with the same seed and no
 * terms; iteration 0 plays the same episodes (the terms consume no randomness), so every
 * difference in the rewards is the terms' doing and can be checked by hand from the episodes'
 * infos.
 */
import { describe, expect, it } from 'vitest';
import { parseRunConfig, type RunConfig } from '../../core/presets/schema.ts';
import { createTrainer } from '../../core/trainer/createTrainer.ts';
import { VirtualClock } from '../../core/envs/clock.ts';
import type { RewardLab } from '../../core/reward/userTerms.ts';
import type { TokenEpisode } from '../../core/rollout/tokenEpisode.ts';
import { loadNodeEngine } from '../engine/node.ts';
import { createRewardSandbox, rewardLabFor } from './index.ts';
import { makeEnv } from '../../core/envs/index.ts';
import type { ToolEnv } from '../../core/envs/types.ts';
import { sampleTextEpisode } from '../../core/reward/stepRecord.ts';

const TINY = { kind: 'transformer', dModel: 16, nLayers: 1, nHeads: 2, dFF: 32, context: 128 };

function config(code: string, extra: Record<string, unknown> = {}): RunConfig {
  const r = parseRunConfig({
    env: { id: 'tools/calculator' },
    model: TINY,
    algo: { algo: 'reinforce', lr: 0.003, baseline: 'ema' },
    rollout: { episodes: 8, learnerBatch: 8, maxActionTokens: 12 },
    reward: { code },
    iterations: 2,
    seed: 5,
    ...extra,
  });
  if (!r.ok) throw new Error(r.messages.join('\n'));
  return r.config;
}

/** The async (continuous) trainer: a group algorithm on a tool env, sync = staleness 0. */
const GRPO = { algo: { algo: 'grpo', lr: 0.003, groupSize: 4 }, rollout: { groups: 2, learnerBatch: 8, maxActionTokens: 12 } };

const TERMS = "export const formatBonus = (s) => s.info.malformed ? -1 : 0;\nexport const calcCall = (s) => (s.info.toolCall === 'calc' ? 0.5 : 0);";
/** The terms above, by hand from an episode's infos: Σ_t formatBonus, Σ_t calcCall. */
const byHand = (ep: TokenEpisode) => ({
  formatBonus: -ep.infos.filter((i) => i.malformed === true).length,
  calcCall: 0.5 * ep.infos.filter((i) => i.toolCall === 'calc').length,
});
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

async function pair(cfg: RunConfig, lab: RewardLab) {
  const engine = await loadNodeEngine('ort-web-wasm');
  const opts = { clock: new VirtualClock() };
  const withTerms = await createTrainer(cfg, engine, { ...opts, rewardLab: lab });
  const twin = await createTrainer({ ...cfg, reward: { ...cfg.reward, code: '' } }, engine, opts);
  return { withTerms, twin };
}

describe('user reward terms in the token trainers', () => {
  // PPO: the terms' per-step values also reach token GAE through the shaped reward's perStep.
  const PPO = { algo: { algo: 'ppo', lr: 0.003 } };
  for (const [name, extra] of [['lockstep token loop (reinforce)', {}], ['lockstep token loop (ppo)', PPO], ['continuous token loop (grpo)', GRPO], ['lockstep token loop (grid as text)', { env: { id: 'grid/empty-5x5' } }]] as const) {
    it(`${name}: each episode's reward moves by exactly the summed terms, reported as reward/<term>/mean`, { timeout: 60_000 }, async () => {
      const cfg = config(TERMS, extra);
      const lab = (await rewardLabFor(cfg))!;
      const { withTerms, twin } = await pair(cfg, lab);
      const [r, t] = [await withTerms.step(), await twin.step()];
      const eps = r.episodes as TokenEpisode[];
      expect(eps.map((ep) => ep.actions.join('|'))).toEqual((t.episodes as TokenEpisode[]).map((ep) => ep.actions.join('|'))); // same episodes
      const hand = eps.map(byHand);
      expect(hand.some((h) => h.formatBonus !== 0)).toBe(true); // the untrained policy writes malformed calls
      eps.forEach((_, i) => expect(r.episodeRewards[i]).toBeCloseTo(t.episodeRewards[i] + hand[i].formatBonus + hand[i].calcCall, 12));
      // Every episode here is trained (no dynamic-sampling drop: none is enabled), so the sampled mean is the batch mean.
      expect(r.metrics['reward/formatBonus/mean']).toBeCloseTo(mean(hand.map((h) => h.formatBonus)), 12);
      expect(r.metrics['reward/calcCall/mean']).toBeCloseTo(mean(hand.map((h) => h.calcCall)), 12);
      expect(r.metrics['reward/version']).toBe(1);
      expect(r.metrics['reward/terms_skipped']).toBe(0);
      expect(t.metrics['reward/version']).toBeUndefined();
      // Apply mid-run: a new version scores from the next iteration and is recorded with it.
      const v2 = (await rewardLabFor({ ...cfg, reward: { ...cfg.reward, code: 'export const perTurn = () => -0.25;' } }, undefined, 2))!;
      withTerms.setRewardLab(v2);
      lab.scorer.close();
      const r1 = await withTerms.step();
      expect(r1.metrics['reward/version']).toBe(2);
      expect(r1.metrics['reward/perTurn/mean']).toBeCloseTo(-0.25 * mean((r1.episodes as TokenEpisode[]).map((ep) => ep.turns)), 12);
      expect(r1.metrics['reward/formatBonus/mean']).toBeUndefined();
      v2.scorer.close();
      await Promise.all([withTerms.release(), twin.release()]);
    });
  }

  it("a term returning NaN is skipped (counts 0, reported) under onNonFinite 'skip', and stops the run under 'stop'", { timeout: 60_000 }, async () => {
    const code = 'export const ok = () => 0.5;\nexport const bad = (s) => (s.t === 0 ? NaN : 1);';
    const engine = await loadNodeEngine('ort-web-wasm');
    const cfg = config(code, GRPO);
    const problems: string[] = [];
    const lab = (await rewardLabFor(cfg, (m) => problems.push(m)))!;
    const tr = await createTrainer(cfg, engine, { clock: new VirtualClock(), rewardLab: lab });
    const r = await tr.step();
    expect(r.metrics['reward/bad/mean']).toBe(0);
    expect(r.metrics['reward/ok/mean']).toBeCloseTo(0.5 * mean((r.episodes as TokenEpisode[]).map((ep) => ep.turns)), 12);
    expect(r.metrics['reward/terms_skipped']).toBe(r.episodes.length);
    expect(problems[0]).toMatch(/reward term 'bad' \(line 2\) returned NaN at step 0 of the episode with seed \d+.*counts 0/);
    expect(Array.from(r.episodeAdvantages).every(Number.isFinite)).toBe(true);
    lab.scorer.close();
    await tr.release();

    const stopCfg = config(code, { ...GRPO, reward: { code, onNonFinite: 'stop' } });
    const stopLab = (await rewardLabFor(stopCfg))!;
    const stopper = await createTrainer(stopCfg, engine, { clock: new VirtualClock(), rewardLab: stopLab });
    await expect(stopper.step()).rejects.toThrow(/reward term 'bad' \(line 2\) returned NaN at step 0 of the episode with seed \d+/);
    stopLab.scorer.close();
    await stopper.release();
  });

  it('a text step record holds the action text, the reply after it and the tool facts', { timeout: 20_000 }, async () => {
    const ep = sampleTextEpisode(makeEnv('tools/calculator') as ToolEnv, 'tools/calculator', 3, ['oops', 'calc(2*3)', 'answer(6)']);
    expect(ep.steps.map((s) => [s.actionName, s.info.malformed, s.info.toolCall])).toEqual([['oops', true, null], ['calc(2*3)', false, 'calc'], ['answer(6)', false, null]]);
    expect(ep.steps[1].observation.nextText).toMatch(/6/);
    expect(ep.steps[1].observation.text).toBe(ep.steps[0].observation.nextText);
    expect(ep.steps.map((s) => s.terminated)).toEqual([false, false, true]);
    const scorer = await createRewardSandbox([
      'export const replyHasSix = (s) => (s.observation.nextText.includes("6") ? 1 : 0);',
      'export const isCalc = (s) => (s.actionName.startsWith("calc(") ? 1 : 0);',
      'export const turnsBefore = (s) => s.episode.steps.length + (s.state.goal === null ? 0 : 100);',
    ].join('\n'));
    const [raw] = await scorer.score([ep]);
    expect(Array.from(raw.values.isCalc)).toEqual([0, 1, 0]);
    expect(raw.values.replyHasSix[1]).toBe(1);
    expect(Array.from(raw.values.turnsBefore)).toEqual([0, 1, 2]);
    scorer.close();
  });

  it('the dry run before a tool run catches a looping term at the one-call backstop', { timeout: 20_000 }, async () => {
    const cfg = config('export const spin = () => { for (;;) {} };', { reward: { code: 'export const spin = () => { for (;;) {} };', callTimeoutMs: 50 } });
    await expect(rewardLabFor(cfg)).rejects.toThrow(/reward term 'spin' \(line 1\) ran past its 50 ms limit/);
  });
});
