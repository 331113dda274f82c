/**
 * Counterfactual re-scoring on real episodes: a short GRPO run on the empty 8×8 room (ort-web
 * WASM in Node), its batches frozen, re-scored in QuickJS with edited terms.
 */
import { describe, expect, it } from 'vitest';
import { defaultsFor } from '../../core/algos/config.ts';
import '../../core/envs/index.ts';
import type { FrozenEpisode } from '../../core/reward/rescore.ts';
import { DEFAULT_STEP_TRAINER } from '../../core/trainer/stepConfig.ts';
import { createStepTrainer } from '../../core/trainer/stepCollector.ts';
import { loadNodeEngine } from '../engine/node.ts';
import { createRewardSandbox } from './quickjs.ts';
import { prepareRescore, rescoreEpisodes, type RescoreCache, type RescoreRequest } from './rescore.ts';

const algo = { ...defaultsFor('grpo'), lr: 1e-3, groupSize: 8 };
const config = { ...DEFAULT_STEP_TRAINER, env: { id: 'grid/empty-8x8' }, algo, groups: 8, learnerBatch: 512, seed: 1 };
const OLD = 'export const forward = (s) => (s.actionName === "forward" ? 0.01 : 0);\n';

/** Three iterations of a run scored by OLD, frozen as the page freezes them. */
async function frozenRun(): Promise<FrozenEpisode[]> {
  const engine = await loadNodeEngine('ort-web-wasm');
  const scorer = await createRewardSandbox(OLD);
  const t = await createStepTrainer(config, engine, undefined, undefined, { scorer, onNonFinite: 'skip' });
  const out: FrozenEpisode[] = [];
  for (let k = 0; k < 3; k++) {
    const r = await t.step();
    r.episodes.forEach((ep, index) =>
      out.push({ iteration: r.iteration, index, seed: ep.seed, group: ep.group, actions: Array.from(ep.actions), rewards: Array.from(ep.rewards), total: r.episodeRewards[index], advantage: r.episodeAdvantages[index], success: ep.success }),
    );
  }
  scorer.close();
  await t.release();
  return out;
}

const request = (episodes: FrozenEpisode[], newCode: string): RescoreRequest => ({ envId: 'grid/empty-8x8', envKwargs: {}, algo, oldCode: OLD, newCode, callTimeoutMs: 100, episodes });

describe('re-scoring a frozen buffer', () => {
  it('recomputes the run\'s own advantages, and a per-step cost flips some of them', { timeout: 120_000 }, async () => {
    const eps = await frozenRun();
    // The same code again: nothing moves, and the recomputed advantages are the trainer's.
    const cache: RescoreCache = { current: null };
    const same = await rescoreEpisodes({ ...request(eps, OLD), bufferId: 'b1' }, cache);
    if (!same.ok) throw new Error(same.message);
    same.result.episodes.forEach((e, i) => {
      expect(e.oldAdv).toBeCloseTo(eps[i].advantage, 9);
      expect(e.newReturn).toBeCloseTo(e.oldReturn, 12);
    });
    expect(same.result.flips).toBe(0);
    expect(same.result.moved).toEqual([]);

    // Keep 'forward', add a cost on every step.
    const kept = cache.current;
    const r = await rescoreEpisodes({ ...request(eps, `${OLD}export const stepCost = (s) => -0.05;\n`), bufferId: 'b1' }, cache);
    if (!r.ok) throw new Error(r.message);
    // The same buffer again: its replay and old values come from the cache, not a second replay.
    expect(kept?.key).toMatch(/^b1/);
    expect(cache.current).toBe(kept);
    // Prepared at freeze time: the re-score that follows finds the replay and old values ready.
    const early: RescoreCache = { current: null };
    expect(await prepareRescore({ ...request(eps, ''), bufferId: 'b2' }, early)).toBeNull();
    const ready = early.current;
    expect(ready?.key).toMatch(/^b2/);
    const later = await rescoreEpisodes({ ...request(eps, `${OLD}export const stepCost = (s) => -0.05;\n`), bufferId: 'b2' }, early);
    expect(early.current).toBe(ready);
    expect(later.ok && later.result.flips).toBe(r.result.flips);
    // Without the cache, the same answer.
    const fresh = await rescoreEpisodes(request(eps, `${OLD}export const stepCost = (s) => -0.05;\n`));
    expect(fresh.ok && fresh.result.episodes).toEqual(r.result.episodes);
    expect(r.newTerms).toEqual(['forward', 'stepCost']);
    const cost = r.result.distributions.find((d) => d.name === 'stepCost')!;
    expect(cost.before).toBeNull();
    expect(cost.afterSummary!.mean).toBeCloseTo(-0.05 * (eps.reduce((s, e) => s + e.actions.length, 0) / eps.length), 9);
    r.result.episodes.forEach((e, i) => expect(e.newReturn - e.oldReturn).toBeCloseTo(-0.05 * eps[i].actions.length, 9));
    console.log(`${eps.length} episodes, ${r.result.flips} flips, ${r.result.changed} changed, ${r.ms.toFixed(0)} ms`);
    expect(r.result.flips).toBeGreaterThan(0);
  });

  it('answers a term that throws or loops with the sandbox\'s message, naming the term and line', { timeout: 60_000 }, async () => {
    const eps: FrozenEpisode[] = [{ iteration: 0, index: 0, seed: 5, group: 0, actions: [2, 2, 1], rewards: [0, 0, 0], total: 0, advantage: 0, success: false }];
    const thrown = await rescoreEpisodes({ ...request(eps, 'export const ok = () => 0;\nexport const bad = (s) => s.nope.x;\n'), oldCode: '' });
    expect(thrown).toMatchObject({ ok: false, which: 'new', term: 'bad' });
    expect(!thrown.ok && thrown.message).toMatch(/reward term 'bad' threw TypeError: .*\(line 2\) at step 0 of the episode with seed 5/);
    const loop = await rescoreEpisodes({ ...request(eps, 'export const spin = () => { for (;;) {} };\n'), oldCode: '' });
    expect(!loop.ok && loop.message).toMatch(/reward term 'spin' \(line 1\) ran past its 100 ms limit/);
    // Actions that do not replay to the recorded rewards are refused, not scored.
    const wrong = await rescoreEpisodes({ ...request([{ ...eps[0], rewards: [1, 0, 0] }], ''), oldCode: '' });
    expect(wrong).toMatchObject({ ok: false, which: 'replay' });
  });
});
