/**
 * Any screen, any keyboard, any reader (phone width, keyboard only, a screen reader), in Chromium on the built app:
 * axe-core finds no serious or critical violation on Environments, Train (idle, reward lab open,
 * and training), Runs and Lessons; Start is reached in at most 3 Tab presses (the skip link) and
 * keeps the focus when it becomes Pause; at 390×844 nothing scrolls sideways, Start is inside
 * the viewport, and a chart draws after Start. The start page (a first visit with no hash) passes
 * axe at desktop width and at 390×844, with its first-lesson button in view.
 */
import { writeFileSync } from 'node:fs';
import { describe, expect, inject, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ARTIFACTS, useBrowser, watchErrors, axeProblems, sideways } from './browser.ts';

const appUrl = inject('appUrl');
const browser = useBrowser();
const num = async (page: Page, name: string) => Number((await page.getByTestId('train-status').getAttribute(name)) ?? 'NaN');



describe('accessibility and small screens', () => {
  it('axe-core: no serious or critical violation on every view, idle and while training', { timeout: 300_000 }, async () => {
    const page = await browser().newPage({ viewport: { width: 1400, height: 1000 } });
    const errors = watchErrors(page);
    const report: Record<string, string[]> = {};
    await page.goto(`${appUrl}?backend=wasm#view=train&preset=grid-empty-8x8-grpo&iterations=400`);
    await page.getByTestId('train-status').waitFor();
    // The reward lab's editor open (a labelled code editor).
    await page.locator('[data-testid=reward-lab] > summary').click();
    await page.locator('[data-testid=reward-editor] .cm-content').waitFor();
    report['train (idle, reward lab open)'] = await axeProblems(page);
    expect(await page.locator('h1').count()).toBe(1);

    await page.getByTestId('train-start').click();
    await expect.poll(() => num(page, 'data-iteration'), { timeout: 120_000, interval: 250 }).toBeGreaterThanOrEqual(3);
    // Every badge has a verdict by now (the reward badge needs 6 iterations).
    await expect.poll(() => num(page, 'data-iteration'), { timeout: 120_000, interval: 250 }).toBeGreaterThanOrEqual(6);
    report['train (training)'] = await axeProblems(page);
    await page.getByTestId('train-pause').click();
    await expect.poll(() => page.getByTestId('train-status').getAttribute('data-status'), { timeout: 60_000 }).toBe('paused');
    await page.getByTestId('tab-groups').click();
    await page.getByTestId('group-view').waitFor();
    report['train (groups)'] = await axeProblems(page);

    for (const view of ['environments', 'runs', 'lessons'] as const) {
      await page.getByTestId(`view-${view}`).click();
      await page.waitForTimeout(300);
      if (view === 'runs') await page.getByTestId('run-row').first().waitFor();
      if (view === 'lessons') await page.getByTestId('lesson-item-signal-degeneration').click();
      report[view] = await axeProblems(page);
      const h1 = await page.locator('h1').count();
      if (h1 !== 1) report[view].push(`${h1} h1 elements (one per view)`);
    }
    writeFileSync(`${ARTIFACTS}/a11y-axe.json`, JSON.stringify(report, null, 2));
    expect(report).toEqual({ 'train (idle, reward lab open)': [], 'train (training)': [], 'train (groups)': [], environments: [], runs: [], lessons: [] });
    expect(errors).toEqual([]);
    page.on('dialog', (d) => void d.accept());
    await page.close({ runBeforeUnload: false });
  });

  it('the start page (fresh profile, no hash): axe-clean at 1400 and 390 px, one h1, the first lesson in view on a phone', { timeout: 120_000 }, async () => {
    const report: Record<string, string[]> = {};
    for (const [name, viewport, phone] of [['start (desktop)', { width: 1400, height: 1000 }, false], ['start (390)', { width: 390, height: 844 }, true]] as const) {
      const page = await browser().newPage({ viewport, isMobile: phone, hasTouch: phone });
      const errors = watchErrors(page);
      await page.goto(appUrl);
      const first = page.getByTestId('start-first-lesson');
      await first.waitFor();
      await page.getByTestId('backend-status').and(page.locator('[data-backend]')).waitFor();
      report[name] = await axeProblems(page);
      const h1 = await page.locator('h1').count();
      if (h1 !== 1) report[name].push(`${h1} h1 elements (one per view)`);
      const box = (await first.boundingBox())!;
      expect(box.x + box.width, name).toBeLessThanOrEqual(viewport.width);
      expect(box.y + box.height, name).toBeLessThanOrEqual(viewport.height);
      expect(await sideways(page), name).toBeLessThanOrEqual(0);
      await page.screenshot({ path: `${ARTIFACTS}/start-${phone ? 'phone' : 'desktop'}.png` });
      expect(errors, name).toEqual([]);
      await page.close();
    }
    writeFileSync(`${ARTIFACTS}/a11y-axe-start.json`, JSON.stringify(report, null, 2));
    expect(report).toEqual({ 'start (desktop)': [], 'start (390)': [] });
  });

  it('keyboard: Start within 3 Tab presses; the focus stays on the run button as Start becomes Pause', { timeout: 180_000 }, async () => {
    const page = await browser().newPage({ viewport: { width: 1400, height: 1000 } });
    const errors = watchErrors(page);
    await page.goto(`${appUrl}?backend=wasm#view=train&preset=grid-empty-8x8-grpo&iterations=400`);
    await page.getByTestId('train-status').waitFor();
    const focused = () => page.evaluate(() => document.activeElement?.getAttribute('data-testid') ?? document.activeElement?.tagName ?? '');
    let presses = 0;
    while (presses < 3 && !['skip-link', 'train-start'].includes(await focused())) {
      await page.keyboard.press('Tab');
      presses++;
    }
    expect(await focused()).toMatch(/^(skip-link|train-start)$/);
    expect(await page.getByTestId('skip-link').textContent()).toBe('Skip to Start');
    if ((await focused()) === 'skip-link') await page.keyboard.press('Enter');
    expect(await focused()).toBe('train-start');
    console.log(`Start focused after ${presses} Tab press(es)`);
    await page.keyboard.press('Enter');
    await expect.poll(() => num(page, 'data-iteration'), { timeout: 120_000, interval: 250 }).toBeGreaterThanOrEqual(1);
    // Start became Pause on the same button, which kept the focus: Space pauses.
    expect(await focused()).toBe('train-pause');
    await page.keyboard.press('Space');
    await expect.poll(() => page.getByTestId('train-status').getAttribute('data-status'), { timeout: 60_000 }).toBe('paused');
    expect(await focused()).toBe('train-start');
    expect(errors).toEqual([]);
    page.on('dialog', (d) => void d.accept());
    await page.close({ runBeforeUnload: false });
  });

  it('390×844: one column, nothing scrolls sideways, Start in view, a chart after Start; the menu and the settings drawer work', { timeout: 240_000 }, async () => {
    const page = await browser().newPage({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const errors = watchErrors(page);
    await page.goto(`${appUrl}?backend=wasm#view=train&preset=grid-empty-8x8-grpo&iterations=400`);
    const start = page.getByRole('button', { name: 'Start', exact: true });
    await start.waitFor();
    const box = (await start.boundingBox())!;
    expect(box.x).toBeGreaterThanOrEqual(0);
    expect(box.y).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width).toBeLessThanOrEqual(390);
    expect(box.y + box.height).toBeLessThanOrEqual(844);
    expect(await sideways(page)).toBeLessThanOrEqual(0);
    // The presets and settings are a drawer.
    expect(await page.getByTestId('field-algo.lr').isVisible()).toBe(false);
    await page.getByTestId('drawer-toggle').click();
    await page.getByTestId('field-algo.lr').waitFor({ state: 'visible' });
    expect(await sideways(page)).toBeLessThanOrEqual(0);
    await page.screenshot({ path: `${ARTIFACTS}/phone-settings.png` });
    await page.getByTestId('drawer-close').click();
    await start.click();
    await expect.poll(() => num(page, 'data-iteration'), { timeout: 120_000, interval: 250 }).toBeGreaterThanOrEqual(2);
    const chart = page.getByTestId('chart-success');
    await chart.scrollIntoViewIfNeeded();
    await expect.poll(async () => Number(await chart.getAttribute('data-points')), { timeout: 30_000 }).toBeGreaterThanOrEqual(2);
    // The live charts are plain SVG paths (MetricChart): the success line has a drawn segment.
    await expect.poll(async () => ((await chart.locator('svg path[fill="none"]').first().getAttribute('d').catch(() => null)) ?? '').length, { timeout: 30_000 }).toBeGreaterThan(10);
    expect(await chart.locator('svg path[fill="none"]').first().isVisible()).toBe(true);
    const chartBox = (await chart.boundingBox())!;
    expect(chartBox.x + chartBox.width).toBeLessThanOrEqual(390);
    expect(await sideways(page)).toBeLessThanOrEqual(0);
    await page.screenshot({ path: `${ARTIFACTS}/phone-training.png` });
    await page.getByTestId('train-pause').click();
    await expect.poll(() => page.getByTestId('train-status').getAttribute('data-status'), { timeout: 60_000 }).toBe('paused');
    // The views through the menu, none wider than the screen.
    for (const view of ['environments', 'runs', 'lessons'] as const) {
      await page.getByTestId('menu-toggle').click();
      await page.getByTestId(`view-${view}`).click();
      await page.waitForTimeout(300);
      expect(await sideways(page), view).toBeLessThanOrEqual(0);
      await page.screenshot({ path: `${ARTIFACTS}/phone-${view}.png` });
    }
    expect(errors).toEqual([]);
    page.on('dialog', (d) => void d.accept());
    await page.close({ runBeforeUnload: false });
  });
});
