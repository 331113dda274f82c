/**
 * A reload in the middle of a tab sweep (the queued runs were once dropped without a word).
 * Now the page says what finished, what was cut off and what never started, and Resume trains the
 * rest under the same tag; Discard forgets it. One run at a time (hardwareConcurrency 2), default
 * backend (no ?backend=wasm); axe-core on the notice.
 */
import { describe, expect, inject, it } from 'vitest';
import type { Page } from 'playwright-core';
import { axeProblems, useBrowser, watchErrors } from './browser.ts';

const appUrl = inject('appUrl');
const browser = useBrowser();

const states = (page: Page) => page.getByTestId('sweep-run').evaluateAll((els) => els.map((e) => e.getAttribute('data-state')));

describe('Sweep across a reload', () => {
  it('a reload mid-sweep is named (done / cut off / not started) and Resume trains the runs left', { timeout: 400_000 }, async () => {
    const page = await browser().newPage({ viewport: { width: 1280, height: 900 } });
    const errors = watchErrors(page);
    page.on('dialog', (d) => void d.accept());
    await page.addInitScript(() => Object.defineProperty(Navigator.prototype, 'hardwareConcurrency', { get: () => 2 }));
    await page.goto(`${appUrl}#view=train&preset=grid-empty-8x8-grpo&iterations=8`);
    await page.getByTestId('tab-sweep').click();
    await page.getByTestId('sweep-seeds').fill('1-3');
    await expect.poll(() => page.getByTestId('sweep-plan').textContent()).toMatch(/^1 config × 3 seeds = 3 runs, 1 at a time/);
    await page.getByTestId('sweep-start').click();
    // The first run done, the second under way: reload.
    await expect.poll(() => states(page), { timeout: 200_000, interval: 200 }).toEqual(['done', 'running', 'queued']);
    await page.reload();
    await page.getByTestId('tab-sweep').click();
    const notice = page.getByTestId('sweep-interrupted');
    await notice.waitFor();
    expect(await notice.textContent()).toMatch(/1 of 3 runs had finished; 1 run was cut off mid-run \(saved in Runs up to their last iteration, listed as interrupted\); 1 run had not started\./);
    expect(await page.getByTestId('sweep-resume').textContent()).toBe('Resume: train the 2 runs left (those cut off from their start)');
    expect(await axeProblems(page)).toEqual([]);
    await page.getByTestId('sweep-resume').click();
    await expect.poll(() => page.getByTestId('sweep-progress').getAttribute('data-status'), { timeout: 200_000, interval: 500 }).toBe('done');
    expect(await page.getByTestId('sweep-run').evaluateAll((els) => els.map((e) => [e.getAttribute('data-name'), e.getAttribute('data-state')]))).toEqual([
      ['grid-empty-8x8-grpo · seed 2', 'done'],
      ['grid-empty-8x8-grpo · seed 3', 'done'],
    ]);
    expect(await page.getByTestId('sweep-interrupted').count()).toBe(0);
    // Ended: nothing is offered after another reload.
    await page.reload();
    await page.getByTestId('tab-sweep').click();
    await page.getByTestId('sweep-form').waitFor();
    expect(await page.getByTestId('sweep-interrupted').count()).toBe(0);
    expect(errors).toEqual([]);
    await page.close();
  });
});
