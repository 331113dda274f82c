/**
 * A small disk, for real: Chromium's quota for the app's origin is set small (DevTools protocol,
 * Storage.overrideQuotaForOrigin), and a run trains past what its trajectories would need. The
 * recorder stops saving trajectories while room is left (a quarter of the quota, or two
 * checkpoints), says so, and saves every iteration's metrics; nothing saved before is lost.
 * A moment of a full disk (the quota shrunk under the run, restored at the notice) and a database
 * deleted mid-run lose no iteration either: the recorder keeps the rows in memory and writes them
 * once it can.
 */
import { writeFileSync } from 'node:fs';
import { describe, expect, inject, it } from 'vitest';
import type { CDPSession } from 'playwright-core';
import type { Page } from 'playwright-core';
import { RUNS_DB_NAME } from '../src/runtime/storage/runStore.ts';
import { ARTIFACTS, newestSavedRun, useBrowser, watchErrors } from './browser.ts';

const appUrl = inject('appUrl');
const browser = useBrowser();

const status = (page: Page) => page.getByTestId('train-status');
/**
 * Waits until the app has created its run store (main.tsx opens it at load, a moment after the
 * view shows), so a usage taken next already counts it and the quota set from it is the room the
 * test means.
 */
const runStoreOpened = (page: Page) => expect.poll(() => page.evaluate(async () => (await indexedDB.databases()).map((d) => d.name)), { timeout: 15_000 }).toContain(RUNS_DB_NAME);
const num = async (page: Page, name: string) => Number((await status(page).getAttribute(name)) ?? 'NaN');

