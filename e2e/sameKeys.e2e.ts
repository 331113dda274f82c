/**
 * One run loop for every env family: a grid preset and a tool preset, trained for the same few
 * iterations in the tab and with the CLI, log the same set of metric keys. The tab's keys are
 * read from the run's record in IndexedDB (what the Runs view exports), the CLI's from its
 * metrics.jsonl. Values differ (timing, and the CLI and the tab need not share an engine); the
 * keys may not, so a metric computed in one place only fails here.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import type { Page } from 'playwright-core';
import { RUNS_DB_NAME } from '../src/runtime/storage/runStore.ts';
import { useBrowser, watchErrors } from './browser.ts';

const appUrl = inject('appUrl');
const browser = useBrowser();

/**
 * Keys that may legitimately differ between the two: none today. Timing keys (perf/*) are
 * logged by both with different values, which this test does not compare. A key listed here
 * must say why.
 */
const MAY_DIFFER: readonly string[] = [];

/** Every metric key of the tab's single recorded run (iteration and wall_s are the row's own fields), and how many rows it has saved. */
function tabKeys(page: Page): Promise<{ keys: string[]; rows: number }> {
  return page.evaluate(
    (db) =>
      new Promise<{ keys: string[]; rows: number }>((resolve, reject) => {
        const open = indexedDB.open(db);
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const get = open.result.transaction('metrics').objectStore('metrics').getAll();
          get.onerror = () => reject(get.error);
          get.onsuccess = () => {
            open.result.close();
            const keys = new Set<string>();
            for (const r of get.result as { row: Record<string, number> }[]) for (const k of Object.keys(r.row)) keys.add(k);
            resolve({ keys: [...keys], rows: get.result.length });
          };
        };
      }),
    RUNS_DB_NAME,
  );
}

function cliKeys(config: object, iterations: number): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'e2e-same-keys-'));
  const file = join(dir, 'config.json');
  writeFileSync(file, JSON.stringify(config));
  const cli = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/train.ts', '--config', file, '--iterations', String(iterations), '--out', join(dir, 'out'), '--quiet'], { encoding: 'utf8', timeout: 300_000 });
  expect(cli.status, cli.stderr).toBe(0);
  const rows = readFileSync(join(dir, 'out', 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, number>);
  expect(rows).toHaveLength(iterations);
  return [...new Set(rows.flatMap((r) => Object.keys(r)))];
}

const comparable = (keys: readonly string[]) => keys.filter((k) => k !== 'iteration' && k !== 'wall_s' && !MAY_DIFFER.includes(k)).sort();

/** A preset with the overrides both sides apply (the tab through its link, the CLI through a config file). */
const CASES = [
  { preset: 'grid-empty-8x8-grpo', iterations: 3, overrides: {} as Record<string, number> },
  // A tool env with a short imitation warm start and small groups, so both sides train in seconds.
  { preset: 'kv-lookup-grpo', iterations: 2, overrides: { 'warmStart.steps': 5, 'rollout.groups': 2, 'algo.groupSize': 4 } as Record<string, number> },
];

function withOverrides(preset: string, overrides: Record<string, number>): object {
  const c = JSON.parse(readFileSync(`presets/${preset}.json`, 'utf8')) as Record<string, unknown>;
  for (const [path, v] of Object.entries(overrides)) {
    const parts = path.split('.');
    let o = c as Record<string, unknown>;
    for (const p of parts.slice(0, -1)) o = o[p] as Record<string, unknown>;
    o[parts.at(-1)!] = v;
  }
  return c;
}

describe('the tab and the CLI log the same metric keys', () => {
  for (const k of CASES) {
    it(`${k.preset}: ${k.iterations} iterations`, { timeout: 600_000 }, async () => {
      const page = await browser().newPage({ viewport: { width: 1400, height: 1000 } });
      const errors = watchErrors(page);
      const link = Object.entries({ preset: k.preset, iterations: k.iterations, ...k.overrides })
        .map(([p, v]) => `${p}=${v}`)
        .join('&');
      await page.goto(`${appUrl}?backend=wasm#view=train&${link}`);
      await page.getByTestId('train-start').click();
      await expect.poll(() => page.getByTestId('train-status').getAttribute('data-status'), { timeout: 400_000, interval: 1000 }).toBe('finished');
      // The record's rows are written behind the charts (in batches, the last ones after the run
      // says finished): wait until every iteration's row is there, since a key may come later.
      await expect.poll(async () => (await tabKeys(page)).rows, { timeout: 30_000 }).toBe(k.iterations);
      const tab = comparable((await tabKeys(page)).keys);
      const cli = comparable(cliKeys(withOverrides(k.preset, k.overrides), k.iterations));
      // Not two empty sets: the rows carry the dashboard's keys.
      expect(tab).toEqual(expect.arrayContaining(['episode/success_rate', 'reward/mean', 'actor/entropy', 'perf/iteration_s']));
      console.log(`${k.preset}: ${tab.length} metric keys in the tab, ${cli.length} from the CLI`);
      expect({ onlyInTab: tab.filter((x) => !cli.includes(x)), onlyInCli: cli.filter((x) => !tab.includes(x)) }).toEqual({ onlyInTab: [], onlyInCli: [] });
      expect(errors).toEqual([]);
      await page.close();
    });
  }
});
