import { describe, expect, it } from 'vitest';
import { best, outcomeHealth, explorationHealth, recent, shiftHealth, signalHealth } from './health.ts';
import { rewardHealth } from './rewardHealth.ts';

const ln7 = Math.log(7);

describe('recent', () => {
  it('averages the last three finite values of a key and skips gaps', () => {
    const h: Record<string, number>[] = [{ a: 100 }, { a: 1 }, {}, { a: 2 }, { a: NaN }, { a: 6 }];
    expect(recent(h, 'a')).toBe(3);
    expect(Number.isNaN(recent([{}], 'a'))).toBe(true);
  });
});

describe('health verdicts', () => {
  it('exploration: low entropy is collapse before success, convergence after', () => {
    const collapsed = Array(3).fill({ 'actor/rollout_entropy': 0.05 * ln7, 'episode/success_rate': 0.3 });
    const converged = Array(3).fill({ 'actor/rollout_entropy': 0.05 * ln7, 'episode/success_rate': 0.98 });
    const healthy = Array(3).fill({ 'actor/rollout_entropy': 0.9 * ln7, 'episode/success_rate': 0.2 });
    expect(explorationHealth(collapsed, 7).level).toBe('bad');
    expect(explorationHealth(collapsed, 7).text).toMatch(/entropy coef/);
    expect(explorationHealth(converged, 7).level).toBe('ok');
    expect(explorationHealth(healthy, 7).text).toMatch(/90% of its maximum/);
    expect(explorationHealth([], 7).level).toBe('idle');
  });

  it('exploration: token policies (|A| = vocabulary) read nats per token, not a share of ln|V|', () => {
    // 0.3 nats per token is a healthy tool-call policy but only 6% of ln 107: the small-|A|
    // rule would call it collapsed.
    const healthy = Array(3).fill({ 'actor/rollout_entropy': 0.3, 'episode/success_rate': 0.4 });
    expect(0.3 / Math.log(107)).toBeLessThan(0.1);
    expect(explorationHealth(healthy, 107).level).toBe('ok');
    expect(explorationHealth(healthy, 107).text).toMatch(/0\.300 nats per token/);
    const thinning = Array(3).fill({ 'actor/rollout_entropy': 0.02, 'episode/success_rate': 0.4 });
    expect(explorationHealth(thinning, 107).level).toBe('warn');
    const collapsed = Array(3).fill({ 'actor/rollout_entropy': 0.005, 'episode/success_rate': 0.4 });
    expect(explorationHealth(collapsed, 107).level).toBe('bad');
    expect(explorationHealth(Array(3).fill({ 'actor/rollout_entropy': 0.005, 'episode/success_rate': 0.95 }), 107).label).toBe('converged');
    // A text action space with unknown size is flagged as tokens explicitly.
    expect(explorationHealth(healthy, 0, true).level).toBe('ok');
    // The same 0.3 nats with 7 actions is 15% of ln 7: narrowing.
    expect(explorationHealth(healthy, 7).level).toBe('warn');
  });

  it('signal: all zero-spread groups while failing says to raise group size / shape / dynamic sampling', () => {
    const v = signalHealth(Array(3).fill({ 'groups/frac_zero_std': 1, 'episode/success_rate': 0 }), true);
    expect(v.level).toBe('bad');
    expect(v.text).toMatch(/group size.*shape the reward.*dynamic sampling/);
    expect(signalHealth(Array(3).fill({ 'groups/frac_zero_std': 1, 'episode/success_rate': 1 }), true).level).toBe('ok');
    expect(signalHealth(Array(3).fill({ 'groups/frac_zero_std': 0.6, 'episode/success_rate': 0.4 }), true).level).toBe('warn');
    expect(signalHealth(Array(3).fill({ 'adv/std': 0 }), false).level).toBe('bad');
  });

  it('signal: a distill stage after a grouped RL stage is not applicable, not the RL stage\'s verdict', () => {
    const rl = Array(3).fill({ 'groups/frac_zero_std': 1, 'episode/success_rate': 0, 'pipeline/stage': 1 });
    expect(signalHealth(rl, true).level).toBe('bad');
    const distill = [...rl, { 'distill/teacher_prob': 0.4, 'episode/success_rate': 0.1, 'pipeline/stage': 2 }];
    const v = signalHealth(distill, true);
    expect(v.level).toBe('idle');
    expect(v.label).toBe('not applicable');
    expect(v.text).toMatch(/teacher/);
  });

  it('shift: a large approx KL says to lower the learning rate', () => {
    const v = shiftHealth([{ 'actor/approx_kl': 0.2, 'actor/clipfrac_low': 0, 'actor/clipfrac_high': 0 }]);
    expect(v.level).toBe('bad');
    expect(v.text).toMatch(/lower the learning rate/);
    expect(shiftHealth([{ 'actor/approx_kl': 0.001, 'actor/clipfrac_low': 0.01, 'actor/clipfrac_high': 0, 'mismatch/logprob_abs_diff_max': 1e-7 }]).level).toBe('ok');
    expect(shiftHealth([{ 'actor/approx_kl': 0.001, 'actor/clipfrac_low': 0, 'actor/clipfrac_high': 0, 'mismatch/logprob_abs_diff_max': 0.01 }]).level).toBe('warn');
  });
});

