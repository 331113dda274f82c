/**
 * The warm start is a visible phase: its own charts (imitation loss, expert-token probability)
 * and a progress bar with the time left while it runs, Pause and Resume, no chart saying
 * "Press Start", and its curves stay after RL begins.
 */
import { describe, expect, inject, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ARTIFACTS, useBrowser, watchErrors } from './browser.ts';

const appUrl = inject('appUrl');
const browser = useBrowser();
const status = (page: Page) => page.getByTestId('train-status');

describe('warm start phase', () => {
  it('calc-grpo: warm-start charts and progress while it runs, Pause holds it, no "Press Start", curves kept afterwards', { timeout: 300_000 }, async () => {
    const page = await browser().newPage({ viewport: { width: 1400, height: 1000 } });
    const errors = watchErrors(page);
    await page.goto(`${appUrl}?backend=wasm#view=train&preset=calc-grpo&warmStart.steps=150&iterations=1&rollout.groups=2&algo.groupSize=4`);
    await page.getByTestId('train-start').click();
    const ce = page.getByTestId('chart-warm-ce');
    await expect.poll(async () => Number((await ce.getAttribute('data-points').catch(() => '0')) ?? 0), { timeout: 120_000, interval: 500 }).toBeGreaterThanOrEqual(20);
    expect(await status(page).getAttribute('data-status')).toBe('starting');
    await expect.poll(() => page.getByTestId('warm-progress').textContent(), { timeout: 30_000 }).toMatch(/\d+ (s|min) left/);
    expect(await page.getByText('Press Start or Step to train.').count()).toBe(0);
    expect(await page.getByText(/RL begins after the warm start \(step \d+ \/ 150\)/).count()).toBeGreaterThan(0);
    await page.screenshot({ path: `${ARTIFACTS}/warm-start.png` });
    // Pause holds the warm start between two steps; Resume continues it.
    await page.getByTestId('warm-pause').click();
    await expect.poll(() => page.getByTestId('warm-pause').textContent(), { timeout: 10_000 }).toMatch(/Resume warm start/);
    const stepOf = async () => Number(/(\d+) of 150 steps/.exec((await status(page).textContent()) ?? '')?.[1]);
    // The step in flight at the click still reports (its report is the one the worker waits on),
    // so at most one more lands: wait for it (up to 10 s: a loaded machine takes longer than the
    // one fixed second this waited before), unless it landed before this first reading.
    const atPause = await stepOf();
    for (const t0 = Date.now(); (await stepOf()) === atPause && Date.now() - t0 < 10_000; ) await page.waitForTimeout(100);
    const held = await stepOf();
    console.log(`warm start: step ${atPause} on screen at Pause, held at step ${held}`);
    expect(held - atPause, 'steps after Pause (only the one in flight may land)').toBeLessThanOrEqual(1);
    await page.waitForTimeout(2000);
    expect(await stepOf()).toBe(held);
    expect(await status(page).textContent()).toMatch(/warm start: paused while imitating the expert: \d+ of \d+ steps/);
    await page.getByTestId('warm-pause').click();
    await expect.poll(stepOf, { timeout: 30_000 }).toBeGreaterThan(held);
    await expect.poll(() => status(page).getAttribute('data-status'), { timeout: 180_000, interval: 1000 }).toBe('finished');
    expect(Number(await ce.getAttribute('data-points'))).toBeGreaterThanOrEqual(20);
    expect(Number(await page.getByTestId('chart-warm-prob').getAttribute('data-latest'))).toBeGreaterThan(0);
    // Every RL chart marks where RL took over from the warm start.
    await expect.poll(() => page.getByTestId('chart-success').getByTestId('chart-marker').textContent(), { timeout: 10_000 }).toMatch(/RL begins \(after 150 warm-start steps\)/);
    await page.screenshot({ path: `${ARTIFACTS}/warm-start-after.png` });
    expect(errors).toEqual([]);
    await page.close();
  });
});