describe('storage quota', () => {
  it('a small quota stops trajectories while room is left, says so, and keeps every metric', { timeout: 300_000 }, async () => {
    const page = await browser().newPage({ viewport: { width: 1400, height: 1000 } });
    const errors = watchErrors(page);
    const cdp = await page.context().newCDPSession(page);
    await page.goto(`${appUrl}?backend=wasm#view=train&preset=grid-empty-8x8-grpo&iterations=30`);
    await page.getByTestId('train-status').waitFor();
    await runStoreOpened(page);
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
    // 'finished' is set as the run's end is saved; the last iteration reaches the status bar
    // through the chart feed's per-frame flush, which can come a frame after: poll for it.
    await expect.poll(() => num(page, 'data-iteration'), { timeout: 10_000 }).toBe(30);
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

    const row = await savedRunRow(page);
    const saved = Number(await row.getAttribute('data-iterations'));
    console.log(`quota ${quota} B: notices ${JSON.stringify(notices)}; ${saved} of 30 iterations' metrics saved`);
    // Metrics went on after trajectories stopped: all 30 iterations are saved.
    expect(saved).toBe(30);
    expect(await row.getAttribute('data-status')).toBe('finished');
    await cdp.send('Storage.overrideQuotaForOrigin', { origin });
    expect(errors).toEqual([]);
    await page.close();
  });

  /** Every notice shown so far (they fade after a while), collected every 250 ms until `stop()`. */
  function noticeWatch(page: Page) {
    const seen = new Set<string>();
    const collect = async () => {
      for (const t of await page.locator('.notice-text').allTextContents().catch(() => [] as string[])) seen.add(t);
    };
    const timer = setInterval(() => void collect(), 250);
    return {
      get all() {
        return [...seen];
      },
      async stop() {
        clearInterval(timer);
        await collect();
      },
    };
  }

  /** The saved run's row in Runs, opened once its record is final. */
  async function savedRunRow(page: Page) {
    // The record's last rows and final status are written behind the Train view's 'finished';
    // Runs reads the store once as it opens (it re-reads only while a run trains).
    await expect.poll(async () => (await newestSavedRun(page))?.status, { timeout: 30_000 }).toBe('finished');
    await page.getByTestId('view-runs').click();
    const row = page.getByTestId('run-row').first();
    await row.waitFor();
    return row;
  }

  const resetQuota = (cdp: CDPSession, origin: string) => cdp.send('Storage.overrideQuotaForOrigin', { origin });

  it('a full disk mid-run, freed at the notice: the rows wait in memory, are written once there is room, and the saved run has every iteration', { timeout: 400_000 }, async () => {
    // Long enough that the metrics' writes fail before the run ends whatever the trajectories
    // took first (~1 KB of metrics per iteration into the 150 KB of room: CI once reached
    // iteration 25 with metrics still saving), so the test never races the clock.
    const N = 200;
    const page = await browser().newPage({ viewport: { width: 1400, height: 1000 } });
    const errors = watchErrors(page);
    const cdp = await page.context().newCDPSession(page);
    const origin = new URL(appUrl).origin;
    await page.goto(`${appUrl}?backend=wasm#view=train&preset=grid-empty-8x8-grpo&iterations=${N}`);
    await status(page).waitFor();
    await runStoreOpened(page);
    const notices = noticeWatch(page);
    try {
      // 150 KB of room: the first checkpoint (~0.8 MB) does not fit, the trajectories fill the
      // rest within a few iterations, then the metrics' writes fail too. (A quota shrunk under a
      // database already open is not enforced here: Chromium checks writes against the space it
      // found left when the database opened, until a write needs more than that.)
      const { usage } = await page.evaluate(() => navigator.storage.estimate());
      await cdp.send('Storage.overrideQuotaForOrigin', { origin, quotaSize: (usage ?? 0) + 150_000 });
      await page.getByTestId('train-start').click();
      await expect.poll(() => notices.all.some((n) => /its metrics from iteration \d+ on wait in memory/.test(n)), { timeout: 120_000, interval: 250 }).toBe(true);
      const fullAt = await num(page, 'data-iteration');
      await resetQuota(cdp, origin);
      await expect.poll(() => status(page).getAttribute('data-status'), { timeout: 300_000, interval: 500 }).toBe('finished');
      await expect.poll(() => notices.all.some((n) => /^Saving works again: iterations \d+–\d+ were saved; the saved run has every iteration\.$/.test(n)), { timeout: 60_000, interval: 250 }).toBe(true);
      await notices.stop();
      console.log(`disk full until iteration ${fullAt}: notices ${JSON.stringify(notices.all)}`);
      const row = await savedRunRow(page);
      await expect.poll(() => row.getAttribute('data-status')).toBe('finished');
      expect(Number(await row.getAttribute('data-iterations'))).toBe(N);
      expect(await row.getAttribute('data-missing')).toBe('');
      await row.getByTestId('run-open').click();
      await page.getByTestId('run-detail').waitFor();
      expect(await page.getByTestId('run-missing-detail').count()).toBe(0);
      expect(errors).toEqual([]);
    } finally {
      await notices.stop();
      await resetQuota(cdp, origin).catch(() => undefined);
      await page.close();
    }
  });

  it('a database deleted mid-run is noticed, the run is saved again from memory with every iteration, and the person is told', { timeout: 400_000 }, async () => {
    const N = 20;
    const page = await browser().newPage({ viewport: { width: 1400, height: 1000 } });
    const errors = watchErrors(page);
    await page.goto(`${appUrl}?backend=wasm#view=train&preset=grid-empty-8x8-grpo&iterations=${N}`);
    await status(page).waitFor();
    const notices = noticeWatch(page);
    try {
      await page.getByTestId('train-start').click();
      await expect.poll(() => num(page, 'data-iteration'), { timeout: 120_000, interval: 250 }).toBeGreaterThanOrEqual(3);
      // As "Clear site data" or a script would: the app's connections close, the database goes.
      const outcome = await page.evaluate(
        () =>
          new Promise<string>((resolve) => {
            const r = indexedDB.deleteDatabase('agentic-rl-playground-runs');
            r.onsuccess = () => resolve('deleted');
            r.onerror = () => resolve(`error: ${r.error?.message}`);
          }),
      );
      expect(outcome).toBe('deleted');
      await expect.poll(() => notices.all.some((n) => /saved copy was deleted while it trained/.test(n)), { timeout: 120_000, interval: 250 }).toBe(true);
      await expect.poll(() => status(page).getAttribute('data-status'), { timeout: 300_000, interval: 500 }).toBe('finished');
      await notices.stop();
      console.log(`database deleted mid-run: notices ${JSON.stringify(notices.all)}`);
      const row = await savedRunRow(page);
      await expect.poll(() => row.getAttribute('data-status')).toBe('finished');
      expect(Number(await row.getAttribute('data-iterations'))).toBe(N);
      expect(await row.getAttribute('data-missing')).toBe('');
      // It can be resumed from: a checkpoint was saved again after the deletion.
      expect(Number(await row.getAttribute('data-checkpoint'))).toBe(N);
      expect(errors).toEqual([]);
    } finally {
      await notices.stop();
      await page.close();
    }
  });
});