describe('shift: green only on-policy or corrected (it once read green "bounded" at staleness 2.0-2.43 in the Shift lesson)', () => {
  const it3 = (m: Record<string, number>) => Array.from({ length: 3 }, () => ({ 'actor/approx_kl': 0.004, 'actor/clipfrac_low': 0.01, 'actor/clipfrac_high': 0.01, ...m }));
  it('staleness 0: bounded', () => {
    expect(shiftHealth(it3({ 'async/staleness_mean': 0, 'async/staleness_max': 0 }))).toMatchObject({ level: 'ok', label: 'bounded' });
    // Synchronous runs log no staleness at all: on-policy.
    expect(shiftHealth(it3({}))).toMatchObject({ level: 'ok', label: 'bounded' });
  });
  it('stale without correction: says how stale and what corrects it; bad above 2 versions', () => {
    // Lesson 4 step 1 measured 2.0-2.43 (before: ok 'bounded' up to 2.0, and a warning above).
    const bad = shiftHealth(it3({ 'async/staleness_mean': 2.2, 'async/staleness_max': 4 }));
    expect(bad).toMatchObject({ level: 'bad', label: 'stale, uncorrected' });
    expect(bad.text).toBe('Actions are 2.2 policy versions old on average (up to 4) and nothing corrects for it: the learner trains on an older policy\'s choices. Turn on TIS (algo.tis) to re-weight them, or lower the max staleness (rollout.maxStaleness; 0 trains on-policy).');
    expect(shiftHealth(it3({ 'async/staleness_mean': 1, 'async/staleness_max': 2 }))).toMatchObject({ level: 'warn', label: 'stale, uncorrected' });
    expect(shiftHealth(it3({ 'async/staleness_mean': 1 }), { tis: false, cap: 2 }).level).toBe('warn');
  });
  it('stale with TIS whose weights are within bounds: corrected; with most ratios over the cap: a warning', () => {
    const ok = shiftHealth(it3({ 'async/staleness_mean': 2.2, 'async/staleness_max': 4, 'async/is_ratio_max': 1.31, 'async/is_clipfrac': 0.02 }), { tis: true, cap: 2 });
    expect(ok).toMatchObject({ level: 'ok', label: 'corrected' });
    expect(ok.text).toBe("Actions are 2.2 policy versions old on average (up to 4); TIS re-weights them by min(π_old/μ, 2) (largest ratio 1.31, 2% truncated): the learner's gradient is corrected for the policy that acted.");
    const over = shiftHealth(it3({ 'async/staleness_mean': 2.2, 'async/is_ratio_max': 9, 'async/is_clipfrac': 0.4 }), { tis: true, cap: 2 });
    expect(over).toMatchObject({ level: 'warn', label: 'over the cap' });
    expect(over.text).toMatch(/40% of the importance ratios exceed the cap of 2/);
    // A jumping policy is still bad, corrected or not.
    expect(shiftHealth(it3({ 'actor/approx_kl': 0.2, 'async/staleness_mean': 1, 'async/is_clipfrac': 0 }), { tis: true, cap: 2 }).level).toBe('bad');
  });
});

