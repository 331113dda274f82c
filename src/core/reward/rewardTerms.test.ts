import { describe, expect, it } from 'vitest';
import { addTermRewards, exportLine, resolveTermScores, RewardTermError } from './rewardTerms.ts';

describe('reward terms contract', () => {
  it('adds per-step term values to perStep, total and terms, without touching the input', () => {
    const shaped = { total: 1, terms: { outcome: 1 }, perStep: Float64Array.from([0, 0, 1]) };
    const out = addTermRewards(shaped, { stepCost: Float64Array.from([-0.1, -0.1, -0.1]), bonus: Float64Array.from([0, 0.5, 0]) });
    expect(Array.from(out.perStep)).toEqual([-0.1, 0.4, 0.9]);
    expect(out.total).toBeCloseTo(1.2, 12);
    expect(out.terms).toEqual({ outcome: 1, stepCost: expect.closeTo(-0.3, 12), bonus: 0.5 });
    expect(Array.from(shaped.perStep)).toEqual([0, 0, 1]);
    expect(addTermRewards(shaped, undefined)).toBe(shaped);
    expect(() => addTermRewards(shaped, { x: new Float64Array(2) })).toThrow(/2 values for 3 steps/);
  });

  it('never lets a non-finite value through, whatever the scorer says', () => {
    const raw = { values: { a: Float64Array.from([1, Infinity]) }, bad: [] };
    const r = resolveTermScores(raw, 'skip', { seed: 3, lineOf: () => null });
    expect(Array.from(r.values.a)).toEqual([0, 0]);
    expect(r.skipped[0]).toMatch(/reward term 'a' gave a non-finite value in the episode with seed 3/);
    expect(() => resolveTermScores(raw, 'stop', { seed: 3, lineOf: () => null })).toThrow(RewardTermError);
  });

  it('finds the line of an export, for messages', () => {
    const code = '// x\nexport const a = () => 1;\nexport function b() { return 2 }\nconst c = () => 3;\nexport { c };\nexport async function* $d() {}\n';
    expect([exportLine(code, 'a'), exportLine(code, 'b'), exportLine(code, 'c'), exportLine(code, '$d'), exportLine(code, 'zz')]).toEqual([2, 3, 5, 6, null]);
  });
});
