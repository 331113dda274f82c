/**
 * RL from scratch on two tool envs in the tab: the flaky-api-scratch-grpo and kv-lookup-scratch-grpo
 * presets (no warm start, constrained decoding) are in the preset list, start from the Train view
 * on the default backend, and their success passes 0.8 within the first iterations (measured
 * headless, flaky-api seed 1, two runs: training-batch success 0.64 and 0.77 at iteration 0, 0.92
 * and 0.97 by iteration 4; kv-lookup seeds 1-3: at least 0.8 by iteration 0-1).
 */
import { describe, expect, inject, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ARTIFACTS, useBrowser, watchErrors } from './browser.ts';

const appUrl = inject('appUrl');
const browser = useBrowser();
const status = (page: Page) => page.getByTestId('train-status');
const num = async (page: Page, name: string) => Number((await status(page).getAttribute(name)) ?? 'NaN');

describe('RL from scratch with constrained decoding', () => {
  for (const [preset, shot] of [
    ['flaky-api-scratch-grpo', 'scratch-flaky'],
    ['kv-lookup-scratch-grpo', 'scratch-kv'],
  ] as const) {
    it(`${preset}: chosen from the preset list, started from the Train view, success reaches 0.8`, { timeout: 300_000 }, async () => {
      const page = await browser().newPage({ viewport: { width: 1400, height: 1000 } });
      const errors = watchErrors(page);
      await page.goto(`${appUrl}#view=train`);
      await page.getByTestId(`preset-${preset}`).click();
      expect(await page.getByTestId('field-rollout.constrained').isChecked()).toBe(true);
      await page.getByTestId('train-start').click();
      await expect.poll(() => num(page, 'data-iteration'), { timeout: 120_000, interval: 500 }).toBeGreaterThanOrEqual(1);
      await expect.poll(() => num(page, 'data-max-success'), { timeout: 180_000, interval: 1000 }).toBeGreaterThanOrEqual(0.8);
      console.log(`${preset} in the tab: success ${await num(page, 'data-max-success')} by iteration ${await num(page, 'data-iteration')}`);
      await page.screenshot({ path: `${ARTIFACTS}/${shot}.png` });
      expect(errors).toEqual([]);
      page.on('dialog', (d) => void d.accept());
      await page.close({ runBeforeUnload: false });
    });
  }
});
