/**
 * A code env with a vector observation (a Box of floats) in the Studio's Code tab, with the
 * DEFAULT backend (no ?backend=wasm): the shipped CartPole example is checked, played by hand
 * (the observation as a table, digit keys) and by its expert() (Expert button: 500 steps), saved
 * in the browser beside a second env (both listed, each reopens), exported as .js, and trained in
 * the tab with the Code tab's first preset (GRPO, MLP) until an iteration keeps the pole up all
 * 500 steps in half its sampled episodes (success ≥ 0.5; a random policy: 0); the Live rollout card
 * shows the observation as text and the trajectory inspector says why there is no map. axe-core
 * on each state, and the tab at 390 px by keyboard.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, inject, it } from 'vitest';
import type { Download, Page } from 'playwright-core';
import { ARTIFACTS, axeProblems, sideways, useBrowser, watchErrors } from './browser.ts';

const appUrl = inject('appUrl');
const browser = useBrowser();
const CARTPOLE = readFileSync(new URL('../examples/envs/cartpole.js', import.meta.url), 'utf8');

const checkStatus = (page: Page) => page.getByTestId('code-env-check-status').textContent();
const playStatus = (page: Page) => page.getByTestId('code-env-play-status').textContent();

async function openExample(page: Page, id: string): Promise<string> {
  await page.getByTestId('code-env-example').selectOption(id);
  await expect.poll(() => checkStatus(page), { timeout: 60_000 }).toMatch(/^Check (passed|failed)/);
  return (await checkStatus(page))!;
}

describe('env studio: a vector-observation code env (CartPole)', () => {
  it('checks, plays by hand and by its expert, saves two envs, exports .js, and trains in the tab with the default backend to success >= 0.5', { timeout: 600_000 }, async () => {
    const page = await browser().newPage({ viewport: { width: 1300, height: 1000 }, acceptDownloads: true });
    const errors = watchErrors(page);
    await page.goto(`${appUrl}#view=studio&tab=code`);
    await page.getByTestId('code-env-panel').waitFor();
    expect(await openExample(page, 'cartpole')).toBe('Check passed: CartPole (code) (vector, 2 actions, 500 steps at most).');

    // By hand: the observation is a table of named values; key 2 pushes right.
    await page.getByTestId('code-env-play').click();
    const table = page.getByTestId('code-env-vector');
    await table.waitFor();
    expect(await table.locator('tbody th').allTextContents()).toEqual(['cart position', 'cart velocity', 'pole angle', 'pole angular velocity']);
    await page.getByTestId('code-env-stage').focus();
    await page.keyboard.press('2');
    await expect.poll(() => playStatus(page)).toBe('step 1/500 · return 1.000');
    expect(await page.getByTestId('code-env-last-action').textContent()).toBe('Last action: push right · reward 1');
    expect(await axeProblems(page)).toEqual([]);
    // The module's expert() keeps the pole up to the limit.
    await page.getByTestId('code-env-expert').click();
    await expect.poll(() => playStatus(page), { timeout: 30_000 }).toBe('step 500/500 · return 500.000 · success');
    await page.screenshot({ path: `${ARTIFACTS}/vector-env-expert.png` });

    // Saved in this browser: CartPole, then the empty room; both listed, and CartPole reopens.
    await page.getByTestId('code-env-save-browser').click();
    await expect.poll(() => page.getByTestId('code-env-saved-open').allTextContents()).toEqual(['CartPole (code)']);
    const [dl] = (await Promise.all([page.waitForEvent('download'), page.getByTestId('code-env-export').click()])) as [Download, void];
    expect(dl.suggestedFilename()).toBe('cartpole.js');
    expect(readFileSync((await dl.path())!, 'utf8')).toBe(CARTPOLE);
    expect(await openExample(page, 'empty-room')).toMatch(/^Check passed: Empty room 8x8 \(code\) \(grid,/);
    await page.getByTestId('code-env-save-browser').click();
    await expect.poll(() => page.getByTestId('code-env-saved-open').allTextContents()).toEqual(['Empty room 8x8 (code)', 'CartPole (code)']);
    await page.getByTestId('code-env-saved-open').nth(1).click();
    await expect.poll(() => checkStatus(page), { timeout: 60_000 }).toBe('Check passed: CartPole (code) (vector, 2 actions, 500 steps at most).');
    expect(await page.locator('[data-testid=code-env-editor] .cm-content').textContent()).toContain("kind: 'vector'");
    expect(await axeProblems(page)).toEqual([]);

    // Train in the tab with the default backend and the first preset the tab offers for it.
    const preset = await page.getByTestId('code-env-preset').inputValue();
    expect(preset).toBe('grid-empty-8x8-grpo');
    await page.getByTestId('code-env-train').click();
    const status = page.getByTestId('train-status');
    const t0 = Date.now();
    // Until the threshold; a run that stops with an error fails at once, with the page's message.
    for (;;) {
      if ((await status.getAttribute('data-status')) === 'error') throw new Error(`training stopped: ${await page.locator('[role=alert]').first().textContent()}`);
      if (Number(await status.getAttribute('data-max-success')) >= 0.5) break;
      if (Date.now() - t0 > 480_000) throw new Error(`success < 0.5 after 480 s (iteration ${await status.getAttribute('data-iteration')}, success ${await status.getAttribute('data-success')})`);
      await page.waitForTimeout(1000);
    }
    const it = Number(await status.getAttribute('data-iteration'));
    console.log(`CartPole (vector code env) trained with ${preset} in the tab on engine ${await status.getAttribute('data-engine')}: success >= 0.5 by iteration ${it}, ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    await page.screenshot({ path: `${ARTIFACTS}/vector-env-trained.png` });
    // The live card shows the replayed episode's latest observation as text (no map to draw).
    await expect.poll(() => page.getByTestId('live-vector').textContent(), { timeout: 20_000 }).toMatch(/^cart position = -?[\d.e-]+, cart velocity = /);
    // The trajectory inspector says why a vector episode has no map, instead of failing to draw one.
    await page.getByTestId('tab-trajectories').click();
    await page.getByTestId('inspect-latest').click();
    await expect.poll(() => page.getByText('has vector observations: there is no map or agent view to replay').count(), { timeout: 20_000 }).toBe(1);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('works at 390 px by keyboard: no sideways scroll, the play area takes digit keys, axe-core clean', { timeout: 180_000 }, async () => {
    const page = await browser().newPage({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    await page.goto(`${appUrl}#view=studio&tab=code`);
    await page.getByTestId('code-env-panel').waitFor();
    await page.getByTestId('code-env-example').focus();
    await page.getByTestId('code-env-example').selectOption('cartpole');
    await expect.poll(() => checkStatus(page), { timeout: 60_000 }).toMatch(/^Check passed: CartPole/);
    await page.getByTestId('code-env-play').focus();
    await page.keyboard.press('Enter');
    await page.getByTestId('code-env-vector').waitFor();
    await page.getByTestId('code-env-stage').focus();
    await page.keyboard.press('1');
    await page.keyboard.press('2');
    await expect.poll(() => playStatus(page)).toBe('step 2/500 · return 2.000');
    await page.getByTestId('code-env-expert-step').focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => playStatus(page)).toBe('step 3/500 · return 3.000');
    expect(await sideways(page)).toBeLessThanOrEqual(0);
    await page.screenshot({ path: `${ARTIFACTS}/vector-env-phone.png`, fullPage: true });
    expect(await axeProblems(page)).toEqual([]);
    await page.close();
  });
});
