/**
 * A token distill stage in the tab (calc-distill, shortened through the link): the form shows the
 * transformer student's fields, the run trains the teacher, hands over to the smaller student in
 * the training worker's staged trainer (as the CLI does), the stage strip names the student and
 * the distill chart fills in. axe-core finds no serious or critical violation; at 390 px nothing
 * scrolls sideways.
 */
import { describe, expect, inject, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ARTIFACTS, axeProblems, sideways, useBrowser, watchErrors } from './browser.ts';

const appUrl = inject('appUrl');
const browser = useBrowser();
const attr = async (page: Page, name: string) => (await page.getByTestId('train-status').getAttribute(name)) ?? '';

describe('token distillation in the tab', () => {
  it('calc-distill: warm start 20, GRPO 1, distill 3 into a 1-layer d 32 student', { timeout: 400_000 }, async () => {
    const page = await browser().newPage({ viewport: { width: 1400, height: 1000 } });
    const errors = watchErrors(page);
    await page.goto(`${appUrl}?backend=wasm#view=train&preset=calc-distill&warmStart.steps=20&stages.0.iterations=1&stages.1.iterations=3`);
    await page.getByTestId('train-status').waitFor();
    // The student's own fields (transformer), not the MLP student's sizes.
    expect(await page.getByTestId('field-stages.1.distill.student.nLayers').inputValue()).toBe('1');
    expect(await page.getByTestId('field-stages.1.distill.student.dModel').inputValue()).toBe('32');
    expect(await page.getByTestId('field-stages.1.distill.student.hidden').count()).toBe(0);
    expect(await page.getByTestId('field-stages.1.distill.student.dFF').inputValue()).toBe('128');
    expect(await page.getByTestId('field-stages.1.distill.student.context').inputValue()).toBe('96');
    expect(await page.getByTestId('stage-2').textContent()).toMatch(/distill into a transformer of 1 layer, d 32/);

    await page.getByTestId('train-start').click();
    await expect.poll(() => attr(page, 'data-status'), { timeout: 300_000, interval: 500 }).toBe('finished');
    // 'finished' is set as the run's end is saved; the last iteration reaches the status bar
    // through the chart feed's per-frame flush, which can come a frame after: poll for it.
    await expect.poll(async () => Number(await attr(page, 'data-iteration')), { timeout: 10_000 }).toBe(4);
    expect(await page.getByTestId('stage-2').getAttribute('class')).toMatch(/pipe-stage-(done|running)/);
    const chart = page.getByTestId('chart-distill');
    await chart.scrollIntoViewIfNeeded();
    // Charts take new points through a per-frame queue (MetricChart's useStaggered), so the last
    // iterations may land a few frames after the run says finished: wait for them.
    await expect.poll(() => chart.locator('.chart-empty').count(), { timeout: 15_000 }).toBe(0);
    // Three distill iterations drew p(teacher): the student's tokens under the teacher, a share.
    await expect.poll(async () => Number(await chart.getAttribute('data-points')), { timeout: 15_000 }).toBeGreaterThanOrEqual(3);
    const pTeacher = Number(await chart.getAttribute('data-latest'));
    expect(pTeacher).toBeGreaterThan(0);
    expect(pTeacher).toBeLessThan(1);
    // The Signal invariant reads reward spread; a distill stage learns from the teacher instead.
    await expect.poll(() => page.locator('.health-chip[href="#section-signal"] .health-chip-label').textContent(), { timeout: 15_000 }).toBe('not applicable');
    await page.screenshot({ path: `${ARTIFACTS}/distill-token-done.png`, fullPage: false });
    await chart.screenshot({ path: `${ARTIFACTS}/distill-token-chart.png` });
    expect(await axeProblems(page)).toEqual([]);

    await page.setViewportSize({ width: 390, height: 844 });
    expect(await sideways(page)).toBeLessThanOrEqual(0);
    await page.getByTestId('stage-strip').scrollIntoViewIfNeeded();
    await page.screenshot({ path: `${ARTIFACTS}/distill-token-phone.png` });
    expect(errors).toEqual([]);
    await page.close();
  });
});
