/**
 * Runs that last, in Chromium on WASM: every run trained in the tab is saved to IndexedDB; a
 * reload mid-run (held in progress by its length, never by a timed wait) leaves it listed as interrupted; Resume continues it from its checkpoint into
 * the same record and it finishes; two seeds of one config compare as mean ± band; the metrics
 * CSV and the run file (with its checkpoint) download with the right rows and fields; the run
 * file imports into a fresh browser profile, a bad file there changes nothing, and the CLI
 * resumes from the run file.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import type { Download, Page } from 'playwright-core';
import * as ort from 'onnxruntime-web';
import { safeFileName as safeName } from '../src/core/runs/format.ts';
import { RUNS_DB_NAME } from '../src/runtime/storage/runStore.ts';
import { ARTIFACTS, installLongTaskObserver, newestSavedRun, useBrowser, watchErrors } from './browser.ts';

const appUrl = inject('appUrl');
const browser = useBrowser();
const PRESET = 'grid-empty-8x8-grpo';
/**
 * The interrupted run's length. The reload must land mid-run however fast the tab trains, so the
 * run is long enough that it cannot finish between its first checkpoint (iteration 10) being
 * saved and the reload: the wait before the reload is for the save itself (polled every 250 ms),
 * not for a time, so the reload follows it within a second or two, a few iterations, where 39
 * are left (~14 s at the ~2.7 iterations/s of a quiet 2-core machine; the test fails, never
 * passes, if the run got there first). Short enough that the resumed run finishes in ~15 s there
 * (100 cost CI ~18 s more and proved nothing more: the resume, the checkpoints every 10
 * iterations and the CLI's continuation read the same at any length past the reload).
 */
const RESUMED_ITERATIONS = 50;

const status = (page: Page) => page.getByTestId('train-status');
const attr = async (page: Page, name: string) => (await status(page).getAttribute(name)) ?? '';
const num = async (page: Page, name: string) => Number(await attr(page, name));

/** Clicks `button` and returns the downloaded file's name and text. */
async function downloadOf(page: Page, testId: string): Promise<{ name: string; text: string; bytes: Buffer }> {
  const [dl] = (await Promise.all([page.waitForEvent('download'), page.getByTestId(testId).click()])) as [Download, void];
  const bytes = readFileSync(await dl.path());
  return { name: dl.suggestedFilename(), text: bytes.toString('utf8'), bytes };
}

/**
 * What IndexedDB holds for the running run of `seed`: its status, metric rows saved and the
 * iteration of its saved checkpoint (null before one), read straight from the database.
 */
function savedProgress(page: Page, seed: number): Promise<{ status: string; iterations: number; checkpointAt: number | null } | null> {
  return page.evaluate(
    ({ db, seed }) =>
      new Promise((resolve, reject) => {
        const open = indexedDB.open(db);
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const get = open.result.transaction('runs').objectStore('runs').getAll();
          get.onerror = () => reject(get.error);
          get.onsuccess = () => {
            open.result.close();
            const run = (get.result as { status: string; iterations: number; checkpointAt?: number | null; config: { seed: number } }[]).find((r) => r.config.seed === seed && r.status === 'running');
            resolve(run ? { status: run.status, iterations: run.iterations, checkpointAt: run.checkpointAt ?? null } : null);
          };
        };
      }),
    { db: RUNS_DB_NAME, seed },
  );
}

const rows = (page: Page) => page.getByTestId('run-row');
/** The run of `seed` (a run a heartbeat timeout stopped is listed too, with status error: skip it). */
const rowOf = (page: Page, seed: number) => page.locator(`[data-testid="run-row"][data-seed="${seed}"]:not([data-status="error"])`);

