/**
 * Log-only reward terms and the eval reward against hand-worked episodes.
 */
import { describe, expect, it } from 'vitest';
import { addTermRewards } from './rewardTerms.ts';
import { addEvalReward, rewardTermNameIssues } from './userTerms.ts';
import { SHAPING_TERMS } from './shaping.ts';

describe('log-only terms', () => {
  // Three steps, env reward 1 at the end; two user terms.
  const shaped = { total: 1, terms: { outcome: 1 } as Record<string, number>, perStep: Float64Array.from([0, 0, 1]) };
  const user = { stepCost: Float64Array.from([-0.1, -0.1, -0.1]), bonus: Float64Array.from([2, 0, 0]) };
  it('a trained term joins total and perStep; a log-only one is recorded in terms only', () => {
    const r = addTermRewards(shaped, user, ['bonus']);
    expect(r.total).toBeCloseTo(0.7, 12); // 1 − 0.3, the bonus's 2 left out
    expect(Array.from(r.perStep)).toEqual([-0.1, -0.1, 0.9]);
    expect(r.terms.bonus).toBe(2);
    expect(r.terms.stepCost).toBeCloseTo(-0.3, 12);
  });
  it('without log-only names both are trained (total 2.7)', () => {
    expect(addTermRewards(shaped, user).total).toBeCloseTo(2.7, 12);
  });
});

describe('the eval reward', () => {
  it('eval/reward_mean = Σ of the named terms\' reward/<term>/mean (a mean of sums is the sum of means)', () => {
    const m: Record<string, number> = { 'reward/outcome/mean': 0.5, 'reward/bonus/mean': 1.25, 'reward/stepCost/mean': -0.3 };
    addEvalReward(m, ['outcome', 'bonus']);
    expect(m['eval/reward_mean']).toBe(1.75);
  });
  it('no eval terms: no key; a term the run does not score: an error naming it', () => {
    const m: Record<string, number> = {};
    addEvalReward(m, []);
    expect(m).toEqual({});
    expect(() => addEvalReward({}, ['nope'])).toThrow("reward.evalTerms: 'nope' is no term this run scores");
  });
  it('names are checked against the code\'s exports and the shaping terms, with messages naming the field', () => {
    const rw = (logOnly: string[], evalTerms: string[], code = 'x') => rewardTermNameIssues({ code, logOnly, evalTerms }, code ? ['stepCost', 'bonus'] : null, SHAPING_TERMS);
    expect(rw(['bonus'], ['outcome', 'bonus'])).toEqual([]);
    expect(rw(['outcome'], [])[0]).toMatch(/^reward\.logOnly: 'outcome' is not a term of the reward code \(its terms: stepCost, bonus\); a shaping term is left out of training by weight 0$/);
    expect(rw([], ['bonsu'])[0]).toMatch(/^reward\.evalTerms: 'bonsu' is neither a term of the reward code/);
    expect(rw(['bonus'], ['outcome'], '')).toEqual([
      'reward.logOnly: names reward-lab terms, but reward.code is empty; write the terms or use []',
      'reward.evalTerms: the eval reward is computed with the reward lab, but reward.code is empty; write the terms or use []',
    ]);
  });
});
