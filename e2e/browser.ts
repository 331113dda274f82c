/** Launching Debian's Chromium through playwright-core, with the flags that expose a software WebGPU adapter here. */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { chromium, type Browser, type ConsoleMessage, type Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { RUNS_DB_NAME } from '../src/runtime/storage/runStore.ts';

export const CHROMIUM_CANDIDATES = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter(
  (p): p is string => !!p,
);

export function findChromium(): string | null {
  return CHROMIUM_CANDIDATES.find((p) => existsSync(p)) ?? null;
}

export const NO_CHROMIUM_MESSAGE =
  'No Chromium found (looked at ' +
  CHROMIUM_CANDIDATES.join(', ') +
  ').\nThe end-to-end tests need a real Chromium. On Debian/Ubuntu: sudo apt-get install -y chromium\n' +
  'or set CHROMIUM_PATH to a Chromium/Chrome binary.';

/** The name the tests use for a page served on a LAN address (mapped to 127.0.0.1 in Chromium). */
export const LAN_HOST = 'lan.test';

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
  '--enable-unsafe-webgpu',
  // A host name that is not loopback by name (so not a secure context over http) but resolves to
  // the loopback server: how the tests see a page served "on a LAN address" without leaving 127.0.0.1.
  `--host-resolver-rules=MAP ${LAN_HOST} 127.0.0.1`,
];

export async function launch(): Promise<Browser> {
  const executablePath = findChromium();
  if (!executablePath) throw new Error(NO_CHROMIUM_MESSAGE);
  return chromium.launch({ executablePath, args: CHROMIUM_ARGS, headless: true });
}

/** Collects console errors and uncaught page errors, so a test can assert there were none. */
export function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (m: ConsoleMessage) => {
    if (m.type() === 'error') errors.push(`console.error: ${m.text()}`);
  });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  return errors;
}

/** Where tests save screenshots and measurements (ignored by git). */
export const ARTIFACTS = 'e2e/artifacts';

/** One Chromium for the calling test file: launched before its tests, closed after them. */
export function useBrowser(): () => Browser {
  let browser: Browser | undefined;
  beforeAll(async () => {
    browser = await launch();
  });
  afterAll(async () => {
    await browser?.close();
  });
  return () => {
    if (!browser) throw new Error('useBrowser: Chromium is not launched yet (call it at the top of a test file)');
    return browser;
  };
}

declare global {
  interface Window {
    __longTasks: { start: number; duration: number }[];
  }
}

/** Runs in the page before any of its scripts: records every long task (> 50 ms by definition). */
export function installLongTaskObserver(): void {
  window.__longTasks = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__longTasks.push({ start: e.startTime, duration: e.duration });
  }).observe({ type: 'longtask', buffered: true });
}

/** One main-thread task from Chromium's trace: when it started (page clock is not used; ms from the trace's start), its wall time and the CPU time the thread actually ran, ms. */
export interface MainThreadTask {
  atMs: number;
  wallMs: number;
  cpuMs: number;
}

/**
 * Traces the renderer's main thread ('toplevel' category: one event per task, with wall and
 * thread CPU time) until the returned function is called; that returns the tasks whose wall time
 * exceeded 50 ms (what the 'longtask' observer would report) with their CPU time.
 *
 * Why CPU time: these machines have 2 cores, and training keeps a rollout worker and the learner
 * busy, so the OS sometimes runs the main thread a third of the time; a task with 15 ms of work
 * then reads as 50+ ms of wall clock (measured: 114 ms wall, 36 ms CPU). A task whose own work
 * passes 50 ms is ours to fix on any machine, and that is what the tests assert.
 */
export async function traceMainThread(browser: Browser, page: Page): Promise<() => Promise<MainThreadTask[]>> {
  await browser.startTracing(page, { categories: ['toplevel'] });
  return async () => {
    const buf = await browser.stopTracing();
    type Ev = { ph?: string; name?: string; pid?: number; tid?: number; ts?: number; dur?: number; tdur?: number; args?: { name?: string } };
    const parsed = JSON.parse(buf.toString('utf8')) as { traceEvents?: Ev[] } | Ev[];
    const events = Array.isArray(parsed) ? parsed : (parsed.traceEvents ?? []);
    const mains = new Set(
      events.filter((e) => e.ph === 'M' && e.name === 'thread_name' && e.args?.name === 'CrRendererMain').map((e) => `${e.pid}:${e.tid}`),
    );
    const tasks = events.filter((e) => e.ph === 'X' && e.name === 'ThreadControllerImpl::RunTask' && mains.has(`${e.pid}:${e.tid}`));
    const t0 = Math.min(...tasks.map((e) => e.ts ?? 0));
    return tasks
      .filter((e) => (e.dur ?? 0) > 50_000)
      .map((e) => ({ atMs: ((e.ts ?? 0) - t0) / 1000, wallMs: (e.dur ?? 0) / 1000, cpuMs: (e.tdur ?? 0) / 1000 }));
  };
}

