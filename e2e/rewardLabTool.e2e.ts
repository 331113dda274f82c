/**
 * The reward lab on a tool (token) run: a term typed into the editor and applied to a running
 * calculator run (a tiny transformer, a one-step warm start, so the run starts in seconds) is
 * scored per tool call / answer turn in the training worker's sandbox, and its
 * reward/<term>/mean curve appears. The untrained policy writes malformed actions, so a term
 * charging −1 per malformed turn reads below 0 from the first iteration it scores. Then the
 * run's token batches are frozen and re-scored with a cost per turn added.
 */
import { describe, expect, inject, it } from 'vitest';
import type { Page } from 'playwright-core';
import { afterTwoFrames, ARTIFACTS, pasteRewardCode, useBrowser, watchErrors } from './browser.ts';

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
    // A trained batch scored by v1 to freeze: with every episode malformed (-1 each), a group's
    // rewards are all equal and dynamic sampling drops it, so an iteration can end with no
    // trained episodes (nothing kept for re-scoring); wait for one that has some.
    await expect.poll(() => page.getByTestId('rescore-freeze').isEnabled(), { timeout: 120_000, interval: 250 }).toBe(true);
    await page.getByTestId('train-pause').click();
    await expect.poll(() => status(page).getAttribute('data-status'), { timeout: 30_000 }).toBe('paused');
    // 'paused' is set once the pause's checkpoint is saved, the last iteration by the chart feed's
    // per-frame flush: let that land before taking the count the re-score must leave alone.
    await afterTwoFrames(page);
    const trained = await num(page, 'data-iteration');

    // Re-scoring a token batch: freeze what v1 scored, add a cost per turn, re-score. The token
    // episodes are scored from their recorded turns (no replay); no training step is taken.
    await page.getByTestId('rescore-freeze').click();
    await expect.poll(async () => Number(await page.getByTestId('rescore-frozen').getAttribute('data-episodes'))).toBeGreaterThan(0);
    const frozen = Number(await page.getByTestId('rescore-frozen').getAttribute('data-episodes'));
    await pasteRewardCode(page, 'export const formatBonus = (step) => (step.info.malformed ? -1 : 0);\nexport const turnCost = (step) => -0.1;\n');
    await page.getByTestId('rescore-run').click();
    await expect.poll(() => page.getByTestId('rescore-flips').getAttribute('data-n'), { timeout: 60_000, interval: 250 }).toBe(String(frozen));
    const cost = page.getByTestId('rescore-dist-turnCost');
    expect(await cost.getAttribute('data-kind')).toBe('new');
    // −0.1 per turn: an episode's sum is −0.1 × its turns (at least one).
    expect(Number(await cost.getAttribute('data-after-mean'))).toBeLessThanOrEqual(-0.1 + 1e-9);
    const kept = page.getByTestId('rescore-dist-formatBonus');
    expect(await kept.getAttribute('data-before-mean')).toBe(await kept.getAttribute('data-after-mean'));
    console.log(`token re-score: ${frozen} episodes, ${(await page.getByTestId('rescore-flips').textContent())?.trim()}`);
    expect(await num(page, 'data-iteration')).toBe(trained);
    await page.getByTestId('rescore').scrollIntoViewIfNeeded();
    await page.getByTestId('rescore').screenshot({ path: `${ARTIFACTS}/rescore-tokens.png` });
    // The most moved episode opens in the trajectory inspector, as a token episode.
    const row = page.getByTestId('rescore-moved-row').first();
    const openIndex = await row.getAttribute('data-index');
    await row.getByTestId('rescore-open').click();
    await expect.poll(() => page.getByTestId('trajectory-inspector').getAttribute('data-episode')).toBe(openIndex);
    expect(await page.getByTestId('grid-replay').count()).toBe(0);
    expect(errors).toEqual([]);
    await page.close();
  });
});