describe('runs that last', () => {
  it('saved as they train, interrupted by a reload, compared across seeds, exported and imported into a fresh profile', { timeout: 900_000 }, async () => {
    const page = await browser().newPage({ viewport: { width: 1400, height: 1000 }, acceptDownloads: true });
    await page.addInitScript(installLongTaskObserver);
    const errors = watchErrors(page);
    await page.goto(`${appUrl}?backend=wasm#view=train&preset=${PRESET}`);
    await page.getByTestId('train-status').waitFor();
    await expect.poll(() => page.getByTestId('backend-status').getAttribute('data-backend')).toBe('wasm');

    // Two finished runs of one config on seeds 1 and 2, from "Run 2 seeds" (a sweep of no field);
    // "Compare these runs" ticks them in Runs.
    await page.getByTestId('field-seed').fill('1');
    await page.getByTestId('field-iterations').fill('3');
    await page.getByTestId('seeds-count').fill('2');
    await page.getByTestId('train-seeds').click();
    await expect.poll(() => page.getByTestId('sweep-progress').getAttribute('data-status'), { timeout: 240_000, interval: 500 }).toBe('done');
    expect(await page.locator('[data-testid="sweep-run"][data-state="done"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-name')))).toEqual([`${PRESET} · seed 1`, `${PRESET} · seed 2`]);
    await page.getByTestId('sweep-compare').click();
    await page.getByTestId('view-train').click();
    await page.getByTestId('tab-dashboard').click();

    // A third run, reloaded mid-run (the page asks first; the person leaves) after its first
    // checkpoint (every 10 iterations) was saved.
    await page.getByTestId('field-seed').fill('3');
    await page.getByTestId('field-iterations').fill(String(RESUMED_ITERATIONS));
    await page.getByTestId('train-start').click();
    // Saved in batches (5 iterations or 1 s): wait until IndexedDB holds the first checkpoint and
    // a metric row past it, whatever the clock says.
    const pastFirstCheckpoint = async () => {
      const p = await savedProgress(page, 3);
      return (p?.checkpointAt ?? 0) >= 10 && (p?.iterations ?? 0) >= 11;
    };
    await expect.poll(pastFirstCheckpoint, { timeout: 400_000, interval: 250 }).toBe(true);
    const trainedBeforeReload = await num(page, 'data-iteration');
    expect(trainedBeforeReload, 'the run must still be in progress at the reload').toBeLessThan(RESUMED_ITERATIONS);
    page.on('dialog', (d) => void d.accept());
    await page.reload();
    await page.getByTestId('view-runs').click();
    await expect.poll(() => page.locator('[data-testid="run-row"]:not([data-status="error"])').count(), { timeout: 20_000 }).toBe(3);
    await expect.poll(() => rowOf(page, 3).getAttribute('data-status')).toBe('interrupted');
    const k = Number(await rowOf(page, 3).getAttribute('data-iterations'));
    expect(k).toBeGreaterThanOrEqual(11);
    expect(k).toBeLessThan(RESUMED_ITERATIONS);
    expect(k).toBeLessThanOrEqual(trainedBeforeReload + 1);
    expect(await rowOf(page, 3).getByTestId('run-status').textContent()).toBe(`interrupted at iteration ${k}`);
    // A checkpoint every 10 iterations: the latest one saved before the reload, never past the metrics.
    const resumeFrom = Number(await rowOf(page, 3).getAttribute('data-checkpoint'));
    expect(resumeFrom % 10).toBe(0);
    expect(resumeFrom).toBeGreaterThanOrEqual(10);
    expect(resumeFrom).toBeLessThanOrEqual(k);
    expect(await rowOf(page, 3).getByTestId('run-resume').textContent()).toBe(`Resume from ${resumeFrom}`);
    for (const seed of [1, 2]) {
      expect(await rowOf(page, seed).getAttribute('data-status')).toBe('finished');
      expect(await rowOf(page, seed).getAttribute('data-iterations')).toBe('3');
    }
    expect(Number(await page.getByTestId('storage-used').getAttribute('data-usage'))).toBeGreaterThan(0);
    expect(new URL(page.url()).hash).toBe('#view=runs');
    await page.screenshot({ path: `${ARTIFACTS}/runs-list.png` });

    // Compare seeds 1 and 2 (selected by the sweep's "Compare these runs", tagged alike): one group, drawn
    // as mean ± band; the configs differ only in the seed.
    for (const seed of [1, 2]) {
      expect(await rowOf(page, seed).getByTestId('run-select').isChecked()).toBe(true);
      expect(await rowOf(page, seed).textContent()).toMatch(new RegExp(`sweep [-\\d: ]+ · ${PRESET}`));
    }
    const chart = page.getByTestId('compare-chart');
    await expect.poll(() => chart.getAttribute('data-bands')).toBe('1');
    expect(await chart.getAttribute('data-lines')).toBe('1');
    const bandPath = chart.locator('.compare-band path.recharts-area-area');
    await expect.poll(async () => ((await bandPath.first().getAttribute('d').catch(() => null)) ?? '').length, { timeout: 10_000 }).toBeGreaterThan(20);
    expect(await page.getByTestId('diff-row').evaluateAll((els) => els.map((e) => e.getAttribute('data-path')))).toEqual(['seed']);
    await page.getByTestId('compare-metric').selectOption('reward/mean');
    await page.getByTestId('compare-smoothing').fill('0.6');
    await page.getByTestId('compare-x-envSteps').check();
    await expect.poll(async () => ((await bandPath.first().getAttribute('d').catch(() => null)) ?? '').length).toBeGreaterThan(20);
    // Ungrouped: one line per run, no band.
    await page.getByTestId('compare-group-seeds').uncheck();
    await expect.poll(() => chart.getAttribute('data-bands')).toBe('0');
    expect(await chart.getAttribute('data-lines')).toBe('2');
    await page.getByTestId('compare-group-seeds').check();
    await page.getByTestId('compare-metric').selectOption('episode/success_rate');
    await page.getByTestId('compare-x-iteration').check();
    await rowOf(page, 3).getByTestId('run-select').check();
    await expect.poll(() => chart.getAttribute('data-bands')).toBe('1');
    await page.screenshot({ path: `${ARTIFACTS}/runs-compare.png`, fullPage: true });

    // Delete with undo.
    const listed = await rows(page).count();
    await rowOf(page, 3).getByTestId('run-delete').click();
    await expect.poll(() => rows(page).count()).toBe(listed - 1);
    await page.getByTestId('undo-delete').click();
    await expect.poll(() => rows(page).count()).toBe(listed);

    // Open seed 1 read-only; rename, tag and note it; export CSV and the run file.
    await rowOf(page, 1).getByTestId('run-open').click();
    await page.getByTestId('run-detail').waitFor();
    await page.getByTestId('run-name').fill('baseline seed 1');
    await page.getByTestId('run-name').press('Enter');
    await page.getByTestId('run-tags').fill('baseline, e2e');
    await page.getByTestId('run-tags').press('Enter');
    await page.getByTestId('run-note').fill('three iterations on WASM');
    await page.getByTestId('run-tags').click(); // blur saves the note
    await expect.poll(() => page.locator('.run-detail-head h2').textContent()).toBe('baseline seed 1');
    await page.getByTestId('detail-chart-episode/success_rate').locator('.recharts-line-curve').first().waitFor();
    await page.screenshot({ path: `${ARTIFACTS}/runs-detail.png`, fullPage: true });

    const csv = await downloadOf(page, 'export-csv');
    expect(csv.name).toBe('baseline_seed_1.metrics.csv');
    const lines = csv.text.trim().split('\n');
    const header = lines[0].split(',');
    expect(header.slice(0, 2)).toEqual(['iteration', 'wall_s']);
    expect(header).toContain('episode/success_rate');
    expect(header).toContain('reward/mean');
    expect(lines).toHaveLength(4);
    expect(lines.slice(1).map((l) => l.split(',')[0])).toEqual(['0', '1', '2']);
    const sr = header.indexOf('episode/success_rate');
    for (const l of lines.slice(1)) expect(Number(l.split(',')[sr])).toBeGreaterThanOrEqual(0);

    // The run as a TRL experiment, by keyboard: one .tar of npm run export's folder (a grid run: veRL is refused with the reason).
    await page.getByTestId('export-experiment-trl').focus();
    const [tarDl] = (await Promise.all([page.waitForEvent('download'), page.keyboard.press('Enter')])) as [Download, void];
    expect(tarDl.suggestedFilename()).toBe('baseline_seed_1-trl.tar');
    const tarText = readFileSync((await tarDl.path())!, 'latin1');
    for (const f of ['README.txt', 'grpo_config.json', 'train_trl.py', 'reward_terms.py', 'launch.sh']) expect(tarText).toContain(`baseline_seed_1-trl/${f}`);
    expect(tarText).toContain('Did not translate:');
    await page.getByTestId('export-experiment-verl').click();
    await page.getByText(/Not exported: grid\/empty-8x8 is a grid env/).first().waitFor();

    const runFile = await downloadOf(page, 'export-run');
    expect(runFile.name).toBe('baseline_seed_1.run.json');
    const f = JSON.parse(runFile.text);
    expect(f.format).toBe('agentic-rl-playground/run');
    expect(f.version).toBe(1);
    expect(f.run).toMatchObject({ name: 'baseline seed 1', tags: ['baseline', 'e2e'], note: 'three iterations on WASM', status: 'finished' });
    expect(f.config).toMatchObject({ id: PRESET, seed: 1, iterations: 3, env: { id: 'grid/empty-8x8' } });
    expect(f.metrics.map((m: { iteration: number }) => m.iteration)).toEqual([0, 1, 2]);
    expect(f.metrics[0]).toHaveProperty('episode/success_rate');
    expect(f.trajectories.length).toBe(12); // 4 per iteration
    expect(f.trajectories[0]).toMatchObject({ iteration: 0, env: 'grid/empty-8x8' });
    // Finished runs keep their last checkpoint (what "Train N more" and the CLI continue from).
    expect(f.checkpoint).toMatchObject({ format: 'agentic-rl-playground/checkpoint', trainer: 'step', iteration: 3, policyVersion: 3 });
    expect(f.checkpoint.learner.tensors['adam.m'].length).toBeGreaterThan(1000);
    // The checkpoint is a fixed size per model (weights + Adam moments as base64): counted apart.
    const checkpointBytes = JSON.stringify(f.checkpoint).length;
    const bytesPerIteration = (runFile.text.length - checkpointBytes) / f.metrics.length;
    writeFileSync(`${ARTIFACTS}/runs-size.json`, JSON.stringify({ runFileBytes: runFile.text.length, checkpointBytes, iterations: f.metrics.length, bytesPerIteration, trajectories: f.trajectories.length }, null, 2));

    // Resume the interrupted run: it continues from iteration 10 in the Train view, into the same
    // record (no new row), and finishes.
    await page.getByTestId('run-back').click();
    const listedBefore = await rows(page).count();
    await rowOf(page, 3).getByTestId('run-resume').click();
    await expect.poll(() => attr(page, 'data-status'), { timeout: 20_000, interval: 250 }).toMatch(/starting|running|finished/);
    await expect.poll(() => attr(page, 'data-status'), { timeout: 400_000, interval: 500 }).toMatch(/finished|error/);
    expect(await attr(page, 'data-status'), (await page.getByTestId('train-error').textContent().catch(() => '')) ?? '').toBe('finished');
    // 'finished' is set as the run's end is saved; the last iteration reaches the status bar
    // through the chart feed's per-frame flush, which can come a frame after: poll for it.
    await expect.poll(() => num(page, 'data-iteration'), { timeout: 10_000 }).toBe(RESUMED_ITERATIONS);
    // The record's last rows and final status are written behind 'finished', and Runs reads the
    // store once as it opens (it re-reads only while a run trains): open it once they are saved.
    await expect.poll(async () => (await newestSavedRun(page))?.status, { timeout: 30_000 }).toBe('finished');
    await page.getByTestId('view-runs').click();
    await expect.poll(() => rowOf(page, 3).getAttribute('data-status'), { timeout: 20_000 }).toBe('finished');
    expect(await rows(page).count()).toBe(listedBefore);
    expect(await rowOf(page, 3).getAttribute('data-iterations')).toBe(String(RESUMED_ITERATIONS));
    expect(await rowOf(page, 3).getAttribute('data-checkpoint')).toBe(String(RESUMED_ITERATIONS));
    await rowOf(page, 3).getByTestId('run-open').click();
    await page.getByTestId('run-detail').waitFor();
    const resumedFile = await downloadOf(page, 'export-run');
    const r3 = JSON.parse(resumedFile.text);
    expect(r3.run.status).toBe('finished');
    expect(r3.metrics.map((m: { iteration: number }) => m.iteration)).toEqual(Array.from({ length: RESUMED_ITERATIONS }, (_, i) => i));
    // wall_s carries on across the resume.
    for (let i = 1; i < r3.metrics.length; i++) expect(r3.metrics[i].wall_s).toBeGreaterThanOrEqual(r3.metrics[i - 1].wall_s);
    expect(r3.checkpoint).toMatchObject({ iteration: RESUMED_ITERATIONS, policyVersion: RESUMED_ITERATIONS });
    // The policy at that checkpoint, as an ONNX file any runtime loads: one 7×7 view in, log π over 7 actions out.
    const onnx = await downloadOf(page, 'export-onnx');
    expect(onnx.name).toBe(`${safeName(r3.run.name)}.policy.onnx`);
    const session = await ort.InferenceSession.create(new Uint8Array(onnx.bytes));
    const out = await session.run({ obs: new ort.Tensor('float32', new Float32Array(984), [1, 984]) });
    const logp = Array.from(out.logprobs.data as Float32Array);
    expect(logp).toHaveLength(7);
    expect(Math.log(logp.reduce((a, l) => a + Math.exp(l), 0))).toBeCloseTo(0, 4);
    await session.release();
    // Its policy.json says how to build that input and names the actions.
    const card = JSON.parse((await downloadOf(page, 'export-policy-json')).text);
    expect(card).toMatchObject({ format: 'agentic-rl-playground/policy', iteration: RESUMED_ITERATIONS, env: { id: 'grid/empty-8x8' }, onnx: { inputs: [{ name: 'obs', dtype: 'float32', shape: [1, 984] }] }, observation: { kind: 'grid-one-hot', floats: 984 } });
    expect(card.actions.names).toEqual(['left', 'right', 'forward', 'pickup', 'drop', 'toggle', 'done']);
    await page.screenshot({ path: `${ARTIFACTS}/runs-resumed.png`, fullPage: true });

    const longTasks = await page.evaluate(() => window.__longTasks.length);
    writeFileSync(`${ARTIFACTS}/runs-long-tasks.json`, JSON.stringify({ longTasks }, null, 2));
    expect(errors).toEqual([]);
    await page.close({ runBeforeUnload: false });

    // A fresh profile: a bad file is refused with the field named and changes nothing; the run file imports.
    const fresh = await browser().newPage({ viewport: { width: 1400, height: 1000 } });
    const freshErrors = watchErrors(fresh);
    await fresh.goto(`${appUrl}?backend=wasm#view=runs`);
    await fresh.getByTestId('runs-empty').waitFor();
    const bad = structuredClone(f);
    bad.metrics[1].iteration = 'one';
    bad.config.algo.lr = -1;
    await fresh.getByTestId('import-input').setInputFiles({ name: 'bad.run.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(bad)) });
    const problems = fresh.getByTestId('import-problems');
    await problems.waitFor();
    expect(await problems.textContent()).toContain('bad.run.json: metrics[1].iteration');
    expect(await problems.textContent()).toContain('bad.run.json: config.algo.lr');
    expect(await fresh.getByTestId('runs-empty').count()).toBe(1);
    await fresh.getByTestId('import-input').setInputFiles({ name: 'baseline_seed_1.run.json', mimeType: 'application/json', buffer: Buffer.from(runFile.text) });
    await expect.poll(() => rows(fresh).count(), { timeout: 10_000 }).toBe(1);
    expect(await problems.count()).toBe(0);
    const imported = rows(fresh).first();
    expect(await imported.getAttribute('data-name')).toBe('baseline seed 1');
    expect(await imported.getAttribute('data-status')).toBe('finished');
    expect(await imported.getAttribute('data-iterations')).toBe('3');
    await imported.getByTestId('run-open').click();
    await fresh.getByTestId('detail-chart-episode/success_rate').locator('.recharts-line-curve').first().waitFor();
    expect(await fresh.getByTestId('run-tags').inputValue()).toBe('baseline, e2e');
    const again = await downloadOf(fresh, 'export-run');
    const g = JSON.parse(again.text);
    expect(g.metrics).toEqual(f.metrics);
    expect(g.trajectories).toEqual(f.trajectories);
    expect(g.config).toEqual(f.config);
    expect(g.checkpoint).toEqual(f.checkpoint);
    // The resumed run's file imports with its checkpoint too.
    await fresh.getByTestId('run-back').click();
    await fresh.getByTestId('import-input').setInputFiles({ name: 'resumed.run.json', mimeType: 'application/json', buffer: Buffer.from(resumedFile.text) });
    await expect.poll(() => rows(fresh).count(), { timeout: 10_000 }).toBe(2);
    expect(await rowOf(fresh, 3).getAttribute('data-checkpoint')).toBe(String(RESUMED_ITERATIONS));
    expect(freshErrors).toEqual([]);
    await fresh.close();

    // The CLI resumes from the run file the browser exported: two more iterations, appended.
    const dir = mkdtempSync(join(tmpdir(), 'e2e-resume-'));
    const file = join(dir, 'resumed.run.json');
    writeFileSync(file, resumedFile.text);
    const cli = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/train.ts', '--resume', file, '--iterations', String(RESUMED_ITERATIONS + 2), '--out', join(dir, 'cli'), '--quiet'], { encoding: 'utf8', timeout: 300_000 });
    expect(cli.status, cli.stderr).toBe(0);
    expect(cli.stdout).toContain(`from its checkpoint at iteration ${RESUMED_ITERATIONS}`);
    const cliRows = readFileSync(join(dir, 'cli', 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(cliRows.map((m) => m.iteration)).toEqual(Array.from({ length: RESUMED_ITERATIONS + 2 }, (_, i) => i));
    expect(cliRows.slice(0, RESUMED_ITERATIONS).map((m) => m['reward/mean'])).toEqual(r3.metrics.map((m: Record<string, number>) => m['reward/mean']));
  });
});