/** The tasks among `tasks` whose own work (CPU time) passed 50 ms: blocking that is ours, not the OS's. */
export const cpuLongTasks = (tasks: MainThreadTask[]) => tasks.filter((t) => t.cpuMs > 50);

/** A one-line summary for the log: how many wall-clock long tasks, the longest, and the most CPU any of them used. */
export const describeTasks = (tasks: MainThreadTask[]) =>
  `${tasks.length} tasks > 50 ms wall (max ${Math.max(0, ...tasks.map((t) => t.wallMs)).toFixed(0)} ms), max CPU ${Math.max(0, ...tasks.map((t) => t.cpuMs)).toFixed(0)} ms`;

/**
 * Replaces the reward lab editor's text as a person pasting it would: select all, then a paste
 * event that CodeMirror handles itself. (Playwright's insertText goes through the browser's
 * native contenteditable editing instead, which spent 57 ms CPU in one 'textInput' dispatch here:
 * the harness's cost, not a person's.)
 */
export async function pasteRewardCode(page: Page, code: string): Promise<void> {
  await page.locator('[data-testid=reward-editor] .cm-content').click();
  await page.keyboard.press('Control+A');
  await page.locator('[data-testid=reward-editor] .cm-content').evaluate((el, text) => {
    const data = new DataTransfer();
    data.setData('text/plain', text);
    el.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
  }, code);
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** Serious and critical axe-core violations on the page as it is now, one line each (rule, count, first targets). */
export async function axeProblems(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ content: axeSource });
  const found = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (ctx: Document, o: object) => Promise<{ violations: { id: string; impact: string | null; nodes: { target: string[] }[] }[] }> } }).axe;
    const r = await axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n) => n.target.join(' ')) }));
  });
  return found.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}) × ${v.targets.length}: ${v.targets.slice(0, 3).join(' | ')}`);
}

/** How far the page scrolls sideways, px: its content is wider than the viewport when > 0. */
export const sideways = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

/**
 * The newest saved run's status, metric rows saved, checkpoint iteration, env id and iteration
 * budget (its config's `iterations`), read straight from IndexedDB (null before
 * one is saved). A run's end reaches its record after the Train view says so (the recorder writes
 * the last rows and the final status behind it), and Runs reads the record once as it opens: wait
 * on this before opening Runs to read a finished run there.
 */
export function newestSavedRun(page: Page): Promise<{ status: string; iterations: number; checkpointAt: number | null; env: string; budget: number } | null> {
  return page.evaluate(
    (db) =>
      new Promise((resolve, reject) => {
        const open = indexedDB.open(db);
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          if (!open.result.objectStoreNames.contains('runs')) {
            open.result.close();
            resolve(null);
            return;
          }
          const get = open.result.transaction('runs').objectStore('runs').getAll();
          get.onerror = () => reject(get.error);
          get.onsuccess = () => {
            open.result.close();
            const runs = (get.result as { status: string; iterations: number; createdAt: number; checkpointAt?: number | null; config: { env: { id: string }; iterations: number } }[]).sort((a, b) => b.createdAt - a.createdAt);
            const r = runs[0];
            resolve(r ? { status: r.status, iterations: r.iterations, checkpointAt: r.checkpointAt ?? null, env: r.config.env.id, budget: r.config.iterations } : null);
          };
        };
      }),
    RUNS_DB_NAME,
  );
}

/**
 * Resolves after two animation frames of the page: by then the Train view's chart feed (which
 * hands the history to the store once per frame) has flushed the iterations reported before the
 * call, and React has drawn them (store updates render synchronously). The status bar's iteration
 * read after a pause is then the last one trained.
 */
export const afterTwoFrames = (page: Page) => page.evaluate(() => new Promise<void>((r) => requestAnimationFrame(() => requestAnimationFrame(() => r()))));
