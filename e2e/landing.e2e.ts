/**
 * A class's first minute from the keyboard (the start page and the shortcuts), in Chromium on the built
 * app with the default backend (no ?backend=): a fresh profile with no hash lands on the start
 * page, which offers the first lesson and the first preset; from every view's load Start is at
 * most 3 key presses away (each press counted); after a lesson's "Set up" the focus is on Start;
 * from Pause one key goes back to the lesson; a returning visitor with no hash gets Environments.
 */
import { describe, expect, inject, it } from 'vitest';
import type { Page } from 'playwright-core';
import { useBrowser, watchErrors } from './browser.ts';

const appUrl = inject('appUrl');
const browser = useBrowser();

/** The focused element's test id (else its tag). */
const focused = (page: Page) => page.evaluate(() => document.activeElement?.getAttribute('data-testid') ?? document.activeElement?.tagName ?? '');

/** Presses `keys` one by one until `want` has the focus; returns how many it took (Infinity when none did). */
async function pressUntil(page: Page, keys: readonly string[], want: string): Promise<number> {
  for (let i = 0; i < keys.length; i++) {
    await page.keyboard.press(keys[i]);
    if ((await focused(page)) === want) return i + 1;
  }
  return Infinity;
}

async function ready(page: Page): Promise<void> {
  await page.getByTestId('backend-status').and(page.locator('[data-backend]')).waitFor();
}

describe('the landing and the keys to Start', () => {
  it('a fresh profile with no hash opens the start page: first lesson and first preset one click each; a return with no hash opens Environments', async () => {
    const context = await browser().newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const errors = watchErrors(page);
    await page.goto(appUrl);
    await ready(page);
    expect(await page.getByTestId('view-lessons').getAttribute('aria-current')).toBe('page');
    expect(await page.getByTestId('lesson-empty').isVisible()).toBe(true);
    expect(await page.getByTestId('start-first-lesson').textContent()).toBe('Start lesson 1: Sparse vs shaped reward');
    expect(await page.getByTestId('start-first-preset').textContent()).toMatch(/^Or train the first preset: Empty room 8×8 · GRPO$/);
    expect(await page.getByTestId('skip-link').textContent()).toBe('Skip to the first lesson');
    expect(await page.getByTestId('shortcut-list').textContent()).toContain('Alt+S');
    expect(new URL(page.url()).hash).toBe('#view=lessons');
    // The first preset, one click: Train with the focus on Start.
    await page.getByTestId('start-first-preset').click();
    expect(await page.getByTestId('view-train').getAttribute('aria-current')).toBe('page');
    expect(await page.getByTestId('preset-blurb').textContent()).toMatch(/^Empty room 8×8 · GRPO\./);
    expect(await focused(page)).toBe('train-start');

    // Back with no hash: a returning visitor gets Environments, as before.
    await page.goto(appUrl);
    await ready(page);
    expect(await page.getByTestId('view-environments').getAttribute('aria-current')).toBe('page');
    expect(await page.getByTestId('skip-link').textContent()).toBe('Skip to Environments');
    expect(errors).toEqual([]);
    await context.close();
  });

  it('Start within 3 keys from every view’s load (counted), the skip link on the start page and Train', { timeout: 240_000 }, async () => {
    const loads: [string, string][] = [
      ['start page (fresh, no hash)', ''],
      ['environments', '#env=grid/door-key-6x6&seed=7'],
      ['studio', '#view=studio'],
      ['studio map', '#view=studio&tab=map'],
      ['train', '#view=train&preset=grid-empty-8x8-grpo'],
      ['runs', '#view=runs'],
      ['lessons', '#view=lessons&lesson=sparse-vs-shaped&step=1'],
    ];
    const counts: Record<string, number> = {};
    for (const [name, hash] of loads) {
      const context = await browser().newContext({ viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      const errors = watchErrors(page);
      await page.goto(appUrl + hash);
      await ready(page);
      // The listed shortcut: one key from wherever the page opened.
      counts[name] = await pressUntil(page, ['Alt+S', 'Alt+S', 'Alt+S'], 'train-start');
      expect(await page.getByTestId('view-train').getAttribute('aria-current'), name).toBe('page');
      expect(errors, name).toEqual([]);
      await context.close();
    }
    console.log(`keys to Start by Alt+S: ${JSON.stringify(counts)}`);
    for (const [name, n] of Object.entries(counts)) expect(n, name).toBeLessThanOrEqual(1);

    // Without the shortcut: Train's skip link is Tab, Enter; the start page's first lesson is Tab, Enter.
    const context = await browser().newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await page.goto(appUrl + '#view=train&preset=grid-empty-8x8-grpo');
    await ready(page);
    const viaSkip = await pressUntil(page, ['Tab', 'Enter', 'Enter'], 'train-start');
    console.log(`keys to Start on Train by the skip link: ${viaSkip}`);
    expect(viaSkip).toBeLessThanOrEqual(3);
    await context.close();
    const fresh = await browser().newContext({ viewport: { width: 1280, height: 800 } });
    const start = await fresh.newPage();
    await start.goto(appUrl);
    await ready(start);
    expect(await pressUntil(start, ['Tab', 'Enter'], 'start-first-lesson')).toBe(2);
    await fresh.close();
  });

  it('the first lesson from the keyboard: Set up puts the focus on Start; from Pause, Alt+L is back at the lesson', { timeout: 240_000 }, async () => {
    const context = await browser().newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const errors = watchErrors(page);
    await page.goto(appUrl);
    await ready(page);
    // Tab, Enter: the skip link to the first lesson; Enter opens it with the focus on Set up.
    expect(await pressUntil(page, ['Tab', 'Enter', 'Enter'], 'lesson-setup')).toBe(3);
    expect(await page.getByTestId('lesson').getAttribute('data-lesson')).toBe('sparse-vs-shaped');
    // Set up: the Train view, the focus on Start (not <body>).
    await page.keyboard.press('Enter');
    expect(await page.getByTestId('lesson-banner').isVisible()).toBe(true);
    expect(await focused(page)).toBe('train-start');
    expect(await page.getByTestId('shortcut-list').textContent()).toContain('Alt+L');
    // Enter starts; the same button becomes Pause and keeps the focus.
    await page.keyboard.press('Enter');
    await expect.poll(() => focused(page), { timeout: 120_000, interval: 250 }).toBe('train-pause');
    // One key back to the lesson, its Set up focused.
    expect(await pressUntil(page, ['Alt+L'], 'lesson-setup')).toBe(1);
    expect(await page.getByTestId('lesson').getAttribute('data-step')).toBe('1');
    // And one key to Start again (the run's button: Pause while it trains).
    await page.keyboard.press('Alt+S');
    expect(await focused(page)).toMatch(/^train-(start|pause)$/);
    expect(errors).toEqual([]);
    page.on('dialog', (d) => void d.accept());
    await page.close({ runBeforeUnload: false });
    await context.close();
  });
});
