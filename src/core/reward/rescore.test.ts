/** Counterfactual re-scoring's pure half, against hand-worked examples. */
import { describe, expect, it } from 'vitest';
import { defaultsFor } from '../algos/config.ts';
import { groupAdvantages, histograms, quantile, rescoreBuffer, summarize, type FrozenEpisode, type TermValues } from './rescore.ts';

const ep = (iteration: number, group: number, total: number, T: number, advantage = 0): FrozenEpisode => ({
  iteration,
  index: 0,
  seed: 7,
  group,
  actions: new Array<number>(T).fill(2),
  rewards: new Array<number>(T).fill(0),
  total,
  advantage,
  success: total > 0,
});
const none = (n: number): TermValues => ({ terms: [], values: Array.from({ length: n }, () => ({})) });
const perStep = (name: string, eps: FrozenEpisode[], v: number): TermValues => ({ terms: [name], values: eps.map((e) => ({ [name]: new Float64Array(e.actions.length).fill(v) })) });

describe('re-scoring statistics', () => {
  it('quantiles interpolate linearly; summaries hold the five numbers, mean and sample std', () => {
    expect(quantile([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(quantile([1, 2, 3, 4], 0.25)).toBe(1.75);
    const s = summarize([4, 1, 3, 2]);
    expect([s.min, s.q1, s.median, s.q3, s.max, s.mean]).toEqual([1, 1.75, 2.5, 3.25, 4, 2.5]);
    expect(s.std).toBeCloseTo(Math.sqrt(5 / 3), 12);
  });

  it('histograms share bins across before and after; the maximum lands in the last bin', () => {
    const h = histograms('x', [0, 1, 2], [2, 3], 3);
    expect(h.edges).toEqual([0, 1, 2, 3]);
    expect(h.before).toEqual([1, 1, 1]);
    expect(h.after).toEqual([0, 0, 2]);
    // A new term (no before) and a constant one (a bin of width 1 around it).
    const c = histograms('c', null, [-0.5, -0.5], 2);
    expect(c.before).toBeNull();
    expect(c.edges).toEqual([-1, -0.5, 0]);
    expect(c.after).toEqual([0, 2]);
  });

  it('groups by (iteration, group), each through the run\'s estimator', () => {
    const eps = [ep(3, 0, 1, 1), ep(3, 1, 0, 1), ep(3, 0, 0, 1), ep(4, 0, 2, 1), ep(3, 1, 1, 1), ep(4, 0, 0, 1)];
    const a = groupAdvantages({ ...defaultsFor('drgrpo'), groupSize: 2 }, eps, eps.map((e) => e.total));
    // Pairs: (0, 2) → ±0.5; (1, 4) → ∓0.5; (3, 5) of iteration 4 → ±1.
    expect(Array.from(a)).toEqual([0.5, -0.5, -0.5, 1, 0.5, -1]);
    // REINFORCE (group −1): one batch per iteration, return minus the batch mean.
    const r = groupAdvantages(defaultsFor('reinforce'), [ep(0, -1, 1, 1), ep(0, -1, 0, 1), ep(1, -1, 5, 1)], [1, 0, 5]);
    expect(Array.from(r)).toEqual([0.5, -0.5, 0]);
  });

  it('REINFORCE++ normalises over the whole batch, each episode weighing its steps', () => {
    // Iteration 0, groups [1, 0] and [1, 1] with 2, 3, 1, 4 steps: a = [0.5, −0.5, 0, 0];
    // over the 10 steps μ = −0.05, σ² = 1.225/9. Iteration 1 is its own batch: [2, 0] → ±1 over 2 steps, σ² = 2 → ±1/√(2 + 1e-8).
    const eps = [ep(0, 0, 1, 2), ep(0, 1, 1, 1), ep(1, 0, 2, 1), ep(0, 0, 0, 3), ep(0, 1, 1, 4), ep(1, 0, 0, 1)];
    const a = groupAdvantages({ ...defaultsFor('reinforcepp'), groupSize: 2 }, eps, eps.map((e) => e.total));
    const s = Math.sqrt(1.225 / 9 + 1e-8);
    const s1 = Math.sqrt(2 + 1e-8);
    [0.55 / s, 0.05 / s, 1 / s1, -0.45 / s, 0.05 / s, -1 / s1].forEach((w, i) => expect(a[i]).toBeCloseTo(w, 10));
  });
});

describe('rescoreBuffer', () => {
  it('a step cost moves returns by −c·T and flips the advantage of a long success (Dr.GRPO, worked by hand)', () => {
    // One group of four: totals 0.5, 0.4, 0, 0 with lengths 2, 8, 1, 1; mean 0.225.
    // Old advantages: 0.275, 0.175, −0.225, −0.225. A step cost of −0.1: returns 0.3, −0.4, −0.1,
    // −0.1, mean −0.075; new advantages 0.375, −0.325, −0.025, −0.025: episode 1 flips.
    const eps = [ep(0, 0, 0.5, 2), ep(0, 0, 0.4, 8), ep(0, 0, 0, 1), ep(0, 0, 0, 1)];
    const r = rescoreBuffer({ ...defaultsFor('drgrpo'), groupSize: 4 }, eps, none(4), perStep('stepCost', eps, -0.1));
    const close = (xs: number[], ys: number[]) => xs.forEach((x, i) => expect(x).toBeCloseTo(ys[i], 12));
    close(r.episodes.map((e) => e.newReturn), [0.3, -0.4, -0.1, -0.1]);
    close(r.episodes.map((e) => e.oldAdv), [0.275, 0.175, -0.225, -0.225]);
    close(r.episodes.map((e) => e.newAdv), [0.375, -0.325, -0.025, -0.025]);
    expect(r.episodes.map((e) => e.flip)).toEqual([false, true, false, false]);
    expect(r.flips).toBe(1);
    expect(r.changed).toBe(4);
    // Most moved by |Δ advantage|: 0.5 (ep 1), 0.2 (eps 2, 3), 0.1 (ep 0).
    expect(r.moved).toEqual([1, 2, 3, 0]);
    // The new term has only an 'after' side; the return has both.
    expect(r.distributions.map((d) => [d.name, d.before !== null, d.after !== null])).toEqual([
      ['stepCost', false, true],
      ['return', true, true],
    ]);
    const cost = r.distributions[0].afterSummary!;
    expect(cost.min).toBeCloseTo(-0.8, 12);
    expect(cost.max).toBeCloseTo(-0.1, 12);
    expect(cost.mean).toBeCloseTo(-0.3, 12);
  });

  it('swapping a term takes the old one out of the return; an unchanged term moves nothing', () => {
    const eps = [ep(0, 0, 1.2, 2), ep(0, 0, 0.2, 2)];
    const before: TermValues = { terms: ['keep', 'bonus'], values: [{ keep: [0.1, 0.1], bonus: [0.5, 0.5] }, { keep: [0.1, 0.1], bonus: [0, 0] }] };
    const after: TermValues = { terms: ['keep', 'cost'], values: [{ keep: [0.1, 0.1], cost: [-1, 0] }, { keep: [0.1, 0.1], cost: [0, 0] }] };
    const r = rescoreBuffer({ ...defaultsFor('grpo'), groupSize: 2 }, eps, before, after);
    // 1.2 − 1 (bonus) − 1 (cost) = −0.8; 0.2 unchanged: the group's order reverses.
    expect(r.episodes.map((e) => e.newReturn)).toEqual([1.2 - 1 - 1, 0.2]);
    expect(r.flips).toBe(2);
    expect(r.distributions.map((d) => [d.name, d.before !== null, d.after !== null])).toEqual([
      ['keep', true, true],
      ['bonus', true, false],
      ['cost', false, true],
      ['return', true, true],
    ]);
    expect(r.distributions[0].before).toEqual(r.distributions[0].after);
  });

  it('the same terms again leave every return bit-for-bit, so a group of equal returns stays at advantage 0', () => {
    // Equal totals, term sums 0.1 + 0.2 and 0.3 + 0: total − Σ old + Σ new gives 0.9 and
    // 0.9000000000000001, a spread GRPO would turn into advantages of ±0.7.
    const eps = [ep(0, 0, 0.9, 2), ep(0, 0, 0.9, 2)];
    const terms: TermValues = { terms: ['a'], values: [{ a: [0.1, 0.2] }, { a: [0.3, 0] }] };
    const r = rescoreBuffer({ ...defaultsFor('grpo'), groupSize: 2 }, eps, terms, terms);
    expect(r.episodes.map((e) => [e.newReturn, e.newAdv])).toEqual([
      [0.9, 0],
      [0.9, 0],
    ]);
    expect(r.moved).toEqual([]);
  });

  it('PPO: the first-step advantage moves by Σ (γλ)^t Δr_t', () => {
    const algo = { ...defaultsFor('ppo'), gamma: 0.5, lambda: 1 };
    const eps = [ep(0, -1, 0, 3, 0.3), ep(0, -1, 0, 3, 0.1)];
    const r = rescoreBuffer(algo, eps, none(2), perStep('c', eps, -0.1));
    // −0.1 − 0.05 − 0.025 = −0.175.
    expect(r.episodes[0].newAdv).toBeCloseTo(0.125, 12);
    expect(r.episodes[1].newAdv).toBeCloseTo(-0.075, 12);
    expect(r.episodes.map((e) => e.flip)).toEqual([false, true]);
  });

  it('an edit that changes nothing lists no moved episode and no flip', () => {
    const eps = [ep(0, 0, 1, 2), ep(0, 0, 0, 2)];
    const r = rescoreBuffer({ ...defaultsFor('grpo'), groupSize: 2 }, eps, none(2), none(2));
    expect([r.flips, r.changed, r.moved.length]).toEqual([0, 0, 0]);
  });
});
