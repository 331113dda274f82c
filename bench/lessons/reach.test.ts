/**
 * Each quick lesson step reaches its own check from its own setup, headless on ort-web WASM
 * (the browser's engine), through the same path as the browser: setup → Train-view config →
 * createTrainer → iteration metrics → the step's check. The slower steps (async shift, GRPO vs
 * PPO, the calculator lessons) are measured by `npx tsx bench/lessons/run.ts` (docs/lessons.md).
 *
 * The reward-hacking lesson's two runs are the hackable presets themselves, so the same runs also
 * check the Reward badge (the dashboard's reading of the same metrics): under the farmed 'closer'
 * term it turns to a warning within the preset's iterations; under the potential-based term it
 * never does, over all of them.
 */
import { describe, expect, it } from 'vitest';
import { LESSONS } from '../../src/app/lessons/index.ts';
import type { Level } from '../../src/app/train/health.ts';
import { rewardHealth } from '../../src/app/train/rewardHealth.ts';
import { runStep } from './run.ts';

const QUICK: [string, number, number][] = [
  // lesson, step (1-based), most iterations it may take (its own `within` caps it too)
  ['sparse-vs-shaped', 1, 8],
  ['sparse-vs-shaped', 2, 6],
  ['signal-degeneration', 1, 15],
  ['signal-degeneration', 2, 40],
  ['exploration-collapse', 1, 10],
  // On the four-rooms example map (the setup's map where there is no Studio): sparse GRPO sees no reward.
  ['design-the-room', 2, 10],
];

const stepOf = (id: string, n: number) => LESSONS.lessons.find((l) => l.id === id)!.steps[n - 1];

describe('lesson steps reach their checks (ort-web WASM)', () => {
  for (const [id, n, most] of QUICK) {
    it(`${id} step ${n}`, { timeout: 150_000 }, async () => {
      const r = await runStep(id, n - 1, stepOf(id, n), { max: most });
      expect(r.state, r.readings.join(', ')).toBe('done');
      expect(r.doneAt).toBeLessThanOrEqual(most);
    });
  }
});

/** Runs a reward-hacking step and reads the Reward badge after every iteration. */
async function withBadge(n: number, full: boolean) {
  const history: Record<string, number>[] = [];
  const levels: Level[] = [];
  const r = await runStep('reward-hacking', n - 1, stepOf('reward-hacking', n), {
    full,
    observe: (m) => {
      history.push(m);
      levels.push(rewardHealth(history).level);
    },
  });
  const success = history.map((m) => (m['episode/success_rate'] ?? NaN).toFixed(2)).join(' ');
  return { r, levels, success };
}

describe('reward hacking: the lesson steps reach their checks and the Reward badge tells the two terms apart', () => {
  it('grid-empty-8x8-hackable (step 1): the farmed term is caught by the check and the badge warns', { timeout: 240_000 }, async () => {
    const { r, levels, success } = await withBadge(1, false);
    const at = levels.findIndex((l) => l === 'warn' || l === 'bad');
    console.log(`hackable: check done at ${r.doneAt}; badge ${levels.join(' ')}; warned at iteration ${at + 1}; success ${success}`);
    expect(r.state, r.readings.join(', ')).toBe('done');
    expect(r.doneAt).toBeLessThanOrEqual(25);
    expect(at).toBeGreaterThanOrEqual(0);
  });

  it('grid-empty-8x8-potential (step 2): the task is learnt and the badge stays aligned over all 25 iterations', { timeout: 240_000 }, async () => {
    const { r, levels, success } = await withBadge(2, true);
    console.log(`potential: check done at ${r.doneAt}; badge ${levels.join(' ')}; success ${success}`);
    expect(r.state, r.readings.join(', ')).toBe('done');
    expect(r.doneAt).toBeLessThanOrEqual(25);
    expect(r.iterations).toBe(25);
    expect(levels.filter((l) => l === 'warn' || l === 'bad')).toEqual([]);
  });
});
