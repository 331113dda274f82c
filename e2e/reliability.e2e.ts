/**
 * Hostile input and failures in the tab: a 100 KB link, a training worker that dies without an
 * error event, leaving mid-run, and the app under the Content-Security-Policy docs/hosting.md
 * recommends.
 */
import { describe, expect, inject, it } from 'vitest';
import type { Page } from 'playwright-core';
import { useBrowser, watchErrors, ARTIFACTS } from './browser.ts';
import { serveStatic } from './serve.ts';
import type { SelfTestReport } from '../src/runtime/engine/selfTest.ts';

const appUrl = inject('appUrl');
const browser = useBrowser();

const status = (page: Page) => page.getByTestId('train-status');
const num = async (page: Page, name: string) => Number((await status(page).getAttribute(name)) ?? 'NaN');

/** The policy docs/hosting.md recommends (keep the two in step). */
export const RECOMMENDED_CSP =
  "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; worker-src 'self' blob:; connect-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; object-src 'none'; base-uri 'self'; form-action 'none'; frame-ancestors 'none'";

describe('reliability in the tab', () => {
  it('a 100 KB link gets a short notice whose close button works', async () => {
    const page = await browser().newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(`${appUrl}#view=train&preset=grid-empty-8x8-grpo&algo.lr=${'9'.repeat(100_000)}`);
    const notice = page.locator('.notice').first();
    await notice.waitFor();
    const text = (await notice.locator('.notice-text').textContent()) ?? '';
    expect(text.length).toBeLessThanOrEqual(201);
    const box = (await notice.locator('.notice-close').boundingBox())!;
    expect(box.x + box.width).toBeLessThanOrEqual(1280);
    await notice.locator('.notice-close').click();
    await expect.poll(() => page.locator('.notice').count()).toBe(0);
    await page.close();
  });

  it('a training worker that dies silently turns the run to an error within the heartbeat timeout; Start works again', { timeout: 150_000 }, async () => {
    const page = await browser().newPage({ viewport: { width: 1280, height: 800 } });
    // The page's clock runs on real time until the kill below, then runs 31 s of timers at once
    // (the workers keep real time; only the page's heartbeat timer and clock move). runFor, not
    // fastForward: the watchdog ignores a check that fires late (a stalled page) and judges at
    // the next one on time, so the checks must come every 2 s of the page's clock.
    await page.clock.install();
    await page.goto(`${appUrl}?backend=wasm#view=train&preset=grid-empty-8x8-grpo&iterations=1000`);
    await page.getByTestId('train-start').click();
    await expect.poll(() => num(page, 'data-iteration'), { timeout: 60_000 }).toBeGreaterThanOrEqual(1);
    // Kill it from inside without an error event (as an out-of-memory kill would).
    const trainer = page.workers().find((w) => /trainWorker|worker-/.test(w.url()) && !/rollout|token/.test(w.url()));
    expect(trainer, page.workers().map((w) => w.url()).join(', ')).toBeDefined();
    await trainer!.evaluate(() => self.close()).catch(() => undefined);
    // No progress message comes from a closed worker either: the page's next 32 s of checks see silence.
    await page.clock.runFor(34_000);
    await expect.poll(() => status(page).getAttribute('data-status'), { timeout: 60_000, interval: 1000 }).toBe('error');
    expect(await page.locator('body').textContent()).toMatch(/the training worker stopped answering for 30 s and made no progress/);
    await page.screenshot({ path: `${ARTIFACTS}/worker-died.png` });
    await page.getByTestId('train-start').click();
    await expect.poll(() => status(page).getAttribute('data-status'), { timeout: 60_000 }).toBe('running');
    await expect.poll(() => num(page, 'data-iteration'), { timeout: 60_000 }).toBeGreaterThanOrEqual(1);
    page.on('dialog', (d) => void d.accept());
    await page.close({ runBeforeUnload: false });
  });

  it('leaving mid-run asks first; dismissing keeps the run', async () => {
    const page = await browser().newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(`${appUrl}?backend=wasm#view=train&preset=grid-empty-8x8-grpo&iterations=1000`);
    await page.getByTestId('train-start').click();
    await expect.poll(() => num(page, 'data-iteration'), { timeout: 60_000 }).toBeGreaterThanOrEqual(1);
    const seen: string[] = [];
    page.once('dialog', (d) => {
      seen.push(d.type());
      void d.dismiss();
    });
    await page.evaluate(() => location.reload()).catch(() => undefined);
    await expect.poll(() => seen).toEqual(['beforeunload']);
    const before = await num(page, 'data-iteration');
    await expect.poll(() => num(page, 'data-iteration'), { timeout: 30_000 }).toBeGreaterThan(before);
    page.on('dialog', (d) => void d.accept());
    await page.close({ runBeforeUnload: false });
  });

  it('under the recommended Content-Security-Policy the app loads its workers and WASM, trains, and the device check runs WebGPU', { timeout: 240_000 }, async () => {
    const server = await serveStatic('dist', '/csp/', true, { 'Content-Security-Policy': RECOMMENDED_CSP });
    try {
      const page = await browser().newPage({ viewport: { width: 1280, height: 800 } });
      const errors = watchErrors(page);
      const violations: string[] = [];
      page.on('console', (m) => {
        if (/Content Security Policy|Refused to/.test(m.text())) violations.push(m.text());
      });
      await page.goto(`${server.url}#view=train&preset=grid-empty-8x8-grpo&iterations=3`);
      await page.getByTestId('train-start').click();
      await expect.poll(() => status(page).getAttribute('data-status'), { timeout: 90_000 }).toBe('finished');
      const check = await browser().newPage();
      check.on('console', (m) => {
        if (/Content Security Policy|Refused to/.test(m.text())) violations.push(m.text());
      });
      // The device check on one model (the MLP): ORT's WebGPU build loads under the policy, places
      // every node on WebGPU and agrees with WASM. The full check (both models, the session layer,
      // the per-preset timings) is engine.e2e.ts's; the policy changes nothing between models.
      await check.goto(`${server.url}check.html?autorun=engine&budget=1&models=mlp-76k`);
      await expect.poll(() => check.getByTestId('selftest').getAttribute('data-status', { timeout: 5000 }).catch(() => 'busy'), { timeout: 200_000, interval: 1000 }).toMatch(/done|failed/);
      const failure = (await check.locator('.check-error').allTextContents()).join('; ');
      expect(await check.getByTestId('selftest').getAttribute('data-status'), failure).toBe('done');
      const report = JSON.parse((await check.getByTestId('selftest-json').textContent()) ?? '{}') as SelfTestReport;
      expect(report.errors).toEqual([]);
      expect(report.webgpu).toBe(true);
      expect(report.placements.map((p) => p.graph)).toEqual(['mlp-76k policy', 'mlp-76k train step']);
      for (const p of report.placements) {
        expect(p.counts.WebGpuExecutionProvider, p.graph).toBeGreaterThan(0);
        expect(p.cpuNodes, p.graph).toEqual([]);
      }
      expect(report.agreements.map((a) => a.model)).toEqual(['mlp-76k']);
      expect(report.agreements[0].maxAbsDiff).toBeLessThanOrEqual(1e-4);
      expect(violations).toEqual([]);
      expect(errors).toEqual([]);
      await check.close();
      await page.close();
    } finally {
      await server.close();
    }
  });
});