describe('outcome: regressions the invariants miss', () => {
  // A solved 8×8 run, then a live entropy coef of 0.5: entropy climbs back toward uniform (ln 7 ≈ 1.95)
  // and success falls, while the signal stays "healthy" (groups keep differing).
  const solved = Array.from({ length: 6 }, () => ({ 'episode/success_rate': 1, 'actor/rollout_entropy': 0.2, 'groups/frac_zero_std': 0.9, 'episode/distinct_ratio': 0.3 }));
  const falling = [0.9, 0.7, 0.5, 0.3, 0.25].map((s, i) => ({ 'episode/success_rate': s, 'actor/rollout_entropy': 1.3 + 0.15 * i, 'groups/frac_zero_std': 0.2, 'episode/distinct_ratio': 1 }));

  it('best is the best 3-iteration mean so far', () => {
    expect(best([{ a: 0 }, { a: 0.6 }, { a: 0.9 }, { a: 0.3 }, {}, { a: 0.3 }], 'a')).toBeCloseTo(0.6, 12);
    expect(best([], 'a')).toBeNaN();
  });

  it('turns to warning, then bad, as success falls from its best; says which window it averages', () => {
    expect(outcomeHealth(solved)).toMatchObject({ level: 'ok', label: 'solved' });
    // (1 + 0.9 + 0.7) / 3 ≈ 0.867: 13 points below the best 1.0 → slipping.
    expect(outcomeHealth([...solved, ...falling.slice(0, 2)])).toMatchObject({ level: 'warn', label: 'slipping' });
    const bad = outcomeHealth([...solved, ...falling.slice(0, 3)]);
    expect(bad).toMatchObject({ level: 'bad', label: 'regressing' });
    expect(bad.text).toBe('Success fell to 70% (mean of the last 3 iterations) from its best of 100% while training goes on: recent updates are unlearning the task; undo the last setting change or lower the learning rate.');
    expect(signalHealth([...solved, ...falling], true).level).toBe('ok');
  });

  it('explains high-entropy collapse: entropy back near uniform while success fell', () => {
    const v = explorationHealth([...solved, ...falling], 7);
    expect(v).toMatchObject({ level: 'bad', label: 'scattered' });
    expect(v.text).toMatch(/^Entropy rose to 9\d% of its maximum while success fell from 100% to 35%: the policy is close to random again/);
  });

  it('never green once success is under a third of its best or back at 0, however low the best (lesson 2.1: 22% → 0%)', () => {
    const sr = (xs: number[]) => xs.map((s) => ({ 'episode/success_rate': s }));
    const collapse = outcomeHealth(sr([0.1, 0.2, 0.3, 0.25, 0.2, 0.1, 0, 0, 0]));
    expect(collapse).toMatchObject({ level: 'bad', label: 'lost' });
    expect(collapse.text).toBe('Success is 0% (mean of the last 3 iterations), back to nothing after its best of 25%: recent updates are unlearning the task; undo the last setting change or lower the learning rate.');
    // 20% best, 5% now: under a third, though the drop (15 points) is under the 25-point bar.
    expect(outcomeHealth(sr([0.2, 0.2, 0.2, 0.05, 0.05, 0.05]))).toMatchObject({ level: 'bad', label: 'regressing' });
    // One lucky success early on, then none: a warning, not a verdict.
    const luck = outcomeHealth(sr([0, 0.05, 0, 0, 0, 0]));
    expect(luck).toMatchObject({ level: 'warn', label: 'lost' });
    expect(luck.text).toMatch(/may have been luck/);
    // Never above 0: nothing lost, nothing held. Never green: idle early, a warning after 6 iterations
    // (lesson 5 step 1, lesson 9 step 2 and lesson 1 step 1 read green "holding" at 0% with a best of 0%).
    expect(outcomeHealth(sr([0, 0, 0, 0]))).toMatchObject({ level: 'idle', label: 'no success yet' });
    const none = outcomeHealth(sr([0, 0, 0, 0, 0, 0, 0]));
    expect(none).toMatchObject({ level: 'warn', label: 'no success yet' });
    expect(none.text).toBe('No episode has succeeded in 7 iterations: with no success in any group there is nothing to learn from; shape the reward (potential), raise the group size, or keep entropy up.');
  });

  it('names the change a person made after the best window as the likely cause', () => {
    const v = outcomeHealth([...solved, ...falling.slice(0, 3)], [
      { iteration: 2, what: 'Learning rate' },
      { iteration: 6, what: 'Entropy coef' },
    ]);
    expect(v).toMatchObject({ level: 'bad', label: 'regressing' });
    expect(v.text).toBe('Success fell to 70% (mean of the last 3 iterations) from its best of 100% since Entropy coef changed at iteration 7: undo that change to check it is the cause.');
    // A change made before the best window is not blamed.
    expect(outcomeHealth([...solved, ...falling.slice(0, 3)], [{ iteration: 0, what: 'Learning rate' }]).text).toMatch(/or lower the learning rate\.$/);
  });

  it('names the change made before the fall began (the hack), not one made after it (the fix), as on door-key', () => {
    // Success holds at 60% while a hackable term is applied (reward code v1 at index 5), then falls
    // from index 9; the fix (v2, potential-based) comes at index 13 and success stays at 0.
    const S = [0.5, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.55, 0.3, 0.1, 0, 0, 0, 0, 0, 0, 0];
    const h = S.map((s) => ({ 'episode/success_rate': s }));
    const changes = [
      { iteration: 5, what: 'the reward code (v1)' },
      { iteration: 13, what: 'the reward code (v2)' },
    ];
    const v = outcomeHealth(h, changes);
    expect(v).toMatchObject({ level: 'bad', label: 'regressing' });
    // Before: "since the reward code (v2) changed at iteration 14", blaming the fix.
    expect(v.text).toBe('Success fell to 0% (mean of the last 3 iterations) from its best of 60% since the reward code (v1) changed at iteration 6: undo that change to check it is the cause.');
    // Only the fix on record: it is not blamed, and the badge says when the fall began.
    const fixOnly = outcomeHealth(h, [changes[1]]);
    expect(fixOnly.text).toBe('Success fell to 0% (mean of the last 3 iterations) from its best of 60%: the fall began at iteration 10, before the reward code (v2) changed at iteration 14, so that change is not its cause.');
    // A change at the fall's first iteration can have caused it.
    expect(outcomeHealth(h, [{ iteration: 9, what: 'Learning rate' }, changes[1]]).text).toMatch(/since Learning rate changed at iteration 10:/);
  });

  it('an early, still-learning run is not a regression', () => {
    expect(outcomeHealth([0, 0.1, 0.2, 0.15, 0.1].map((s) => ({ 'episode/success_rate': s }))).level).toBe('ok');
  });
});

