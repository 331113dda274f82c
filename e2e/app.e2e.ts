import { describe, expect, inject, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ARTIFACTS, useBrowser, watchErrors } from './browser.ts';

const appUrl = inject('appUrl');
const shots = ARTIFACTS;
const browser = useBrowser();

async function open(path: string): Promise<{ page: Page; errors: string[] }> {
  const page = await browser().newPage({ viewport: { width: 1280, height: 800 } });
  const errors = watchErrors(page);
  await page.goto(appUrl + path);
  await page.getByTestId('backend-status').and(page.locator('[data-backend]')).waitFor();
  return { page, errors };
}

describe('the built app, served from a sub-path', () => {
  it('loads with no console errors and finds the software WebGPU adapter (a candidate, timed at Start)', async () => {
    const { page, errors } = await open('');
    const status = page.getByTestId('backend-status');
    await expect.poll(() => status.getAttribute('data-backend')).toBe('auto');
    expect(await status.textContent()).toMatch(/WebGPU \(software adapter/);
    expect(await page.evaluate(() => crossOriginIsolated)).toBe(true);
    await page.screenshot({ path: `${shots}/home.png` });
    expect(errors).toEqual([]);
    await page.close();
  });

  it('falls back to WASM when asked, and says how many threads', async () => {
    const { page, errors } = await open('?backend=wasm');
    const status = page.getByTestId('backend-status');
    await expect.poll(() => status.getAttribute('data-backend')).toBe('wasm');
    expect(await status.textContent()).toMatch(/WASM.*thread/);
    expect(errors).toEqual([]);
    await page.close();
  });
});

describe('playing the environments by hand', () => {
  it('a grid env: keyboard moves the agent, the expert finishes the episode', async () => {
    const { page, errors } = await open('#env=grid/door-key-6x6&seed=7');
    const status = page.getByTestId('episode-status');
    await page.getByTestId('grid-canvas').waitFor();
    await page.screenshot({ path: `${shots}/grid-start.png` });
    // Human play: turn, step forward, turn back (arrow keys are the documented map).
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press('ArrowLeft');
    await expect.poll(() => status.getAttribute('data-steps')).toBe('3');
    await page.screenshot({ path: `${shots}/grid-human-play.png` });
    // The expert takes it from here to the goal.
    for (let i = 0; i < 40 && (await status.getAttribute('data-state')) === 'running'; i++) await page.getByTestId('expert-step').click();
    await expect.poll(() => status.getAttribute('data-state')).toBe('terminated');
    expect(await status.getAttribute('data-success')).toBe('true');
    await page.screenshot({ path: `${shots}/grid-expert-solved.png` });
    expect(errors).toEqual([]);
    await page.close();
  });

  it('a two-agent grid: the keys move whichever agent acts, the expert finishes for both', async () => {
    const { page, errors } = await open('#env=grid/switch-door&seed=3');
    const status = page.getByTestId('episode-status');
    const acting = page.getByTestId('acting-agent');
    await page.getByTestId('grid-canvas').waitFor();
    expect(await acting.textContent()).toMatch(/agent A acts/);
    await page.keyboard.press('ArrowLeft'); // A turns
    await expect.poll(() => status.getAttribute('data-steps')).toBe('1');
    expect(await acting.textContent()).toMatch(/agent B acts/);
    await page.keyboard.press('ArrowRight'); // B turns
    await expect.poll(() => status.getAttribute('data-steps')).toBe('2');
    expect(await acting.textContent()).toMatch(/agent A acts/);
    for (let i = 0; i < 60 && (await status.getAttribute('data-state')) === 'running'; i++) await page.getByTestId('expert-step').click();
    await expect.poll(() => status.getAttribute('data-state')).toBe('terminated');
    expect(await status.getAttribute('data-success')).toBe('true');
    await page.screenshot({ path: `${shots}/grid-two-agents-solved.png` });
    expect(errors).toEqual([]);
    await page.close();
  });

  it('a tool env: typed calls get tool answers, malformed ones an error, a right answer ends it', async () => {
    const { page, errors } = await open('#env=tools/calculator&seed=3');
    const transcript = page.getByTestId('transcript');
    await transcript.waitFor();
    const task = (await transcript.locator('[data-role="task"]').first().textContent()) ?? '';
    const m = /what is (\d+) \* (\d+)/.exec(task);
    expect(m, `task text: ${task}`).not.toBeNull();
    const input = page.getByTestId('tool-input');
    await input.fill('calc(1+)');
    await input.press('Enter');
    await expect.poll(() => transcript.locator('[data-role="error"]').count()).toBe(1);
    await input.fill(`calc(${m![1]}*${m![2]})`);
    await input.press('Enter');
    const product = String(Number(m![1]) * Number(m![2]));
    await expect.poll(async () => (await transcript.locator('[data-role="tool"]').last().textContent()) ?? '').toContain(product);
    await page.screenshot({ path: `${shots}/tool-human-play.png` });
    await input.fill(`answer(${product})`);
    await input.press('Enter');
    const status = page.getByTestId('episode-status');
    await expect.poll(() => status.getAttribute('data-state')).toBe('terminated');
    expect(await status.getAttribute('data-success')).toBe('true');
    expect(await page.getByTestId('malformed-count').textContent()).toContain('1');
    await page.screenshot({ path: `${shots}/tool-solved.png` });
    expect(errors).toEqual([]);
    await page.close();
  });

  it('a bad link gets a clear notice and a working default view', async () => {
    const { page, errors } = await open('#env=grid/nope&seed=banana');
    await expect.poll(() => page.getByTestId('notices').textContent()).toMatch(/grid\/nope/);
    await page.getByTestId('episode-status').waitFor();
    await page.screenshot({ path: `${shots}/bad-link.png` });
    expect(errors).toEqual([]);
    await page.close();
  });
});
