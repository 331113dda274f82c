/**
 * Builds the app once, serves dist/ under a sub-path with COOP/COEP, and hands the URL to the
 * tests. Fails loudly when no Chromium exists: the browser tests never pass by being skipped.
 */
import { execSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import type { TestProject } from 'vitest/node';
import { findChromium, NO_CHROMIUM_MESSAGE } from './browser.ts';
import { serveStatic, type StaticServer } from './serve.ts';

let server: StaticServer | undefined;

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  if (!findChromium()) throw new Error(NO_CHROMIUM_MESSAGE);
  // A production bundle, as a host serves it (vitest sets NODE_ENV=test, which would build
  // React's slower development mode and skew the long-task measurements).
  // Brotli quality 5 for the test build: a fresh clone has no compression cache, and quality 11
  // spends minutes on onnxruntime's WASM files (2.8 MB instead of 2.4 MB over the wire).
  if (!process.env.E2E_SKIP_BUILD) execSync('npx vite build --logLevel warn', { stdio: 'inherit', env: { PRECOMPRESS_BROTLI_QUALITY: '5', ...process.env, NODE_ENV: 'production' } });
  mkdirSync('e2e/artifacts', { recursive: true });
  server = await serveStatic('dist', '/playground/');
  project.provide('appUrl', server.url);
  return async () => {
    await server?.close();
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    appUrl: string;
  }
}
