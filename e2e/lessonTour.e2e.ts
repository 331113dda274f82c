/**
 * Screenshots of each lesson's key moment in Chromium on WASM: the step is set up from the
 * Lessons view, trained until its check ticks itself off, and the Train view is saved to
 * e2e/artifacts/lesson-tour-<lesson>.png. Several minutes (the calculator lessons include a
 * warm start), so it runs only with LESSON_TOUR=1 (LESSON_TOUR=grid skips the calculator ones):
 *
 *   LESSON_TOUR=1 npx vitest run --config vitest.e2e.config.ts e2e/lessonTour.e2e.ts
 */
import { describe, expect, inject, it } from 'vitest';
import { ARTIFACTS, useBrowser, watchErrors } from './browser.ts';

const appUrl = inject('appUrl');
const browser = useBrowser();
const tour = process.env.LESSON_TOUR;

/** lesson id, its key step (1-based), how long its check may take in the browser (ms), needs a warm start */
const KEY_STEPS: [string, number, number, boolean][] = [
  ['sparse-vs-shaped', 2, 120_000, false],
  ['exploration-collapse', 1, 120_000, false],
  ['shift-staleness', 2, 180_000, false],
  ['grpo-vs-ppo', 2, 240_000, false],
  ['rlvr-vs-agentic', 2, 480_000, true],
  ['warm-start-then-rl', 1, 900_000, true],
];

describe.runIf(!!tour)('lesson tour (screenshots)', () => {
  for (const [id, step, budget, warm] of KEY_STEPS) {
    it.runIf(!(warm && tour === 'grid'))(`${id} step ${step}: the check ticks itself off`, { timeout: budget + 60_000 }, async () => {
      const page = await browser().newPage({ viewport: { width: 1400, height: 1000 } });
      const errors = watchErrors(page);
      await page.goto(`${appUrl}?backend=wasm#view=lessons&lesson=${id}&step=${step}`);
      await page.getByTestId('lesson-setup').click();
      await page.getByTestId('train-start').click();
      await expect.poll(() => page.getByTestId('lesson-banner-status').getAttribute('data-state'), { timeout: budget, interval: 1000 }).toBe('done');
      const it = await page.getByTestId('train-status').getAttribute('data-iteration');
      console.log(`${id} step ${step}: done after ${it} iterations`);
      await page.screenshot({ path: `${ARTIFACTS}/lesson-tour-${id}.png` });
      expect(errors).toEqual([]);
      page.on('dialog', (d) => void d.accept());
      await page.close({ runBeforeUnload: false });
    });
  }
});
