// Manual check that the browser worker pool (module Web Workers + comlink + ORT web WASM)
// works in a real Chromium and plays the same episodes as Node's serial pool:
//
//   node src/runtime/pool/browserCheck.mjs      (needs Debian's /usr/bin/chromium)
//
// It serves a throwaway page with Vite's dev server, creates a 2-worker pool, collects four
// episodes, checks an unknown env id rejects with the registry's message, closes the pool and
// prints the first actions of each episode (compare with the serial pool for the same request).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer } from 'vite';
import { chromium } from 'playwright-core';

const repo = resolve(fileURLToPath(new URL('../../..', import.meta.url)));
const dir = mkdtempSync(join(tmpdir(), 'pool-check-'));
const src = (p) => `/@fs${join(repo, p)}`;
writeFileSync(
  join(dir, 'index.html'),
  `<!doctype html><script type="module">
import { createBrowserWorkerPool } from '${src('src/runtime/pool/browser.ts')}';
import { gridMlpSpec, buildPoolModel } from '${src('src/core/rollout/stepPool.ts')}';
import { initWeights } from '${src('src/core/models/types.ts')}';
try {
  const spec = gridMlpSpec({ id: 'grid/empty-5x5' }, { hidden: [32, 32] });
  const pool = await createBrowserWorkerPool({ size: 2, model: spec, weights: initWeights(buildPoolModel(spec), 7) });
  const req = { env: { id: 'grid/empty-5x5' }, seeds: [1, 2, 3, 4], groups: [-1, -1, -1, -1], samplingSeed: 11 };
  const r = await pool.collect(req);
  let bad = 'did not reject';
  try { await pool.collect({ ...req, env: { id: 'grid/nope' } }); } catch (e) { bad = String(e.message).slice(0, 40); }
  await pool.close();
  window.result = { ok: true, envSteps: r.envSteps, actions: r.episodes.map((e) => Array.from(e.actions).slice(0, 8).join('')), typed: r.episodes[0].features instanceof Float32Array, bad };
} catch (e) { window.result = { ok: false, error: String((e && e.stack) || e) }; }
</script>`,
);
const server = await createServer({ root: dir, configFile: false, logLevel: 'warn', server: { port: 0, fs: { allow: [repo, dir] } } });
await server.listen();
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'] });
try {
  const page = await browser.newPage();
  page.on('pageerror', (e) => console.error('pageerror:', e.message));
  await page.goto(server.resolvedUrls.local[0]);
  await page.waitForFunction(() => window.result !== undefined, null, { timeout: 120_000 });
  const result = await page.evaluate(() => window.result);
  console.log(JSON.stringify(result));
  process.exitCode = result.ok ? 0 : 1;
} finally {
  await browser.close();
  await server.close();
}
