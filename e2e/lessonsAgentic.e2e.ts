/**
 * The two agentic lessons in a real Chromium, default backend: each step set up from the Lessons
 * view, trained, and ticked by its own check from the live metrics. "Sharpening or discovery":
 * held-out pass@1 / pass@k, then zero-spread groups. "What RL learns that imitation can't": tool
 * calls per episode falling while success rises, then demonstrations that had the behaviour.
 * Their warm starts are shipped (public/warm-start/), so RL starts within seconds. One page walks
 * step 1 at phone width (390×844) and step 2 at desktop width (1400×1000), axe-clean and with no
 * sideways scroll at each; walking step 1 a second time on its own page only repeated the same
 * run. Screenshots: e2e/artifacts/lesson-<slug>-*.png.
 */
import { describe, expect, inject, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ARTIFACTS, axeProblems, sideways, useBrowser, watchErrors } from './browser.ts';

const appUrl = inject('appUrl');
const browser = useBrowser();
const status = (page: Page) => page.getByTestId('train-status');
const attr = async (page: Page, testId: string, name: string) => (await page.getByTestId(testId).getAttribute(name)) ?? '';

/** Sets up the lesson's current step, presses Start and waits for its check to tick; returns the iteration it ticked at. */
async function walkStep(page: Page, phone: boolean): Promise<number> {
  await page.getByTestId('lesson-setup').click();
  await expect.poll(() => attr(page, 'lesson-banner-status', 'data-state')).toBe('waiting');
  if (phone) expect(await sideways(page)).toBeLessThanOrEqual(0);
  await page.getByTestId('train-start').click();
  // The shipped warm start loads instead of training: the first RL iteration comes within seconds (minutes under heavy load).
  await expect.poll(() => attr(page, 'lesson-banner-status', 'data-state'), { timeout: 420_000, interval: 500 }).toBe('done');
  return Number(await status(page).getAttribute('data-iteration'));
}

async function pause(page: Page): Promise<void> {
  if ((await status(page).getAttribute('data-status')) !== 'running') return;
  await page.getByTestId('train-pause').click();
  await expect.poll(() => status(page).getAttribute('data-status'), { timeout: 60_000 }).toMatch(/paused|finished/);
}

async function close(page: Page): Promise<void> {
  page.on('dialog', (d) => void d.accept());
  await page.close({ runBeforeUnload: false });
}

async function openLesson(page: Page, id: string): Promise<void> {
  await page.goto(`${appUrl}#view=lessons`);
  // The list's last items sit under the status bar until scrolled past: centre it first.
  const item = page.getByTestId(`lesson-item-${id}`);
  await item.evaluate((el) => el.scrollIntoView({ block: 'center' }));
  await item.click();
  await expect.poll(() => attr(page, 'lesson', 'data-lesson')).toBe(id);
}

/** Charts after each step, as test ids, and the least iteration step 1 can tick at. */
interface LessonCase {
  id: string;
  slug: string;
  title: string;
  /** Step 1's check needs this many iterations (its baseline and window). */
  step1From: number;
  step1Chart: string;
  /** Points step 1's chart must show after it ticks. */
  step1Points: number;
  step2Chart: string;
}

const CASES: LessonCase[] = [
  // pass@k is measured before RL (iteration 1), after 10 and after 20 updates.
  { id: 'sharpening-or-discovery', slug: 'sharpening', title: 'sharpening or discovery', step1From: 21, step1Chart: 'chart-held-out', step1Points: 21, step2Chart: 'chart-zero-std' },
  // Rise/fall count only after the 3 baseline iterations, and a window of 3 after them.
  { id: 'rl-learns-what-imitation-cannot', slug: 'discovery', title: "what RL learns that imitation can't", step1From: 5, step1Chart: 'chart-tool-calls', step1Points: 5, step2Chart: 'chart-tool-calls' },
];

/** Waits for two animation frames: a resize's re-render (width-dependent layout) has painted by then. */
const nextFrame = (page: Page) => page.evaluate(() => new Promise<void>((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve()))));

const DESKTOP = { width: 1400, height: 1000 };
const PHONE = { width: 390, height: 844 };

for (const c of CASES) {
  describe(`lesson: ${c.title}`, () => {
    it(`step 1 at 390×844 and step 2 at desktop tick by themselves; nothing scrolls sideways at 390 px; axe-clean at both; ${c.step1Chart} and ${c.step2Chart} draw`, { timeout: 1_000_000 }, async () => {
      const page = await browser().newPage({ viewport: DESKTOP });
      const errors = watchErrors(page);
      await openLesson(page, c.id);
      expect(await axeProblems(page)).toEqual([]);

      // Step 1 at phone width: the lesson view, the set-up banner and the run it starts.
      await page.setViewportSize(PHONE);
      await nextFrame(page);
      expect(await sideways(page)).toBeLessThanOrEqual(0);
      await page.screenshot({ path: `${ARTIFACTS}/lesson-${c.slug}-phone-lesson.png` });
      expect(await axeProblems(page)).toEqual([]);
      const at1 = await walkStep(page, true);
      console.log(`${c.slug} step 1 (390 px) done at iteration ${at1}`);
      expect(at1).toBeGreaterThanOrEqual(c.step1From);
      await pause(page);
      await page.screenshot({ path: `${ARTIFACTS}/lesson-${c.slug}-phone-step1.png` });
      expect(await sideways(page)).toBeLessThanOrEqual(0);
      expect(await axeProblems(page)).toEqual([]);

      // Back to desktop width: step 1's chart, then step 2.
      await page.setViewportSize(DESKTOP);
      await nextFrame(page);
      const chart = page.getByTestId(c.step1Chart);
      await chart.scrollIntoViewIfNeeded();
      // Off-screen charts catch up in the background once on screen.
      await expect.poll(async () => Number(await chart.getAttribute('data-points')), { timeout: 30_000 }).toBeGreaterThanOrEqual(c.step1Points);
      await page.screenshot({ path: `${ARTIFACTS}/lesson-${c.slug}-step1-desktop.png` });
      expect(await axeProblems(page)).toEqual([]);

      await page.getByTestId('view-lessons').click();
      await page.getByTestId('lesson-next').click();
      expect(await attr(page, 'lesson', 'data-step')).toBe('2');
      const at2 = await walkStep(page, false);
      console.log(`${c.slug} step 2 done at iteration ${at2}`);
      await pause(page);
      const chart2 = page.getByTestId(c.step2Chart);
      await chart2.scrollIntoViewIfNeeded();
      await expect.poll(async () => Number(await chart2.getAttribute('data-points')), { timeout: 30_000 }).toBeGreaterThanOrEqual(at2);
      await page.screenshot({ path: `${ARTIFACTS}/lesson-${c.slug}-step2-desktop.png` });
      await page.getByTestId('view-lessons').click();
      expect(await attr(page, 'lesson-step-2', 'data-done')).toBe('true');
      await page.screenshot({ path: `${ARTIFACTS}/lesson-${c.slug}-done-desktop.png` });
      expect(errors).toEqual([]);
      await close(page);
    });
  });
}
