/**
 * Research-grade statistics: a real `npm run sweep` (2 learning rates × 2 seeds)
 * imported into the Runs view shows, in Compare, the same per-config IQM and mean with their
 * intervals and the same probability of improvement as the sweep's own summary.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { ARTIFACTS, useBrowser, watchErrors } from './browser.ts';

const appUrl = inject('appUrl');
const browser = useBrowser();

interface Iv {
  value: number;
  lo: number;
  hi: number;
}
const f3 = (x: number) => x.toFixed(3);
const iv = (i: Iv) => `${f3(i.value)} [${f3(i.lo)}, ${f3(i.hi)}]`;

describe('Compare statistics', () => {
  it('shows the same IQM, mean, intervals and P(X > Y) as npm run sweep for the same runs', { timeout: 600_000 }, async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'e2e-sweep-')), 'sweep');
    const sweep = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/sweep.ts', '--config', 'grid-empty-8x8-grpo', '--seeds', '1-2', '--set', 'algo.lr=1e-3,3e-3', '--iterations', '3', '--parallel', '2', '--out', out, '--json'], { encoding: 'utf8', timeout: 400_000 });
    expect(sweep.status, sweep.stderr).toBe(0);
    const report = JSON.parse(sweep.stdout.trim().split('\n').pop()!) as { configs: { name: string; runs: number; iqm: Iv; mean: Iv }[]; improvement: { x: string; y: string; p: Iv }[]; runs: { folder: string }[] };

    const page = await browser().newPage({ viewport: { width: 1400, height: 1000 } });
    const errors = watchErrors(page);
    await page.goto(`${appUrl}?backend=wasm#view=runs`);
    await page.getByTestId('runs-empty').waitFor();
    for (const [i, r] of report.runs.entries()) {
      const name = r.folder.split('/').pop()!;
      await page.getByTestId('import-input').setInputFiles(['config.json', 'metrics.jsonl'].map((f) => ({ name: `${name}/${f}`, mimeType: 'application/json', buffer: readFileSync(join(r.folder, f)) })));
      await expect.poll(() => page.getByTestId('run-row').count(), { timeout: 10_000 }).toBe(i + 1);
    }
    for (const box of await page.getByTestId('run-select').all()) await box.check();
    await page.getByTestId('compare-metric').selectOption('episode/success_rate');
    const table = page.getByTestId('stats-table');
    await table.waitFor();
    // Each tick reads that run's rows from IndexedDB (toggleSelected → loadRows) and the table
    // shows as soon as the first run's are in: wait until it covers every run, then compare.
    const shown = () =>
      page.evaluate(() =>
        [...document.querySelectorAll('[data-testid=stats-row]')]
          .map((r) => [r.getAttribute('data-label'), r.querySelectorAll('td')[1]?.textContent, r.querySelector('[data-testid=stats-iqm]')?.textContent, r.querySelector('[data-testid=stats-mean]')?.textContent])
          .sort(),
      );
    await expect.poll(shown, { timeout: 15_000 }).toEqual(report.configs.map((c) => [c.name, String(c.runs), iv(c.iqm), iv(c.mean)]).sort());
    for (const p of report.improvement) {
      expect(await page.locator(`[data-testid=poi-cell][data-x="${p.x}"][data-y="${p.y}"]`).textContent()).toBe(iv(p.p));
    }
    await page.getByTestId('profile-chart').locator('.recharts-line-curve').first().waitFor();
    await page.getByTestId('compare-stats').screenshot({ path: `${ARTIFACTS}/compare-stats.png` });
    expect(errors).toEqual([]);
    await page.close();
  });
});
