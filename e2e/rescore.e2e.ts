/**
 * Counterfactual re-scoring in the browser: a short grid run scored by a
 * reward term finishes; its last batches are frozen, the editor adds a term that costs every
 * step, and "Re-score" shows the new term's distribution, how many advantages flip sign and the
 * episodes that moved most, without a training step (the iteration counter stays where the run
 * ended) and without a long task on the page's thread (the scoring runs in the re-score worker).
 * A term that throws answers with the sandbox's message and leaves the last answer in place; an
 * episode from the table opens in the trajectory inspector.
 */
import { describe, expect, inject, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ARTIFACTS, cpuLongTasks, describeTasks, pasteRewardCode, traceMainThread, useBrowser, watchErrors } from './browser.ts';

const appUrl = inject('appUrl');
const browser = useBrowser();
const status = (page: Page) => page.getByTestId('train-status');
const attr = async (page: Page, id: string, name: string) => (await page.getByTestId(id).first().getAttribute(name)) ?? '';

/** The run's code: a small bonus for moving forward (it spreads the returns of episodes that fail). */
const RUN_CODE = 'export const forward = (step) => (step.actionName === "forward" ? 0.01 : 0);\n';
/** The edit: the same term, plus a cost on every step. */
const EDIT = `${RUN_CODE}export const stepCost = (step) => -0.05;\n`;

describe('counterfactual re-scoring', () => {
  it('re-scores a frozen buffer with an added step cost: its distribution and sign flips, no training step', { timeout: 120_000 }, async () => {
    const t0 = Date.now();
    const page = await browser().newPage({ viewport: { width: 1400, height: 1200 } });
    const errors = watchErrors(page);
    await page.goto(`${appUrl}?backend=wasm#view=train&preset=grid-empty-8x8-grpo&iterations=2`);
    await page.locator('[data-testid=reward-lab] > summary').click();
    // Saved before the run: it starts with the code (v1).
    await pasteRewardCode(page, RUN_CODE);
    await page.getByTestId('reward-apply').click();
    await expect.poll(() => attr(page, 'reward-status', 'data-version')).toBe('0');
    console.log(`page ready after ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    await page.getByTestId('train-start').click();
    // At least one (a fast machine may be past it by the next look: a run of 2 goes on to finish).
    await expect.poll(async () => Number(await status(page).getAttribute('data-iteration')), { timeout: 90_000, interval: 100 }).toBeGreaterThanOrEqual(1);
    console.log(`first iteration after ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    await expect.poll(() => status(page).getAttribute('data-status'), { timeout: 90_000, interval: 250 }).toBe('finished');
    // 'finished' is set as the run's end is saved; the last iteration reaches the status bar
    // through the chart feed's per-frame flush, which can come a frame after: poll for it.
    await expect.poll(async () => Number(await status(page).getAttribute('data-iteration')), { timeout: 10_000 }).toBe(2);
    const trained = 2;
    console.log(`trained 2 iterations after ${((Date.now() - t0) / 1000).toFixed(1)} s`);

    // Freeze the last 4 iterations: the run has 2, of 8 groups × 8 episodes each.
    await page.getByTestId('rescore-freeze').click();
    await expect.poll(() => attr(page, 'rescore-frozen', 'data-episodes')).toBe('128');
    expect(await page.getByTestId('rescore-frozen').textContent()).toContain('iterations 1–2, scored by v1');

    // Add a step cost in the editor and re-score: the page's thread stays free meanwhile.
    await pasteRewardCode(page, EDIT);
    const headline = async () => ((await page.getByTestId('rescore-flips').count()) > 0 ? page.getByTestId('rescore-flips').textContent() : null);
    /** Re-scores and traces the page's thread until the answer is drawn (a new headline: it names the worker's ms). */
    const rescoreTraced = async () => {
      const before = await headline();
      const stopTrace = await traceMainThread(browser(), page);
      await page.getByTestId('rescore-run').click();
      await expect.poll(async () => (await attr(page, 'rescore-flips', 'data-n')) === '128' && (await headline()) !== before, { timeout: 30_000, interval: 100 }).toBe(true);
      return stopTrace();
    };
    let tasks = await rescoreTraced();
    if (cpuLongTasks(tasks).length > 0) {
      // The first answer's render also compiles its code (JIT) and may meet a GC: CI runs saw
      // 30, 49 and once 95 ms of CPU there. The same re-score again must be clean: a render that
      // is slow every time still fails.
      console.log(`first re-score: main thread ${describeTasks(tasks)}; re-scoring once more`);
      tasks = await rescoreTraced();
    }
    const flips = Number(await attr(page, 'rescore-flips', 'data-flips'));
    console.log(`re-score: ${flips} of 128 advantages flip; ${(await page.getByTestId('rescore-flips').textContent())?.trim()}; main thread ${describeTasks(tasks)}`);
    expect(flips).toBeGreaterThan(0);
    expect(await page.getByTestId('rescore-flips').textContent()).toContain(`${flips} of 128 advantages flip sign`);
    expect(cpuLongTasks(tasks)).toEqual([]);
    // The new term: only an 'after' side, its mean −0.05 per step; the kept term is unchanged.
    const cost = page.getByTestId('rescore-dist-stepCost');
    expect(await cost.getAttribute('data-kind')).toBe('new');
    expect(Number(await cost.getAttribute('data-after-mean'))).toBeLessThan(0);
    expect(await cost.locator('rect.rescore-after').count()).toBeGreaterThan(0);
    expect(await cost.locator('rect.rescore-before').count()).toBe(0);
    expect(await page.getByTestId('rescore-dist-forward').getAttribute('data-before-mean')).toBe(await page.getByTestId('rescore-dist-forward').getAttribute('data-after-mean'));
    expect(await page.locator('[data-testid=rescore-moved-row][data-flip=true]').count()).toBeGreaterThan(0);
    // No training step was taken.
    expect(Number(await status(page).getAttribute('data-iteration'))).toBe(trained);
    expect(await status(page).getAttribute('data-status')).toBe('finished');
    await page.getByTestId('rescore').scrollIntoViewIfNeeded();
    await page.getByTestId('rescore').screenshot({ path: `${ARTIFACTS}/rescore.png` });

    // A term that throws: the sandbox's message (term, line), and the last answer stays.
    await pasteRewardCode(page, `${EDIT}export const broken = (step) => step.nope.deeper;\n`);
    await page.getByTestId('rescore-run').click();
    await expect.poll(() => page.getByTestId('rescore-error').textContent(), { timeout: 30_000 }).toMatch(/reward term 'broken' threw TypeError: .*\(line 3\)/);
    expect(Number(await attr(page, 'rescore-flips', 'data-flips'))).toBe(flips);

    // The most moved episode opens in the trajectory inspector.
    const row = page.getByTestId('rescore-moved-row').first();
    const [openIt, openIndex] = [await row.getAttribute('data-iteration'), await row.getAttribute('data-index')];
    await row.getByTestId('rescore-open').click();
    await expect(page.getByTestId('grid-replay').count()).resolves.toBe(1);
    expect(await page.getByTestId('trajectory-inspector').getAttribute('data-episode')).toBe(openIndex);
    expect(await page.locator('.inspector-side h3').first().textContent()).toBe(`Iteration ${openIt}`);
    expect(Number(await status(page).getAttribute('data-iteration'))).toBe(trained);
    console.log(`done after ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    expect(errors).toEqual([]);
    await page.close({ runBeforeUnload: false });
  });
});
