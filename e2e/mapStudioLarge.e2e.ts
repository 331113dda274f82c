/**
 * The map studio on a large map, in Chromium on the built app, with the default backend (no
 * ?backend=wasm): the 25×25 map with a key and 4 locked doors is checked (the check showed
 * "Checking…" for 131 s and never finished) and its expert plays it; Space in map play toggles
 * (it pressed the focused "Play this map" button, leaving play and losing the episode); "Train on
 * this map" with a finished run on the Train view starts a new run on the map (it was "Train 40
 * more" on the old run and config); axe-core finds nothing serious in play.
 */
import { describe, expect, inject, it } from 'vitest';
import type { Page } from 'playwright-core';
import { axeProblems, newestSavedRun, useBrowser, watchErrors } from './browser.ts';
import fourDoors from '../src/core/envs/grid/fixtures/four-doors-25x25.json';

const appUrl = inject('appUrl');
const browser = useBrowser();

const studioLink = (rows: readonly string[], maxSteps: number) => `${appUrl}#view=studio&tab=map&map=${encodeURIComponent(rows.join('/'))}&maxSteps=${maxSteps}`;
const steps = async (page: Page) => Number(await page.getByTestId('episode-status').getAttribute('data-steps'));

/** The newest saved run's env id and iteration budget (null before one is saved). */
const newestRunConfig = async (page: Page) => {
  const r = await newestSavedRun(page);
  return r && { env: r.env, iterations: r.budget };
};

describe('map studio: a large map, Space in play, Train on this map after a finished run', () => {
  it('the 25×25 map with 4 doors is checked and its expert plays it; Space toggles in play and keeps the episode (mouse and keyboard); axe clean', { timeout: 180_000 }, async () => {
    const page = await browser().newPage({ viewport: { width: 1400, height: 1000 } });
    const errors = watchErrors(page);
    await page.goto(studioLink(fourDoors.rows, fourDoors.maxSteps));
    await page.getByTestId('map-editor').waitFor();
    await expect.poll(() => page.getByTestId('map-verdict').textContent(), { timeout: 60_000 }).toBe('Solvable in 130 steps');
    await expect.poll(() => page.getByTestId('map-contract').textContent()).toMatch(/^checkEnv: the env keeps the contract/);

    // Mouse: open play, then Space (the game's toggle; the agent faces a wall, so nothing opens).
    await page.getByTestId('map-play-toggle').click();
    await page.getByTestId('map-play').waitFor();
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press(' ');
    await expect.poll(() => steps(page)).toBe(2);
    expect(await page.getByTestId('map-play').count()).toBe(1);
    expect(await page.getByTestId('map-play-toggle').getAttribute('aria-pressed')).toBe('true');
    // The expert plays the rest (its plan is a few ms on this map): E steps it.
    const before = await steps(page);
    for (let i = 0; i < 5; i++) await page.keyboard.press('e');
    await expect.poll(() => steps(page)).toBe(before + 5);
    expect(await axeProblems(page)).toEqual([]);

    // Keyboard: back to drawing and into play again by Enter on the toggle, then Space.
    await page.getByTestId('map-play-toggle').click();
    await page.getByTestId('map-editor').waitFor();
    await page.getByTestId('map-play-toggle').focus();
    await page.keyboard.press('Enter');
    await page.getByTestId('map-play').waitFor();
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe('map-play');
    await page.keyboard.press(' ');
    await expect.poll(() => steps(page)).toBe(1);
    expect(await page.getByTestId('map-play').count()).toBe(1);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('"Train on this map" with a finished run on Train starts a new run on the map, not more of the old one', { timeout: 300_000 }, async () => {
    const page = await browser().newPage({ viewport: { width: 1400, height: 1000 } });
    const errors = watchErrors(page);
    // A finished run: the 8×8 empty room, 1 iteration.
    await page.goto(`${appUrl}#view=train&preset=grid-empty-8x8-grpo&iterations=1`);
    await page.getByTestId('train-start').click();
    await expect.poll(() => page.getByTestId('train-status').getAttribute('data-status'), { timeout: 120_000 }).toBe('finished');
    await expect.poll(() => newestRunConfig(page)).toEqual({ env: 'grid/empty-8x8', iterations: 1 });

    // The studio's map, trained with the same preset's algorithm.
    await page.evaluate((h) => (location.hash = h), `#view=studio&tab=map&map=${encodeURIComponent('#####/#>.G#/#...#/#####')}`);
    await expect.poll(() => page.getByTestId('map-verdict').textContent(), { timeout: 30_000 }).toBe('Solvable in 2 steps');
    await page.getByTestId('map-preset').selectOption('grid-empty-8x8-grpo');
    await page.getByTestId('map-train').click();
    await page.getByTestId('train-status').waitFor();
    // The run is finished and the settings changed: the main button starts a new run.
    await expect.poll(() => page.getByTestId('train-start').textContent()).toMatch(/Start a new run$/);
    await page.getByTestId('train-start').click();
    await expect.poll(() => newestRunConfig(page), { timeout: 120_000 }).toEqual({ env: 'grid/custom', iterations: 40 });
    await expect.poll(() => page.getByTestId('train-status').getAttribute('data-status'), { timeout: 60_000 }).toBe('running');
    expect(await page.getByTestId('train-status').textContent()).toMatch(/iteration\s*\d+\s*\/ 40/);
    await page.getByTestId('train-pause').click();
    await expect.poll(() => page.getByTestId('train-status').getAttribute('data-status'), { timeout: 60_000 }).toBe('paused');
    expect(errors).toEqual([]);
    page.on('dialog', (d) => void d.accept());
    await page.close({ runBeforeUnload: false });
  });
});