describe('rewardHealth', () => {
  /** Three iterations at (reward, success), then three at the second pair. */
  const series = (r0: number, s0: number, r1: number, s1: number) => [
    ...Array.from({ length: 3 }, () => ({ 'reward/mean': r0, 'episode/success_rate': s0 })),
    ...Array.from({ length: 3 }, () => ({ 'reward/mean': r1, 'episode/success_rate': s1 })),
  ];

  it('a shaped return that rose while success sits at 0 is never aligned (as on the lava map, where shaping paid for dying)', () => {
    // Measured: npm run train -- --env-file examples/envs/lava-crossing.json --seed 1 before the
    // terminal-potential fix: reward/mean and episode/success_rate of its 40 iterations.
    const R = [7.7, 8.33, 10.37, 10.36, 10.34, 10.82, 11.5, 10.98, 11.05, 11.12, 10.76, 10.97, 11.32, 11.17, 10.97, 11.5, 11.48, 11.34, 11.35, 11.37, 11.35, 11.5, 11.5, 11.5, 11.39, 11.5, 11.5, 11.5, 11.5, 11.5, 11.5, 11.5, 11.32, 11.5, 11.5, 11.5, 11.5, 11.5, 11.37, 11.5];
    const S = R.map((_, i) => ([5, 16, 17].includes(i) ? 0.015625 : 0));
    const history = R.map((r, i) => ({ 'reward/mean': r, 'episode/success_rate': S[i] }));
    for (let n = 6; n <= history.length; n++) {
      const v = rewardHealth(history.slice(0, n));
      expect(v.label, `after ${n} iterations: ${v.text}`).not.toBe('aligned');
      expect(v.level, `after ${n} iterations`).not.toBe('ok');
    }
    expect(rewardHealth(history)).toMatchObject({ level: 'warn', label: 'diverging' });
    expect(rewardHealth(history).text).toMatch(/rose 8\.80 → 11\.46 since the first 3 iterations while success did not \(0% → 0%\)/);
    // Flat shaped return, success at 0 all along: not 'aligned' either.
    expect(rewardHealth(Array.from({ length: 9 }, () => ({ 'reward/mean': 2, 'episode/success_rate': 0 })))).toMatchObject({ level: 'idle', label: 'no success yet' });
  });

  it('waits for two windows', () => {
    expect(rewardHealth(series(1, 0.5, 2, 0.3).slice(0, 5)).level).toBe('idle');
  });

  it('shaped return up (1 → 2) while success falls (50% → 30%): gamed', () => {
    const v = rewardHealth(series(1, 0.5, 2, 0.3));
    expect(v).toMatchObject({ level: 'bad', label: 'gamed' });
    expect(v.text).toMatch(/rose 1\.00 → 2\.00 while success fell 50% → 30%/);
  });

  it('shaped return up while success stalls (50% → 51%): diverging', () => {
    expect(rewardHealth(series(1, 0.5, 1.5, 0.51))).toMatchObject({ level: 'warn', label: 'diverging' });
  });

  it('both rise: aligned; a small rise (under 10% of the scale) is not called a rise', () => {
    expect(rewardHealth(series(0.3, 0.3, 0.7, 0.6))).toMatchObject({ level: 'ok', label: 'aligned' });
    expect(rewardHealth(series(1, 0.5, 1.09, 0.4))).toMatchObject({ level: 'ok' });
  });

  it('a solved task whose shaped return still climbs is fine', () => {
    expect(rewardHealth(series(1, 0.95, 1.5, 0.95))).toMatchObject({ level: 'ok' });
  });

  it("a hack that plateaus stays 'gamed' (the hackable preset held 20 iterations); it clears when success recovers or the code changes", () => {
    const pt = (r: number, s: number, version = 1) => ({ 'reward/mean': r, 'episode/success_rate': s, 'reward/version': version });
    const caught = [...Array.from({ length: 3 }, () => pt(1, 0.9)), ...Array.from({ length: 3 }, () => pt(3, 0.6))];
    expect(rewardHealth(caught)).toMatchObject({ level: 'bad', label: 'gamed' });
    const plateau = [...caught, ...Array.from({ length: 20 }, () => pt(3.1, 0.6))];
    // Without memory the last two windows (3.1 vs 3.1, 60% vs 60%) read "aligned".
    const held = rewardHealth(plateau);
    expect(held).toMatchObject({ level: 'bad', label: 'gamed' });
    expect(held.text).toBe('Still gamed since iteration 6: the shaped return holds at 3.10 (1.00 before it rose) while success stays at 60%, below the 90% it had then. A hack that stopped rising is still a hack: this clears when success recovers or the reward code changes.');
    // Success back near where it was: cleared.
    expect(rewardHealth([...plateau, ...Array.from({ length: 3 }, () => pt(3.1, 0.88))]).label).not.toBe('gamed');
    // New reward code (v2) on the same numbers: judged afresh.
    expect(rewardHealth([...plateau, ...Array.from({ length: 3 }, () => pt(3.1, 0.6, 2))]).label).not.toBe('gamed');
    // The shaped return falls back to where it was: no longer paid, cleared.
    expect(rewardHealth([...plateau, ...Array.from({ length: 3 }, () => pt(1, 0.6))]).label).not.toBe('gamed');
  });

  it("a hack whose terms dominate the return stays 'gamed' even when the shaped return falls back; it clears when success recovers", () => {
    // outcome pays the task's reward; 'carry' is a user term paying while the key is held.
    const pt = (outcome: number, carry: number, s: number) => ({ 'reward/mean': outcome + carry, 'reward/outcome/mean': outcome, 'reward/carry/mean': carry, 'reward/std': 9, 'episode/success_rate': s, 'reward/version': 1 });
    const caught = [...Array.from({ length: 3 }, () => pt(0.9, 0.1, 0.9)), ...Array.from({ length: 3 }, () => pt(0.3, 2.7, 0.3))];
    expect(rewardHealth(caught)).toMatchObject({ level: 'bad', label: 'gamed' });
    // The return falls back to 1.05 (no longer above the 1.0 it had before the rise) but 'carry' pays 71% of it.
    const fallen = [...caught, ...Array.from({ length: 10 }, () => pt(0.3, 0.75, 0.3))];
    const v = rewardHealth(fallen);
    expect(v).toMatchObject({ level: 'bad', label: 'gamed' });
    expect(v.text).toBe("Still gamed since iteration 6: terms other than the task's own reward still pay 71% of the return while success stays at 30%, below the 90% it had then. A hack that stopped rising is still a hack: this clears when success recovers or the reward code changes.");
    // The same numbers with the term paying a minority of the return: cleared.
    expect(rewardHealth([...caught, ...Array.from({ length: 10 }, () => pt(0.6, 0.45, 0.3))]).label).not.toBe('gamed');
    // Success recovers: cleared, however much the term pays.
    expect(rewardHealth([...fallen, ...Array.from({ length: 3 }, () => pt(0.9, 2, 0.9))]).label).not.toBe('gamed');
  });

  it("warns early when one term's share of the return climbs while success does not (it once read 'aligned' while the term grew to 85%)", () => {
    // The return stays near 1.1 (no rise for the two-window test to see) while 'closer' grows
    // from 9% to 79% of it and success sits at 40%.
    const pt = (outcome: number, closer: number) => ({ 'reward/mean': outcome + closer, 'reward/outcome/mean': outcome, 'reward/closer/mean': closer, 'episode/success_rate': 0.4 });
    const h = [pt(1, 0.1), pt(1, 0.1), pt(1, 0.1), pt(0.8, 0.3), pt(0.6, 0.5), pt(0.4, 0.7), pt(0.3, 0.8), pt(0.2, 0.9), pt(0.2, 0.9)];
    // Six iterations in: 'closer' pays 45% (under the 50% floor): not yet.
    expect(rewardHealth(h.slice(0, 6))).toMatchObject({ level: 'ok', label: 'aligned' });
    const v = rewardHealth(h);
    // Before: 'aligned' (return 1.1 → 1.1, success 40% → 40%).
    expect(v).toMatchObject({ level: 'warn', label: 'term climbing' });
    expect(v.text).toBe("The term 'closer' pays 79% of the return, up from 45% 3 iterations earlier, while success did not rise (40% → 40%): check that it pays only for progress on the task (potential-based: γΦ(s′) − Φ(s)).");
    // The same climb while success rises with it: aligned.
    const rising = h.map((p, i) => ({ ...p, 'episode/success_rate': 0.1 * i }));
    expect(rewardHealth(rising)).toMatchObject({ level: 'ok', label: 'aligned' });
  });

  it('never green while success stays at 0 after a hack, even once the code changed (the fix judged afresh read aligned)', () => {
    const pt = (r: number, s: number, version: number) => ({ 'reward/mean': r, 'episode/success_rate': s, 'reward/version': version });
    const hacked = [...Array.from({ length: 3 }, () => pt(1, 0.6, 1)), ...Array.from({ length: 3 }, () => pt(3, 0, 1))];
    expect(rewardHealth(hacked)).toMatchObject({ level: 'bad', label: 'gamed' });
    // The fix: v2, its return falls back to 1 and success stays at 0 (before: 'no success yet', idle).
    const fixed = [...hacked, ...Array.from({ length: 6 }, () => pt(1, 0, 2))];
    const v = rewardHealth(fixed);
    expect(v).toMatchObject({ level: 'warn', label: 'not recovered' });
    expect(v.text).toBe('Success is 0% (last 3 iterations), below the 60% it had before the reward was gamed at iteration 6: whatever changed since has not brought the task back yet; if it stays there, the policy learnt the hack (lower the learning rate, or restart from before it).');
    // Success back at its pre-hack 60%: the badge judges the new code on its own again.
    expect(rewardHealth([...fixed, ...Array.from({ length: 6 }, () => pt(1, 0.6, 2))])).toMatchObject({ level: 'ok', label: 'aligned' });
  });

  it('scale: a rise is relative to max(1, |earlier|), so a large negative return needs a large rise', () => {
    expect(rewardHealth(series(-10, 0.5, -9.5, 0.5)).level).toBe('ok');
    expect(rewardHealth(series(-10, 0.5, -8, 0.5)).level).toBe('warn');
  });
});
