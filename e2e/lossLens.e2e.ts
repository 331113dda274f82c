/**
 * The loss lens: after two iterations of a grid GRPO run on the default backend, the inspector
 * scatters the batch's trained steps by ratio and advantage under the run's loss (PPO clip) and,
 * beside it, under a loss picked to compare; the counts are stated in words; the page stays
 * axe-clean and unscrolled sideways at phone width.
 */
import { describe, expect, inject, it } from 'vitest';
import { ARTIFACTS, axeProblems, sideways, useBrowser, watchErrors } from './browser.ts';

const appUrl = inject('appUrl');
const browser = useBrowser();

/** "Label: 120 full, 8 cut of 128 tokens. Mean weight 0.93." → the part after the label's colon. */
const reading = (t: string | null) => (t ?? '').replace(/^[^:]*:\s*/, '');

describe('loss lens', () => {
  it('shows each trained step under the run loss and under a compared loss, axe-clean at 390 px', { timeout: 300_000 }, async () => {
    const page = await browser().newPage({ viewport: { width: 1400, height: 1000 } });
    const errors = watchErrors(page);
    // Eight minibatches at a high learning rate: later minibatches train at weights that moved, so ratios leave 1.
    await page.goto(appUrl + '#view=train&preset=grid-empty-8x8-grpo&iterations=2&algo.minibatches=8&algo.lr=0.03');
    await page.getByTestId('train-status').waitFor();
    await page.getByTestId('train-start').click();
    await expect.poll(async () => (await page.getByTestId('train-status').getAttribute('data-status')) ?? '', { timeout: 240_000, interval: 500 }).toBe('finished');
    await page.getByTestId('tab-trajectories').click();
    await page.getByTestId('inspect-latest').click();
    const lens = page.getByTestId('loss-lens');
    await lens.waitFor();

    const run = page.getByTestId('lens-run-counts');
    const other = page.getByTestId('lens-other-counts');
    const runText = (await run.textContent()) ?? '';
    expect(runText).toMatch(/^This run: PPO clip[^:]*: \d+ full(, \d+ cut)? of \d+ tokens\. Mean weight/);
    // The same loss on both sides reads the same tokens the same way.
    await page.getByTestId('lens-compare').selectOption('clip');
    expect(reading(await other.textContent())).toBe(reading(runText));
    // CISPO bounds every ratio outside [0.8, 1.2], whatever the advantage's sign: the compared panel changes.
    await page.getByTestId('lens-compare').selectOption('cispo');
    const cispo = (await other.textContent()) ?? '';
    expect(cispo).toMatch(/^Compared: CISPO[^:]*: \d+ full, \d+ bounded of \d+ tokens/);
    expect(reading(cispo)).not.toBe(reading(runText));
    // Keyboard: the select takes focus and arrow keys move the comparison.
    await page.getByTestId('lens-compare').focus();
    await page.keyboard.press('ArrowDown');
    await expect.poll(() => page.getByTestId('lens-compare').inputValue()).toBe('sapo');
    expect(await other.textContent()).toMatch(/^Compared: SAPO/);
    await lens.scrollIntoViewIfNeeded();
    await lens.screenshot({ path: `${ARTIFACTS}/loss-lens-1400.png` });

    await page.setViewportSize({ width: 390, height: 844 });
    await lens.scrollIntoViewIfNeeded();
    await lens.screenshot({ path: `${ARTIFACTS}/loss-lens-390.png` });
    expect(await sideways(page)).toBeLessThanOrEqual(0);
    expect(await axeProblems(page)).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });
});
