import { describe, expect, it } from 'vitest';
import { discountedReturns, gigpoAdvantages, stepGroupAdvantages } from './stepGroups.ts';

// Two episodes of one group, γ = ½. State A starts both; C is reached by both at different steps.
//   ep0: A → B → C, rewards 0, 0, 1   returns ¼, ½, 1
//   ep1: A → C → E, rewards 0, 0, 0   returns 0, 0, 0
// Step groups: A = {¼, 0} (mean ⅛), C = {1, 0} (mean ½); B and E are seen once.
const group = [
  { stateKeys: ['A', 'B', 'C'], rewards: [0, 0, 1] },
  { stateKeys: ['A', 'C', 'E'], rewards: [0, 0, 0] },
];

describe('GiGPO step groups', () => {
  it('discounted returns from each step', () => {
    expect(Array.from(discountedReturns([0, 0, 1], 0.5))).toEqual([0.25, 0.5, 1]);
    expect(Array.from(discountedReturns([], 0.9))).toEqual([]);
  });

  it('step advantages compare returns from the same state; states seen once get 0', () => {
    const r = stepGroupAdvantages(group, { gamma: 0.5, normalizeStd: false, eps: 0 });
    expect(Array.from(r.advantages[0])).toEqual([0.125, 0, 0.5]);
    expect(Array.from(r.advantages[1])).toEqual([-0.125, -0.5, 0]);
    expect([r.stepGroups, r.groupedSteps]).toEqual([2, 4]);
    // With the std: a two-member group's sample std is |a − b|/√2, so its members get ±1/√2.
    const n = stepGroupAdvantages(group, { gamma: 0.5, normalizeStd: true, eps: 0 });
    expect(n.advantages[0][0]).toBeCloseTo(Math.SQRT1_2, 12);
    expect(n.advantages[1][1]).toBeCloseTo(-Math.SQRT1_2, 12);
    expect(n.advantages[0][1]).toBe(0);
  });

  it('GiGPO adds ω times the step advantage to the GRPO episode advantage', () => {
    const r = gigpoAdvantages(group, [1, 0], 2, { gamma: 0.5, normalizeStd: true, eps: 0, omega: 1 });
    // Totals 1 and 0: GRPO gives ±1/√2 to every step of each episode.
    expect(Array.from(r.episodeAdvantages).map((x) => +x.toFixed(12))).toEqual([+Math.SQRT1_2.toFixed(12), -Math.SQRT1_2.toFixed(12)]);
    const s = Math.SQRT1_2;
    expect(Array.from(r.advantages[0])).toEqual([s + s, s, s + s].map((x) => expect.closeTo(x, 12)));
    expect(Array.from(r.advantages[1])).toEqual([-s - s, -s - s, -s].map((x) => expect.closeTo(x, 12)));
    expect(r.stepGroupsPerGroup).toBe(2);
    expect(r.groupedStepShare).toBeCloseTo(4 / 6, 12);
    // ω = 0 is plain GRPO.
    const plain = gigpoAdvantages(group, [1, 0], 2, { gamma: 0.5, normalizeStd: true, eps: 0, omega: 0 });
    expect(plain.advantages[0].every((x) => x === plain.episodeAdvantages[0])).toBe(true);
  });

  it('a step group whose returns are all equal gives exactly 0, even with the std and eps 0', () => {
    const same = [
      { stateKeys: ['A', 'B'], rewards: [0, 1] },
      { stateKeys: ['A', 'C'], rewards: [0, 1] },
    ];
    const r = stepGroupAdvantages(same, { gamma: 1, normalizeStd: true, eps: 0 });
    expect(r.advantages.flatMap((a) => Array.from(a))).toEqual([0, 0, 0, 0]);
  });

  it('refuses mismatched keys and partial groups', () => {
    expect(() => stepGroupAdvantages([{ stateKeys: ['A'], rewards: [0, 1] }], { gamma: 1, normalizeStd: false, eps: 0 })).toThrow(/1 state keys for 2 rewards/);
    expect(() => gigpoAdvantages(group, [1, 0], 3, { gamma: 1, normalizeStd: false, eps: 0, omega: 1 })).toThrow(/not a whole number of groups/);
  });
});
