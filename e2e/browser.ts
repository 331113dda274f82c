/** Launching Debian's Chromium through playwright-core, with the flags that expose a software WebGPU adapter here. */
import { existsSync } from 'node:fs';
import { chromium, type Browser, type ConsoleMessage, type Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';

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

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
  '--enable-unsafe-webgpu',
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
