/**
 * The host's device check, on the built app with the default backend: one click
 * gives a verdict per lesson within 30 s, twice (the figures of both runs side by side), and the
 * hosting facts are right for the e2e server (isolated, compressed). Then the same build served
 * as a careless host would: no COOP/COEP, nothing compressed, plain HTTP on a LAN address: the
 * page names the insecure context (not the browser) as why WebGPU is missing, and the app's
 * backend panel says Auto chose WASM (nobody picked it in a field).
 */
import { writeFileSync } from 'node:fs';
import { describe, expect, inject, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ARTIFACTS, axeProblems, LAN_HOST, sideways, useBrowser, watchErrors } from './browser.ts';
import { serveStatic } from './serve.ts';
import { LESSONS } from '../src/app/lessons/index.ts';

const appUrl = inject('appUrl');
const browser = useBrowser();

/** Clicks the check's button, waits for its verdicts, returns the seconds from the click and the page's lines. */
async function runCheck(page: Page) {
  const card = page.getByTestId('lesson-check');
  const t0 = Date.now();
  await page.getByTestId('check-run').click();
  await expect.poll(() => card.getAttribute('data-status'), { timeout: 60_000, interval: 200 }).toMatch(/done|failed/);
  const seconds = (Date.now() - t0) / 1000;
  expect(await card.getAttribute('data-status')).toBe('done');
  const verdicts = await page.getByTestId('check-verdicts').locator('li').allTextContents();
  const shapes = await page.getByTestId('check-shapes').locator('tbody tr').evaluateAll((rows) => rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent).join(' | ')));
  console.log(`${seconds.toFixed(1)} s\n${shapes.join('\n')}\n${verdicts.join('\n')}`);
  return { seconds, verdicts, shapes };
}

describe('device check for a host', () => {
  it('one click: a verdict per lesson within 30 s, twice, with the spread; hosting facts; axe clean; 390 px', { timeout: 240_000 }, async () => {
    const page = await browser().newPage({ viewport: { width: 1100, height: 1000 } });
    const errors = watchErrors(page);
    await page.goto(`${appUrl}check.html`);
    await expect.poll(() => page.getByTestId('check-hosting').getAttribute('data-status'), { timeout: 20_000 }).toBe('done');
    const runs = [await runCheck(page), await runCheck(page)];
    for (const r of runs) {
      expect(r.seconds).toBeLessThanOrEqual(30);
      expect(r.verdicts).toHaveLength(LESSONS.lessons.length);
      // A lesson played over the wire (its env on an OpenEnv server) is named, not timed: the check contacts no server.
      r.verdicts.forEach((v, i) => expect(v).toMatch(new RegExp(`^((ready: lesson ${i + 1} takes about|slow: lesson ${i + 1} needs about) [\\d.]+ (s|minutes)|needs a server: lesson ${i + 1} plays its env over the wire from ws://)`)));
    }
    // Side by side: the second run's table has a column for the first.
    expect(await page.getByTestId('check-shapes').locator('thead th').count()).toBe(3);
    const lines = [`run 1: ${runs[0].seconds.toFixed(1)} s, run 2: ${runs[1].seconds.toFixed(1)} s`, 'setup | run 2 | run 1', ...runs[1].shapes, ...runs[0].verdicts.map((v, i) => `${v}  ||  ${runs[1].verdicts[i]}`)];
    console.log(lines.join('\n'));
    writeFileSync(`${ARTIFACTS}/device-check-lessons.txt`, lines.join('\n') + '\n');
    // The e2e server sends COOP/COEP and Brotli files to 127.0.0.1 (a secure context).
    expect(await page.getByTestId('hosting-secure').getAttribute('data-ok')).toBe('true');
    expect(await page.getByTestId('hosting-isolated').getAttribute('data-ok')).toBe('true');
    expect(await page.getByTestId('hosting-compressed').textContent()).toMatch(/^. ?Compressed assets served/);
    await page.screenshot({ path: `${ARTIFACTS}/device-check-lessons.png`, fullPage: true });
    expect(await axeProblems(page)).toEqual([]);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.waitForTimeout(200);
    expect(await sideways(page)).toBe(0);
    await page.screenshot({ path: `${ARTIFACTS}/device-check-390.png`, fullPage: true });
    expect(errors).toEqual([]);
    await page.close();
  });

  it('served carelessly (no COOP/COEP, uncompressed, http on a LAN address): names the insecure context and Auto as the chooser', { timeout: 120_000 }, async () => {
    // Served on 127.0.0.1 and opened as http://lan.test (browser.ts maps that name to loopback):
    // a name that is not loopback makes the page an insecure context, as a LAN address does.
    const served = await serveStatic('dist', '/lan/', false, {}, { precompressed: false });
    const server = { url: served.url.replace('127.0.0.1', LAN_HOST), close: () => served.close() };
    try {
      const page = await browser().newPage({ viewport: { width: 1100, height: 1000 } });
      await page.goto(`${server.url}check.html?coi=0`);
      await expect.poll(() => page.getByTestId('check-hosting').getAttribute('data-status'), { timeout: 20_000 }).toBe('done');
      const isolated = (await page.getByTestId('hosting-isolated').textContent()) ?? '';
      expect(isolated).toMatch(/Not cross-origin isolated: the host does not send Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp/);
      expect(await page.getByTestId('hosting-compressed').textContent()).toMatch(/Assets served uncompressed/);
      console.log(isolated);
      const secure = (await page.getByTestId('hosting-secure').textContent()) ?? '';
      expect(secure).toMatch(/not a secure context \(http on a LAN address\): browsers withhold WebGPU and threads; serve it over HTTPS or from localhost/);
      console.log(secure);
      const backend = (await page.getByTestId('check-backend').textContent()) ?? '';
      expect(backend).toMatch(/WASM/);
      // The app itself: the status bar's panel says why there is no WebGPU, and who chose WASM.
      await page.goto(`${server.url}?coi=0`);
      await page.getByTestId('backend-status').click();
      const panel = (await page.getByRole('dialog', { name: 'Execution backend details' }).textContent()) ?? '';
      console.log(panel);
      expect(panel).not.toMatch(/navigator\.gpu is missing/);
      expect(panel).not.toMatch(/Chosen in the Backend field/);
      expect(panel).toMatch(/Auto's choice: WASM, the only backend here \(this page is not a secure context \(http on a LAN address\)/);
      await page.screenshot({ path: `${ARTIFACTS}/device-check-lan.png`, fullPage: true });
      await page.close();
    } finally {
      await server.close();
    }
  });
});
