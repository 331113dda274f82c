/**
 * Each quick lesson step reaches its own check from its own setup, headless on ort-web WASM
 * (the browser's engine), through the same path as the browser: setup → Train-view config →
 * createTrainer → iteration metrics → the step's check. The slower steps (async shift, GRPO vs
 * PPO, the calculator lessons) are measured by `npx tsx bench/lessons/run.ts` (README, Lessons).
 */
import { describe, expect, it } from 'vitest';
import { LESSONS } from '../../src/app/lessons/index.ts';
import { runStep } from './run.ts';

const QUICK: [string, number, number][] = [
  // lesson, step (1-based), most iterations it may take (its own `within` caps it too)
  ['sparse-vs-shaped', 1, 8],
  ['sparse-vs-shaped', 2, 6],
  ['signal-degeneration', 1, 15],
  ['signal-degeneration', 2, 40],
  ['exploration-collapse', 1, 10],
  ['reward-hacking', 1, 25],
  ['reward-hacking', 2, 25],
];

describe('lesson steps reach their checks (ort-web WASM)', () => {
  for (const [id, n, most] of QUICK) {
    it(`${id} step ${n}`, { timeout: 150_000 }, async () => {
      const lesson = LESSONS.lessons.find((l) => l.id === id)!;
      const r = await runStep(id, n - 1, lesson.steps[n - 1], { max: most });
      expect(r.state, r.readings.join(', ')).toBe('done');
      expect(r.doneAt).toBeLessThanOrEqual(most);
    });
  }
});
