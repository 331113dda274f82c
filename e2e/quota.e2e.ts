/**
 * A small disk, for real: Chromium's quota for the app's origin is set small (DevTools protocol,
 * Storage.overrideQuotaForOrigin), and a run trains past what its trajectories would need. The
 * recorder stops saving trajectories while room is left (a quarter of the quota, or two
 * checkpoints), says so, and saves every iteration's metrics; nothing saved before is lost.
 */
import { writeFileSync } from 'node:fs';
import { describe, expect, inject, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ARTIFACTS, useBrowser, watchErrors } from './browser.ts';

const appUrl = inject('appUrl');
const browser = useBrowser();

const status = (page: Page) => page.getByTestId('train-status');
const num = async (page: Page, name: string) => Number((await status(page).getAttribute(name)) ?? 'NaN');

describe('storage quota', () => {
  it('a small quota stops trajectories while room is left, says so, and keeps every metric', { timeout: 300_000 }, async () => {
    const page = await browser().newPage({ viewport: { width: 1400, height: 1000 } });
    const errors = watchErrors(page);
    const cdp = await page.context().newCDPSession(page);
    await page.goto(`${appUrl}?backend=wasm#view=train&preset=grid-empty-8x8-grpo&iterations=30`);
    await page.getByTestId('train-status').waitFor();
    const origin = new URL(appUrl).origin;
    const before = await page.evaluate(() => navigator.storage.estimate());
    // Room for one checkpoint (~0.8 MB) and the metrics, not for a second checkpoint or 30 iterations of trajectories.
    const quota = (before.usage ?? 0) + 1_200_000;
    await cdp.send('Storage.overrideQuotaForOrigin', { origin, quotaSize: quota });
    // The override is enforced on writes, but estimate() still reports the disk's quota (10 GB
    // here): make it report the same quota, as a browser with a small disk would.
    await page.evaluate((q) => {
      const real = navigator.storage.estimate.bind(navigator.storage);
      navigator.storage.estimate = async () => ({ ...(await real()), quota: q });
    }, quota);
    // Warnings fade after a while, and the first comes at iteration 1: collect every one shown.
    const seen = new Set<string>();
    const collect = async () => {
      for (const t of await page.locator('.notice-text').allTextContents().catch(() => [] as string[])) seen.add(t);
    };
    const watcher = setInterval(() => void collect(), 250);
    await page.getByTestId('train-start').click();
    try {
      await expect.poll(() => status(page).getAttribute('data-status'), { timeout: 240_000, interval: 500 }).toBe('finished');
    } finally {
      clearInterval(watcher);
    }
    await collect();
    expect(await num(page, 'data-iteration')).toBe(30);
    const notices = [...seen];
    const after = await page.evaluate(() => navigator.storage.estimate());
    writeFileSync(`${ARTIFACTS}/quota.json`, JSON.stringify({ quota, usageBefore: before.usage, estimateAfter: after, notices }, null, 2));
    expect(notices.join('\n')).toMatch(/Storage is nearly full: this run's trajectories are no longer saved \(from iteration \d+\); its metrics still are/);
    // The checkpoint after the first iteration fits; a second copy while replacing it may not
    // (reported; the older one stays, and Resume would use it).
    for (const n of notices) expect(n).toMatch(/nearly full: this run's trajectories|checkpoint at iteration (10|20|30) was not saved/);
    // Metrics never hit the quota: no message says they stopped.
    expect(notices.join('\n')).not.toMatch(/metrics after iteration \d+ are not saved/);
    await page.screenshot({ path: `${ARTIFACTS}/quota-notice.png` });

    await page.getByTestId('view-runs').click();
    const row = page.getByTestId('run-row').first();
    await row.waitFor();
    const saved = Number(await row.getAttribute('data-iterations'));
    console.log(`quota ${quota} B: notices ${JSON.stringify(notices)}; ${saved} of 30 iterations' metrics saved`);
    // Metrics went on after trajectories stopped: all 30 iterations are saved.
    expect(saved).toBe(30);
    expect(await row.getAttribute('data-status')).toBe('finished');
    await cdp.send('Storage.overrideQuotaForOrigin', { origin });
    expect(errors).toEqual([]);
    await page.close();
  });
});
