/**
 * The backend a newcomer gets: opened with no query string, in Chromium whose only WebGPU
 * adapter is a software one, the app times the run's model at Start, keeps WASM, shows both
 * figures, trains at WASM speed, and remembers the choice for the next start.
 */
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { describe, expect, inject, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ARTIFACTS, useBrowser, watchErrors } from './browser.ts';
import { serveStatic } from './serve.ts';

const appUrl = inject('appUrl');
const browser = useBrowser();

const status = (page: Page) => page.getByTestId('train-status');
const num = async (page: Page, name: string) => Number((await status(page).getAttribute(name)) ?? 'NaN');

describe('auto backend, by measurement', () => {
  it('no query string: Start times the backends, keeps WASM over a software adapter, and trains 10 iterations (time logged against the 30 s bar)', { timeout: 240_000 }, async () => {
    const context = await browser().newContext({ viewport: { width: 1400, height: 1000 } });
    const page = await context.newPage();
    const errors = watchErrors(page);
    await page.goto(appUrl);
    const backend = page.getByTestId('backend-status');
    await expect.poll(() => backend.getAttribute('data-backend')).toBe('auto');
    expect(await backend.textContent()).toMatch(/Auto: WASM .* or WebGPU \(software adapter/);

    await page.getByTestId('view-train').click();
    expect(await page.getByTestId('field-backend').inputValue()).toBe('auto');
    // The default preset, made long enough that the pauses below find it running however fast
    // this machine trains (the run must be in progress, never raced against the clock).
    await page.getByTestId('field-iterations').fill('400');
    const t0 = Date.now();
    await page.getByTestId('train-start').click();
    // The choice and both figures: WASM's time per step, and the software adapter named and left out.
    await expect.poll(() => backend.getAttribute('data-backend'), { timeout: 30_000 }).toBe('wasm');
    const line = (await backend.textContent()) ?? '';
    expect(line).toMatch(/^WASM · \d+ threads? · [\d.]+ ms\/step — WebGPU \(software\): not timed \(a software adapter is never picked unless forced\)$/);
    // The bar is 10 iterations within 30 s of Start on a quiet 2-core machine; that is a
    // speed figure, logged here and measured by the benchmarks, not asserted: a busy shared
    // machine took 40+ s (load 9). A broken choice (a software adapter picked) needs minutes.
    await expect.poll(() => num(page, 'data-iteration'), { timeout: 120_000, interval: 250 }).toBeGreaterThanOrEqual(10);
    const seconds = (Date.now() - t0) / 1000;
    expect(await status(page).getAttribute('data-engine')).toBe('ort-web-wasm');

    await backend.click();
    const details = page.getByTestId('engine-choice');
    await details.waitFor();
    expect(await details.textContent()).toMatch(/Measured for MLP 984→64→64→7/);
    const wasmRow = (await page.getByTestId('engine-candidate-wasm').textContent()) ?? '';
    expect(wasmRow).toMatch(/WASM · \d+ threads? \(chosen\)[\d.]+/);
    const timing = Number(/Timing took ([\d.]+) s/.exec((await page.getByTestId('engine-choice-time').textContent()) ?? '')?.[1]);
    expect(timing).toBeGreaterThan(0);
    await page.screenshot({ path: `${ARTIFACTS}/backend-auto.png` });
    writeFileSync(`${ARTIFACTS}/backend-auto.json`, JSON.stringify({ line, timingS: timing, seconds, iterations: await num(page, 'data-iteration') }, null, 2));
    console.log(`auto backend: "${line}"; timing took ${timing} s; 10 iterations ${seconds.toFixed(1)} s after Start (target ≤ 30 s); load ${loadavg()[0].toFixed(1)}`);
    await page.keyboard.press('Escape');
    await page.getByTestId('train-pause').click();
    await expect.poll(() => status(page).getAttribute('data-status'), { timeout: 60_000 }).toBe('paused');

    // A reload remembers the choice for this device and model: the next start measures nothing.
    // The paused run lives only in this tab, so leaving asks first (accepted here).
    const dialogs: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.type());
      void d.accept();
    });
    await page.reload();
    expect(dialogs).toEqual(['beforeunload']);
    await page.getByTestId('view-train').click();
    await page.getByTestId('train-start').click();
    // A liveness wait, not a speed bar (the 30 s bar is timed above): a loaded machine took 55 s.
    await expect.poll(() => num(page, 'data-iteration'), { timeout: 90_000 }).toBeGreaterThanOrEqual(1);
    expect(await backend.getAttribute('data-backend')).toBe('wasm');
    await backend.click();
    expect(await page.getByTestId('engine-choice').textContent()).toMatch(/Remembered from/);
    await page.keyboard.press('Escape');
    await page.getByTestId('train-pause').click();
    await expect.poll(() => status(page).getAttribute('data-status'), { timeout: 60_000 }).toBe('paused');

    // "Measure again" times the backends afresh (in a worker of its own) and says so.
    await backend.click();
    await page.getByTestId('measure-again').click();
    await expect.poll(async () => (await page.getByTestId('engine-choice').textContent()) ?? '', { timeout: 30_000 }).toMatch(/Measured at this start/);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('?backend=webgpu still forces the software adapter, and says so', async () => {
    const page = await browser().newPage({ viewport: { width: 1280, height: 800 } });
    const errors = watchErrors(page);
    await page.goto(appUrl + '?backend=webgpu#view=train');
    const backend = page.getByTestId('backend-status');
    await expect.poll(() => backend.getAttribute('data-backend')).toBe('webgpu');
    expect(await backend.textContent()).toMatch(/WebGPU \(software adapter.*forced by \?backend=webgpu/);
    expect(await page.getByTestId('field-backend').inputValue()).toBe('webgpu');
    expect(errors).toEqual([]);
    await page.close();
  });

  it('a host that sends no COOP/COEP: the service worker isolates the page after one reload, and ?coi=0 opts out', async () => {
    const plain = await serveStatic('dist', '/pages/', false);
    try {
      const context = await browser().newContext({ viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      const errors = watchErrors(page);
      await page.goto(plain.url);
      await expect.poll(() => page.evaluate(() => crossOriginIsolated), { timeout: 30_000 }).toBe(true);
      await page.getByTestId('backend-status').and(page.locator('[data-backend]')).waitFor();
      // SharedArrayBuffer exists, and the app's own workers still load (training starts).
      expect(await page.evaluate(() => typeof SharedArrayBuffer)).toBe('function');
      await page.goto(plain.url + '?backend=wasm#view=train&preset=grid-empty-8x8-grpo&iterations=2');
      expect(await page.evaluate(() => crossOriginIsolated)).toBe(true);
      await page.getByTestId('train-start').click();
      // Liveness, not speed: at load ~12 the first iteration alone took 55 s.
      await expect.poll(() => num(page, 'data-iteration'), { timeout: 120_000 }).toBeGreaterThanOrEqual(2);
      expect(errors).toEqual([]);
      await context.close();

      const optOut = await browser().newPage();
      await optOut.goto(plain.url + '?coi=0');
      await optOut.getByTestId('backend-status').and(optOut.locator('[data-backend]')).waitFor();
      expect(await optOut.evaluate(() => crossOriginIsolated)).toBe(false);
      expect(await optOut.evaluate(() => navigator.serviceWorker.controller)).toBeNull();
      await optOut.close();
    } finally {
      await plain.close();
    }
  });
});
