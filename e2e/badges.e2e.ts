/**
 * The badges see a policy being unlearnt: a solved empty-8×8 run gets a live entropy coef of 0.5
 * and a learning rate of 0.003, and the Outcome badge (or Exploration's high-entropy rule) turns
 * from ok to warning within a few iterations, while the invariants alone read healthy.
 */
import { describe, expect, inject, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ARTIFACTS, useBrowser, watchErrors } from './browser.ts';

const appUrl = inject('appUrl');
const browser = useBrowser();
const status = (page: Page) => page.getByTestId('train-status');
const num = async (page: Page, name: string) => Number((await status(page).getAttribute(name)) ?? 'NaN');
const level = (page: Page, badge: string) => page.getByTestId(`health-${badge}`).getAttribute('data-level');

describe('health badges', () => {
  it('a live edit that collapses a solved policy turns a badge to warning within a few iterations', { timeout: 300_000 }, async () => {
    const page = await browser().newPage({ viewport: { width: 1400, height: 1000 } });
    const errors = watchErrors(page);
    await page.goto(`${appUrl}?backend=wasm#view=train&preset=grid-empty-8x8-grpo&iterations=400`);
    await page.getByTestId('train-start').click();
    await expect.poll(() => num(page, 'data-success'), { timeout: 180_000, interval: 500 }).toBeGreaterThanOrEqual(0.95);
    await expect.poll(() => level(page, 'outcome'), { timeout: 30_000 }).toBe('ok');
    const at = await num(page, 'data-iteration');
    await page.getByTestId('field-algo.entropyCoef').fill('0.5');
    await page.getByTestId('field-algo.lr').fill('0.003');
    await expect
      .poll(async () => [await level(page, 'outcome'), await level(page, 'exploration')].some((l) => l === 'warn' || l === 'bad'), { timeout: 120_000, interval: 500 })
      .toBe(true);
    const after = (await num(page, 'data-iteration')) - at;
    await page.screenshot({ path: `${ARTIFACTS}/badges-regression.png` });
    console.log(`a badge warned ${after} iterations after the edit: outcome ${await level(page, 'outcome')}, exploration ${await level(page, 'exploration')}`);
    expect(after).toBeLessThanOrEqual(15);
    expect(errors).toEqual([]);
    page.on('dialog', (d) => void d.accept());
    await page.close({ runBeforeUnload: false });
  });
});
