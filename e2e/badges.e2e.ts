/**
 * The badges see a policy being unlearnt: a solved empty-8×8 run gets a live entropy coef of 0.5
 * and a learning rate of 0.003, and the Outcome badge (or Exploration's high-entropy rule) turns
 * from ok to warning within a few iterations, while the invariants alone read healthy. The
 * hackable preset's farmed term turns the Reward badge 'gamed', and it stays so while the hack
 * holds.
 */
import { describe, expect, inject, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ARTIFACTS, useBrowser, watchErrors } from './browser.ts';

const appUrl = inject('appUrl');
const browser = useBrowser();
const status = (page: Page) => page.getByTestId('train-status');
const num = async (page: Page, name: string) => Number((await status(page).getAttribute(name)) ?? 'NaN');
const level = (page: Page, badge: string) => page.getByTestId(`health-${badge}`).getAttribute('data-level');

describe('health badges', () => {
  it('a live edit that collapses a solved policy turns a badge to warning within a few iterations', { timeout: 300_000 }, async () => {
    const page = await browser().newPage({ viewport: { width: 1400, height: 1000 } });
    const errors = watchErrors(page);
    await page.goto(`${appUrl}?backend=wasm#view=train&preset=grid-empty-8x8-grpo&iterations=400`);
    await page.getByTestId('train-start').click();
    await expect.poll(() => num(page, 'data-success'), { timeout: 180_000, interval: 500 }).toBeGreaterThanOrEqual(0.95);
    await expect.poll(() => level(page, 'outcome'), { timeout: 30_000 }).toBe('ok');
    const at = await num(page, 'data-iteration');
    // The iteration the page shows when a badge first turns warn or bad, noted in the page as it
    // happens (any change to the page is looked at, in case a badge is redrawn anew): a poll from
    // here adds the iterations trained during its interval, as many as the machine is fast.
    await page.evaluate(() => {
      const w = window as unknown as { warnedAt?: number };
      const warned = () => ['outcome', 'exploration'].some((b) => /^(warn|bad)$/.test(document.querySelector(`[data-testid=health-${b}]`)?.getAttribute('data-level') ?? ''));
      const note = () => {
        if (w.warnedAt === undefined && warned()) w.warnedAt = Number(document.querySelector('[data-testid=train-status]')?.getAttribute('data-iteration'));
      };
      note();
      new MutationObserver(note).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-level'] });
    });
    await page.getByTestId('field-algo.entropyCoef').fill('0.5');
    await page.getByTestId('field-algo.lr').fill('0.003');
    const warnedAt = () => page.evaluate(() => (window as unknown as { warnedAt?: number }).warnedAt ?? null);
    await expect.poll(warnedAt, { timeout: 120_000, interval: 500 }).not.toBeNull();
    const after = (await warnedAt())! - at;
    // A fall after a live edit names the edit (the later of the two, same iteration), not a generic cause.
    if ((await level(page, 'outcome')) !== 'ok') expect(await page.getByTestId('health-outcome').textContent()).toMatch(/since (Learning rate|Entropy coef\w*) changed at iteration \d+/);
    await page.screenshot({ path: `${ARTIFACTS}/badges-regression.png` });
    console.log(`a badge warned ${after} iterations after the edit: outcome ${await level(page, 'outcome')}, exploration ${await level(page, 'exploration')}`);
    expect(after).toBeLessThanOrEqual(15);
    expect(errors).toEqual([]);
    page.on('dialog', (d) => void d.accept());
    await page.close({ runBeforeUnload: false });
  });

  it("the hackable preset: the Reward badge turns 'gamed' and stays so for 20 more iterations while the hack holds", { timeout: 400_000 }, async () => {
    const page = await browser().newPage({ viewport: { width: 1400, height: 1000 } });
    const errors = watchErrors(page);
    page.on('dialog', (d) => void d.accept());
    // The preset's own reward-lab term ('closer', farmed by walking back and forth); a link with
    // code asks before replacing the person's, and this fresh profile has none.
    await page.goto(`${appUrl}?backend=wasm#view=train&preset=grid-empty-8x8-hackable&iterations=200`);
    await page.getByTestId('train-start').click();
    const text = () => page.getByTestId('health-reward').textContent();
    await expect.poll(text, { timeout: 240_000, interval: 250 }).toMatch(/gamed/);
    const caught = await num(page, 'data-iteration');
    // Every iteration from then on, for 20: still 'gamed' (bad), whether the shaped return keeps
    // rising or has plateaued.
    const seen = new Map<number, string>();
    while ((seen.size === 0 ? caught : Math.max(...seen.keys())) < caught + 20) {
      const it = await num(page, 'data-iteration');
      seen.set(it, `${await level(page, 'reward')} ${await text()}`);
      await page.waitForTimeout(100);
    }
    const held = [...seen.entries()].filter(([it]) => it > caught);
    console.log(`hackable: gamed at iteration ${caught}; ${held.length} readings over the next 20 iterations; last: ${held.at(-1)?.[1]}`);
    await page.getByTestId('health-reward').screenshot({ path: `${ARTIFACTS}/badges-hack-held.png` });
    for (const [it, v] of held) expect(v, `iteration ${it}`).toMatch(/^bad .*gamed/);
    expect(errors).toEqual([]);
    await page.close({ runBeforeUnload: false });
  });

  it("lesson 2.1's collapse (success found, then lost to an over-confident policy) turns the Outcome badge away from green", { timeout: 300_000 }, async () => {
    const page = await browser().newPage({ viewport: { width: 1400, height: 1000 } });
    const errors = watchErrors(page);
    await page.goto(`${appUrl}?backend=wasm#view=lessons&lesson=exploration-collapse&step=1`);
    await page.getByTestId('lesson-setup').click();
    await page.getByTestId('train-start').click();
    // The run's own record: success must have been above 0 and then be lost; read from the
    // dashboard's series, not assumed.
    await expect.poll(() => status(page).getAttribute('data-status'), { timeout: 240_000, interval: 1000 }).toBe('finished');
    // The run says finished before its last iteration is drawn: the status bar takes the history
    // once per animation frame (chartFeed), the badges and charts a deferred copy of it
    // (useDeferredValue in Dashboard). Read them once the success chart holds all 30 iterations.
    const chart = page.getByTestId('chart-success');
    await chart.scrollIntoViewIfNeeded();
    await expect.poll(async () => [await num(page, 'data-iteration'), Number(await chart.getAttribute('data-points'))], { timeout: 15_000 }).toEqual([30, 30]);
    const best = await num(page, 'data-max-success');
    const last = await num(page, 'data-success');
    console.log(`lesson 2.1: best success ${best}, last ${last}; outcome ${await level(page, 'outcome')}: ${await page.getByTestId('health-outcome').textContent()}`);
    await page.screenshot({ path: `${ARTIFACTS}/badges-lesson-2-1.png` });
    // The step's seeded run finds the goal (best 22% in one iteration) and then collapses to 0%:
    // the lesson's premise, and the moment the badge once read green "holding".
    expect(best).toBeGreaterThan(0);
    expect(last).toBe(0);
    expect(await level(page, 'outcome')).not.toBe('ok');
    expect(errors).toEqual([]);
    page.on('dialog', (d) => void d.accept());
    await page.close({ runBeforeUnload: false });
  });
});
