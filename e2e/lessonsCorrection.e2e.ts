/**
 * The Shift lesson's rollout-correction step in Chromium on the default backend (no ?backend=):
 * set up from its link, trained until its check ticks itself off, then the Shift section's
 * correction charts read back (ESS below 1, a nonzero rollout–learner gap), axe-clean with the
 * charts drawn, and at 390 px wide the charts fit without sideways scrolling.
 */
import { describe, expect, inject, it } from 'vitest';
import { ARTIFACTS, axeProblems, sideways, useBrowser, watchErrors } from './browser.ts';

const appUrl = inject('appUrl');
const browser = useBrowser();

describe('lesson 4 step 3: rollout correction under an fp8 rollout', () => {
  it('the check ticks off; the ESS chart reads below 1 and the gap chart above 0; axe-clean; fits a phone', { timeout: 420_000 }, async () => {
    const page = await browser().newPage({ viewport: { width: 1400, height: 1000 } });
    const errors = watchErrors(page);
    await page.goto(`${appUrl}#view=lessons&lesson=shift-staleness&step=3`);
    await page.getByTestId('lesson-setup').click();
    await page.getByTestId('train-start').click();
    await expect.poll(() => page.getByTestId('lesson-banner-status').getAttribute('data-state'), { timeout: 300_000, interval: 500 }).toBe('done');
    await page.getByTestId('train-pause').click();
    await expect.poll(() => page.getByTestId('train-status').getAttribute('data-status'), { timeout: 60_000 }).toBe('paused');
    const ess = page.getByTestId('chart-correction-ess');
    const gap = page.getByTestId('chart-correction-gap');
    await ess.scrollIntoViewIfNeeded();
    await expect.poll(async () => Number(await ess.getAttribute('data-points')), { timeout: 30_000 }).toBeGreaterThanOrEqual(3);
    const essLatest = Number(await ess.getAttribute('data-latest'));
    const chiLatest = Number(await gap.getAttribute('data-latest'));
    console.log(`lesson 4.3: ESS ${essLatest}, chi2_token ${chiLatest}, iteration ${await page.getByTestId('train-status').getAttribute('data-iteration')}`);
    expect(essLatest).toBeLessThan(1);
    expect(essLatest).toBeGreaterThan(0);
    expect(chiLatest).not.toBe(0);
    expect(Number.isFinite(chiLatest)).toBe(true);
    await page.getByTestId('chart-correction-rejected').waitFor();
    await page.screenshot({ path: `${ARTIFACTS}/lesson-correction-1400.png` });
    expect(await axeProblems(page)).toEqual([]);

    await page.setViewportSize({ width: 390, height: 844 });
    await ess.scrollIntoViewIfNeeded();
    expect(await sideways(page)).toBeLessThanOrEqual(0);
    const box = await ess.boundingBox();
    expect(box && box.x >= 0 && box.x + box.width <= 390).toBe(true);
    await page.screenshot({ path: `${ARTIFACTS}/lesson-correction-390.png` });
    expect(errors).toEqual([]);
    page.on('dialog', (d) => void d.accept());
    await page.close({ runBeforeUnload: false });
  });
});
