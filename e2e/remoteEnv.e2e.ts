/**
 * A remote env in the tab, default backend, phone width (390×844), driven by keyboard: the
 * project's env server (`npm run serve`'s startServer) runs in this test's process on a free
 * port; a link to the calc-remote-grpo preset points at it. The page asks before it connects to
 * a server it has not connected to before (a no starts nothing and opens no session), trains over
 * the wire with a yes (the no's notice gone with it), shows the env's latency on the Speed chart, and a server that dies mid-run
 * stops the run with a named error while the run stays saved. axe-clean. Screenshot:
 * e2e/artifacts/remote-env-phone.png.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Page } from 'playwright-core';
import { startServer, type RunningServer } from '../src/server/server.ts';
import { ARTIFACTS, axeProblems, newestSavedRun, sideways, useBrowser, watchErrors } from './browser.ts';

const appUrl = inject('appUrl');
const browser = useBrowser();
const status = (page: Page) => page.getByTestId('train-status');

/** The preset, pointed at `url`, cut short: a few warm-start steps, `iterations` iterations. */
const link = (url: string, iterations: number) => `${appUrl}#view=train&preset=calc-remote-grpo&env.kwargs.url=${encodeURIComponent(url)}&warmStart.steps=4&iterations=${iterations}`;

/** Presses Start by keyboard: focus the button, Enter. */
async function startByKeyboard(page: Page): Promise<void> {
  await page.getByTestId('train-start').focus();
  await page.keyboard.press('Enter');
}

describe('remote env in the tab', () => {
  let server: RunningServer;
  let ws: string;
  beforeAll(async () => {
    server = await startServer({ envs: ['tools/calculator'], host: '127.0.0.1', port: 0, latency: 'skip' });
    ws = server.url.replace('http:', 'ws:');
  });
  afterAll(() => server.close());

  it('asks before connecting; no starts nothing; yes trains over the wire at 390 px by keyboard', { timeout: 420_000 }, async () => {
    const page = await browser().newPage({ viewport: { width: 390, height: 844 } });
    const errors = watchErrors(page);
    await page.goto(link(ws, 2));
    // A link alone connects to nothing: no session was opened by loading it.
    await expect.poll(() => page.getByTestId('train-start').isVisible()).toBe(true);
    expect(server.sessions.size).toBe(0);
    expect(await sideways(page)).toBeLessThanOrEqual(0);

    const questions: string[] = [];
    page.once('dialog', (d) => {
      questions.push(d.message());
      void d.dismiss();
    });
    await startByKeyboard(page);
    await expect.poll(() => questions.length).toBe(1);
    expect(questions[0]).toContain(`has not connected to ${ws} before`);
    await page.waitForTimeout(1000);
    expect(await status(page).getAttribute('data-status')).not.toMatch(/starting|running/);
    expect(server.sessions.size).toBe(0);
    const refusal = page.getByTestId('notices').getByText(`Not connected to ${ws}: nothing was started.`);
    expect(await refusal.count()).toBe(1);

    page.once('dialog', (d) => {
      questions.push(d.message());
      void d.accept();
    });
    await startByKeyboard(page);
    await expect.poll(() => questions.length).toBe(2);
    // The refusal's notice goes with the yes, well before a warning's 15 s fade: a run now trains.
    await expect.poll(() => refusal.count(), { timeout: 5_000 }).toBe(0);
    await expect.poll(async () => Number(await status(page).getAttribute('data-iteration')), { timeout: 360_000, interval: 1000 }).toBeGreaterThanOrEqual(1);
    // Each episode held its own session on the server while the run played.
    expect(server.sessions.size).toBeGreaterThan(0);
    const wire = page.getByTestId('chart-env-wire');
    await wire.scrollIntoViewIfNeeded();
    // The chart has the key itself (not only other keys' rows): a real round trip, over 0 ms.
    await expect.poll(async () => Number((await wire.getAttribute('data-latest')) || 'NaN'), { timeout: 30_000 }).toBeGreaterThan(0);
    await page.screenshot({ path: `${ARTIFACTS}/remote-env-phone.png` });
    expect(await axeProblems(page)).toEqual([]);
    expect(errors).toEqual([]);
    page.on('dialog', (d) => void d.accept());
    await page.close({ runBeforeUnload: false });
  });

  it('a server approved before is not asked about again; one that dies mid-run gives a named error and a saved run that resumes once it is back', { timeout: 420_000 }, async () => {
    const page = await browser().newPage({ viewport: { width: 390, height: 844 } });
    let asked = 0;
    page.on('dialog', (d) => {
      asked++;
      void d.accept();
    });
    // A fresh browser context: approve once, then the next start does not ask.
    await page.goto(link(ws, 400));
    await startByKeyboard(page);
    await expect.poll(async () => Number(await status(page).getAttribute('data-iteration')), { timeout: 360_000, interval: 1000 }).toBeGreaterThanOrEqual(1);
    expect(asked).toBe(1);
    await server.close();
    await expect.poll(() => status(page).getAttribute('data-status'), { timeout: 120_000, interval: 500 }).toBe('error');
    const said = (await page.locator('body').innerText()).replace(/\s+/g, ' ');
    expect(said).toMatch(/Training stopped: .*(connection was lost|no OpenEnv server answers|reconnects failed)/);
    const saved = await newestSavedRun(page);
    expect(saved).toMatchObject({ status: 'error', env: 'remote/openenv' });
    expect(saved!.iterations).toBeGreaterThanOrEqual(1);
    // Resumable: the checkpoint saved after its first iteration, continued once the server is back
    // on the same address (approved before, so no question), training on past the checkpoint.
    const at = saved!.checkpointAt;
    expect(at).not.toBeNull();
    server = await startServer({ envs: ['tools/calculator'], host: '127.0.0.1', port: Number(new URL(ws).port), latency: 'skip' });
    // At 390 px the views sit behind the menu.
    await page.getByTestId('menu-toggle').click();
    await page.getByTestId('view-runs').click();
    const resume = page.locator('[data-testid="run-row"][data-status="error"]').getByTestId('run-resume');
    await expect.poll(() => resume.textContent(), { timeout: 20_000 }).toBe(`Resume from ${at}`);
    await resume.focus();
    await page.keyboard.press('Enter');
    await expect.poll(async () => Number(await status(page).getAttribute('data-iteration')), { timeout: 300_000, interval: 1000 }).toBeGreaterThan(at!);
    expect(await status(page).getAttribute('data-status')).not.toBe('error');
    expect(asked).toBe(1);
    await page.close({ runBeforeUnload: false });
  });
});
