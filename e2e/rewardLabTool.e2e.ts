/**
 * The reward lab on a tool (token) run: a term typed into the editor and applied to a running
 * calculator run (a tiny transformer, a one-step warm start, so the run starts in seconds) is
 * scored per tool call / answer turn in the training worker's sandbox, and its
 * reward/<term>/mean curve appears. The untrained policy writes malformed actions, so a term
 * charging −1 per malformed turn reads below 0 from the first iteration it scores.
 */
import { describe, expect, inject, it } from 'vitest';
import type { Page } from 'playwright-core';
import { pasteRewardCode, useBrowser, watchErrors } from './browser.ts';

const appUrl = inject('appUrl');
const browser = useBrowser();
const status = (page: Page) => page.getByTestId('train-status');
const num = async (page: Page, name: string) => Number((await status(page).getAttribute(name)) ?? 'NaN');
const latestTerm = async (page: Page) => {
  const v = await page.getByTestId('chart-reward-user-terms').getAttribute('data-latest');
  return v === null || v === '' ? NaN : Number(v);
};

const TINY = 'model.dModel=16&model.nLayers=1&model.nHeads=2&model.dFF=32&warmStart.steps=1&rollout.groups=2&algo.groupSize=4&rollout.learnerBatch=8&rollout.maxActionTokens=12';

describe('reward lab on a tool run', () => {
  it('a term reading info.malformed, applied mid-run, scores each turn and shows its curve', { timeout: 240_000 }, async () => {
    const page = await browser().newPage({ viewport: { width: 1400, height: 1100 } });
    const errors = watchErrors(page);
    await page.goto(`${appUrl}?backend=wasm#view=train&preset=calc-grpo&iterations=400&${TINY}`);
    await page.locator('[data-testid=reward-lab] > summary').click();
    await page.getByTestId('train-start').click();
    await expect.poll(() => num(page, 'data-iteration'), { timeout: 120_000, interval: 250 }).toBeGreaterThanOrEqual(1);
    await pasteRewardCode(page, 'export const formatBonus = (step) => (step.info.malformed ? -1 : 0);\n');
    await page.getByTestId('reward-apply').click();
    await expect.poll(() => page.getByTestId('reward-status').getAttribute('data-version'), { timeout: 30_000 }).toBe('1');
    await expect(page.getByTestId('reward-error').count()).resolves.toBe(0);
    await expect.poll(() => latestTerm(page), { timeout: 60_000, interval: 250 }).toBeLessThan(0);
    console.log(`tool run: reward/formatBonus/mean ${(await latestTerm(page)).toFixed(3)} at iteration ${await num(page, 'data-iteration')}`);
    expect(await status(page).getAttribute('data-status')).toBe('running');
    await page.getByTestId('train-pause').click();
    expect(errors).toEqual([]);
    await page.close();
  });
});
