/**
 * The browser half of `npm run bench -- soak`: trains grid-empty-8x8 on WASM in Chromium with
 * storage on for SOAK_MINUTES minutes and samples, every SOAK_EVERY_S seconds, the page's JS heap
 * after a forced GC (CDP HeapProfiler.collectGarbage + Runtime.getHeapUsage), the whole tab's
 * memory as the browser measures it (performance.measureUserAgentSpecificMemory: page and its
 * workers; the page is cross-origin isolated), the iteration and the origin's storage use. The
 * samples go to e2e/artifacts/soak-browser.json for the bench to judge. Opt-in (it takes minutes):
 * runs only when SOAK_MINUTES is set; the bench sets it.
 */
import { writeFileSync } from 'node:fs';
import { describe, expect, inject, it } from 'vitest';
import { ARTIFACTS, useBrowser, watchErrors } from './browser.ts';

const minutes = Number(process.env.SOAK_MINUTES ?? 0);
const everyS = Number(process.env.SOAK_EVERY_S ?? 15);
const appUrl = inject('appUrl');
const browser = useBrowser();

export interface BrowserSoakSample {
  /** Seconds since Start. */
  t: number;
  iteration: number;
  /** Page main-thread JS heap used after a full GC, bytes. */
  heap: number;
  /** The browser's own measure of the tab (page + workers), bytes; NaN when unavailable. */
  tab: number;
  /** The origin's storage use (navigator.storage.estimate), bytes. */
  storage: number;
}

describe.runIf(minutes > 0)('browser soak', () => {
  it(`trains ${minutes} min with storage on and samples memory`, { timeout: (minutes * 60 + 180) * 1000 }, async () => {
    const page = await browser().newPage({ viewport: { width: 1400, height: 1000 } });
    const errors = watchErrors(page);
    const cdp = await page.context().newCDPSession(page);
    await page.goto(`${appUrl}?backend=wasm#view=train&preset=grid-empty-8x8-grpo`);
    await page.getByTestId('train-status').waitFor();
    await expect.poll(() => page.getByTestId('backend-status').getAttribute('data-backend')).toBe('wasm');
    await page.getByTestId('field-iterations').fill('1000000');
    await page.getByTestId('train-start').click();
    const iteration = async () => Number((await page.getByTestId('train-status').getAttribute('data-iteration')) ?? 0);
    await expect.poll(iteration, { timeout: 120_000 }).toBeGreaterThan(0);
    const t0 = Date.now();
    const samples: BrowserSoakSample[] = [];
    for (;;) {
      await cdp.send('HeapProfiler.collectGarbage');
      const { usedSize } = await cdp.send('Runtime.getHeapUsage');
      const { tab, storage } = await page.evaluate(async () => {
        const p = performance as Performance & { measureUserAgentSpecificMemory?: () => Promise<{ bytes: number }> };
        const m = p.measureUserAgentSpecificMemory ? await p.measureUserAgentSpecificMemory().catch(() => null) : null;
        const e = await navigator.storage.estimate();
        return { tab: m?.bytes ?? NaN, storage: e.usage ?? NaN };
      });
      samples.push({ t: (Date.now() - t0) / 1000, iteration: await iteration(), heap: usedSize, tab, storage });
      if (Date.now() - t0 >= minutes * 60_000) break;
      await page.waitForTimeout(Math.max(0, everyS * 1000 - ((Date.now() - t0) % (everyS * 1000))));
    }
    expect(await page.getByTestId('train-status').getAttribute('data-status')).toBe('running');
    writeFileSync(`${ARTIFACTS}/soak-browser.json`, JSON.stringify({ minutes, samples, errors: errors.filter((e) => !/No available adapters/.test(e)) }));
    await page.screenshot({ path: `${ARTIFACTS}/soak-browser.png` });
  });
});
