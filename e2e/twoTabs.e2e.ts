/**
 * Two tabs, one saved run: a tab that resumes an interrupted run records it under the run's Web
 * Lock, and a second tab whose list still shows the run as interrupted is told it is training
 * elsewhere instead of writing into the same record.
 */
import { describe, expect, inject, it } from 'vitest';
import type { Page } from 'playwright-core';
import { useBrowser, watchErrors } from './browser.ts';

const appUrl = inject('appUrl');
const browser = useBrowser();
const status = (page: Page) => page.getByTestId('train-status');
const row = (page: Page) => page.locator('[data-testid="run-row"][data-status="interrupted"]').first();

describe('one run, two tabs', () => {
  it('the second tab to resume it is told it runs elsewhere, and trains nothing', { timeout: 300_000 }, async () => {
    const context = await browser().newContext({ viewport: { width: 1400, height: 1000 } });
    const first = await context.newPage();
    await first.goto(`${appUrl}?backend=wasm#view=train&preset=grid-empty-8x8-grpo&iterations=400`);
    await first.getByTestId('train-start').click();
    // Its checkpoint after the first iteration is what Resume needs; then the tab goes away.
    await expect.poll(async () => Number(await status(first).getAttribute('data-iteration')), { timeout: 120_000, interval: 250 }).toBeGreaterThanOrEqual(2);
    await first.getByTestId('train-pause').click();
    await expect.poll(() => status(first).getAttribute('data-status'), { timeout: 60_000 }).toBe('paused');
    await first.close({ runBeforeUnload: false });

    const a = await context.newPage();
    const b = await context.newPage();
    const errors = [...watchErrors(a), ...watchErrors(b)];
    for (const p of [a, b]) {
      await p.goto(`${appUrl}?backend=wasm#view=runs`);
      await row(p).waitFor();
    }
    await row(a).getByTestId('run-resume').click();
    await expect.poll(() => status(a).getAttribute('data-status'), { timeout: 60_000, interval: 250 }).toMatch(/running|finished/);
    // b's list is stale: it still offers Resume.
    await row(b).getByTestId('run-resume').click();
    await expect.poll(() => b.locator('.notice-text').allTextContents(), { timeout: 20_000 }).toContainEqual(expect.stringMatching(/training in another tab of this browser/));
    expect(await status(b).count() === 0 || (await status(b).getAttribute('data-status')) === 'idle').toBe(true);
    expect(errors).toEqual([]);
    for (const p of [a, b]) p.on('dialog', (d) => void d.accept());
    await context.close();
  });
});
