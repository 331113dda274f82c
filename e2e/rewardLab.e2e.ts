/**
 * The reward lab in the browser: reward code typed into the Train view's editor and applied to a
 * running grid run is scored in the training worker's QuickJS sandbox, shows a version marker
 * and its reward/<term>/mean curve; a looping term and one reaching for fetch are refused with a
 * message while the run keeps training (and the page's main thread never runs a task of more than
 * 50 ms CPU); after a reload the code is still in the editor. The run's file, resumed by the CLI,
 * trains with the version in force at its checkpoint, and the CLI's folder imports back with
 * both versions.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import type { Download, Page } from 'playwright-core';
import { ARTIFACTS, cpuLongTasks, describeTasks, pasteRewardCode, traceMainThread, useBrowser, watchErrors } from './browser.ts';

const appUrl = inject('appUrl');
const browser = useBrowser();
const status = (page: Page) => page.getByTestId('train-status');
const num = async (page: Page, name: string) => Number((await status(page).getAttribute(name)) ?? 'NaN');
const termChart = (page: Page) => page.getByTestId('chart-reward-user-terms');
const latestTerm = async (page: Page) => {
  const v = await termChart(page).getAttribute('data-latest');
  return v === null || v === '' ? NaN : Number(v);
};
/**
 * The latest reward/stepCost/mean per step of the latest episode/length_mean, read from both
 * charts in one go (one React commit): a step cost of c per step reads exactly c.
 */
const costPerStep = (page: Page) =>
  page.evaluate(() => {
    const get = (id: string) => Number(document.querySelector(`[data-testid=chart-${id}]`)?.getAttribute('data-latest') || NaN);
    return get('reward-user-terms') / get('length');
  });

describe('reward lab', () => {
  it('applies typed terms mid-run, refuses a loop and fetch with a message, keeps the code over a reload', { timeout: 300_000 }, async () => {
    const page = await browser().newPage({ viewport: { width: 1400, height: 1100 } });
    const errors = watchErrors(page);
    await page.goto(`${appUrl}?backend=wasm#view=train&preset=grid-empty-8x8-grpo&iterations=400`);
    // The reward code's failure policy and time limit per call are form fields; a bad limit gets a
    // message under it and keeps what was typed, a good one clears it.
    expect(await page.getByTestId('field-reward.onNonFinite').inputValue()).toBe('skip');
    await page.getByTestId('field-reward.callTimeoutMs').fill('0');
    await expect.poll(() => page.getByTestId('error-reward.callTimeoutMs').textContent()).toBe('must be at least 1 ms');
    expect(await page.getByTestId('field-reward.callTimeoutMs').inputValue()).toBe('0');
    await page.getByTestId('field-reward.callTimeoutMs').fill('100');
    await expect.poll(() => page.getByTestId('error-reward.callTimeoutMs').count()).toBe(0);
    // The lab starts closed while no code is applied: open it as a person would.
    await page.locator('[data-testid=reward-lab] > summary').click();
    await page.getByTestId('train-start').click();
    await expect.poll(() => num(page, 'data-iteration'), { timeout: 120_000, interval: 250 }).toBeGreaterThanOrEqual(2);

    // Completion of the step record's fields after `step.`.
    await pasteRewardCode(page, 'export const stepCost = (step) => -0.01;\n// ');
    await page.keyboard.type('step.');
    await expect.poll(() => page.locator('.cm-tooltip-autocomplete').textContent(), { timeout: 10_000 }).toContain('goalDistance');
    await page.keyboard.press('Escape');

    // v1, applied mid-run: a marker, and the term's curve appears (−0.01 × mean length).
    await page.getByTestId('reward-apply').click();
    await expect.poll(() => page.getByTestId('reward-status').getAttribute('data-version'), { timeout: 30_000 }).toBe('1');
    const appliedAt = await num(page, 'data-iteration');
    await expect.poll(() => latestTerm(page), { timeout: 60_000, interval: 250 }).toBeLessThan(0);
    await expect.poll(() => costPerStep(page), { timeout: 30_000, interval: 250 }).toBeCloseTo(-0.01, 9);
    await expect(page.getByTestId('reward-chart').getByTestId('chart-marker').count()).resolves.toBe(1);
    const v1 = await latestTerm(page);
    console.log(`v1 applied after iteration ${appliedAt}: reward/stepCost/mean ${v1.toFixed(3)}`);

    // A term that loops forever, and one reaching for fetch: refused at Apply with the term's
    // name, the run goes on with v1, and the main thread stays responsive.
    const stopTrace = await traceMainThread(browser(), page);
    await pasteRewardCode(page, 'export const stepCost = (step) => -0.01;\nexport const spin = (step) => {\n  while (true) {}\n};\n');
    await page.getByTestId('reward-apply').click();
    await expect.poll(() => page.getByTestId('reward-error').textContent(), { timeout: 30_000 }).toMatch(/reward term 'spin' \(line 2\) ran past its 100 ms limit per call/);
    await pasteRewardCode(page, "export const net = (step) => fetch('https://example.com').length;\n");
    await page.getByTestId('reward-apply').click();
    await expect.poll(() => page.getByTestId('reward-error').textContent(), { timeout: 30_000 }).toMatch(/reward term 'net' threw ReferenceError: '?fetch'? is not defined/);
    const before = await num(page, 'data-iteration');
    await expect.poll(() => num(page, 'data-iteration'), { timeout: 60_000, interval: 250 }).toBeGreaterThan(before);
    const tasks = await stopTrace();
    console.log(`refusals: ${describeTasks(tasks)}`);
    expect(cpuLongTasks(tasks)).toEqual([]);
    expect(await status(page).getAttribute('data-status')).toBe('running');
    expect(await page.getByTestId('reward-status').getAttribute('data-version')).toBe('1');

    // v2 moves the curve: ten times the step cost.
    await pasteRewardCode(page, 'export const stepCost = (step) => -0.1;\n');
    await page.getByTestId('reward-apply').click();
    await expect.poll(() => page.getByTestId('reward-status').getAttribute('data-version'), { timeout: 30_000 }).toBe('2');
    await expect(page.getByTestId('reward-error').count()).resolves.toBe(0);
    // The curve moves to −0.1 per step (episode lengths change as the policy learns, so the
    // cost per step is what identifies the version that scored the iteration).
    await expect.poll(() => costPerStep(page), { timeout: 60_000, interval: 250 }).toBeCloseTo(-0.1, 9);
    // Two versions, two markers: on the term chart, the stacked chart and every dashboard chart.
    await expect.poll(() => page.getByTestId('reward-chart').getByTestId('chart-marker').allTextContents()).toEqual(['v1', 'v2']);
    await expect.poll(() => page.getByTestId('chart-reward-stacked').getByTestId('chart-marker').count()).toBe(2);
    console.log(`v2: reward/stepCost/mean ${(await latestTerm(page)).toFixed(3)}`);
    await page.getByTestId('train-pause').click();
    // The stacked chart draws a band per contributing term: the task's own reward and stepCost (below 0).
    await expect.poll(() => page.getByTestId('chart-reward-stacked').getAttribute('data-terms')).toMatch(/stepCost/);
    expect(await page.locator('[data-testid=chart-reward-stacked] path[data-term=stepCost]').getAttribute('d')).toMatch(/^M/);
    // The diff of v2 against v1 shows the changed line, both sides.
    await page.getByTestId('reward-version-2').click();
    await expect.poll(() => page.getByTestId('reward-diff').locator('.cm-changedLine').allTextContents()).toContain('export const stepCost = (step) => -0.1;');
    await expect.poll(() => page.getByTestId('reward-diff').locator('.cm-deletedChunk').textContent()).toContain('-0.01;');
    await page.getByTestId('reward-lab').screenshot({ path: `${ARTIFACTS}/reward-lab.png` });
    await page.getByTestId('reward-diff').screenshot({ path: `${ARTIFACTS}/reward-lab-diff.png` });
    await page.getByTestId('chart-reward-stacked').screenshot({ path: `${ARTIFACTS}/reward-lab-stacked.png` });
    await page.getByTestId('chart-success').scrollIntoViewIfNeeded();
    await expect.poll(() => page.getByTestId('chart-success').getByTestId('chart-marker').allTextContents()).toEqual(['v1', 'v2']);
    await page.getByTestId('section-outcome').screenshot({ path: `${ARTIFACTS}/reward-lab-markers.png` });

    // After a reload the code is still there.
    page.on('dialog', (d) => void d.accept());
    await page.reload();
    await expect.poll(() => page.locator('[data-testid=reward-editor] .cm-content').textContent(), { timeout: 30_000 }).toContain('export const stepCost = (step) => -0.1;');
    // The saved run lists each version with its code's hash, and its charts mark where each took over.
    await page.goto(`${appUrl}?backend=wasm#view=runs`);
    // The list: no code at the start (the hash column shows a dash), two versions applied mid-run.
    await expect.poll(() => page.getByTestId('run-row').first().textContent(), { timeout: 30_000 }).toContain('+2 applied');
    await page.getByTestId('runs-table').screenshot({ path: `${ARTIFACTS}/reward-lab-runs-list.png` });
    await page.getByTestId('run-row').first().getByTestId('run-open').click();
    await expect.poll(() => page.getByTestId('run-reward-code').textContent(), { timeout: 30_000 }).toMatch(/v1 [0-9a-f]{12} from iteration \d+, v2 [0-9a-f]{12} from iteration \d+/);
    await expect.poll(() => page.getByTestId('detail-chart-reward/mean').getAttribute('data-markers')).toBe('v1,v2');
    await page.getByTestId('run-detail').screenshot({ path: `${ARTIFACTS}/reward-lab-run-detail.png` });

    // Provenance round trip: the run file carries both versions; the CLI resumes it
    // with the version in force at the checkpoint; its folder imports back with the same versions.
    const [dl] = (await Promise.all([page.waitForEvent('download'), page.getByTestId('export-run').click()])) as [Download, void];
    const file = JSON.parse(readFileSync(await dl.path(), 'utf8')) as { checkpoint: { iteration: number } | null; rewardCode: { version: number; iteration: number; code: string }[]; metrics: Record<string, number>[] };
    expect(file.rewardCode.map((v) => v.version)).toEqual([1, 2]);
    expect(file.checkpoint, 'the paused run has a checkpoint to resume from').not.toBeNull();
    const at = file.checkpoint!.iteration;
    const dir = mkdtempSync(join(tmpdir(), 'e2e-provenance-'));
    writeFileSync(join(dir, 'run.json'), JSON.stringify(file));
    const cli = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/train.ts', '--resume', join(dir, 'run.json'), '--iterations', String(at + 3), '--out', join(dir, 'cli'), '--quiet'], { encoding: 'utf8', timeout: 300_000 });
    expect(cli.status, cli.stderr).toBe(0);
    const cliRows = readFileSync(join(dir, 'cli', 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, number>);
    const versionAt = (it: number) => file.rewardCode.filter((v) => v.iteration <= it).at(-1)!.version;
    for (const r of cliRows.slice(at)) {
      // Trained by the CLI with the code in force at the checkpoint, scored as the browser scored it.
      expect(r['reward/version']).toBe(versionAt(r.iteration));
      expect(r['reward/stepCost/mean'] / r['episode/length_mean']).toBeCloseTo(versionAt(r.iteration) === 2 ? -0.1 : -0.01, 9);
    }
    // The rows before the checkpoint are the browser's, versions included.
    expect(cliRows.slice(0, at).map((r) => r['reward/version'])).toEqual(file.metrics.slice(0, at).map((r) => r['reward/version']));
    await page.getByTestId('run-back').click();
    await page.getByTestId('import-input').setInputFiles(['config.json', 'metrics.jsonl', 'reward-versions.json'].map((f) => ({ name: `cli/${f}`, mimeType: 'application/json', buffer: readFileSync(join(dir, 'cli', f)) })));
    await expect.poll(() => page.getByTestId('run-row').count(), { timeout: 10_000 }).toBe(2);
    await page.locator('[data-testid=run-row][data-name=cli]').getByTestId('run-open').click();
    await expect.poll(() => page.getByTestId('run-reward-code').textContent(), { timeout: 30_000 }).toMatch(/v1 [0-9a-f]{12} from iteration \d+, v2 [0-9a-f]{12} from iteration \d+/);
    expect(errors).toEqual([]);
    await page.close({ runBeforeUnload: false });
  });

  it("a link whose preset carries reward code asks before replacing the person's own, and their code survives either answer", { timeout: 120_000 }, async () => {
    const context = await browser().newContext({ viewport: { width: 1400, height: 1100 } });
    const first = await context.newPage();
    const MINE = 'export const mine = (step) => -0.02;';
    await first.goto(`${appUrl}?backend=wasm#view=train&preset=grid-empty-8x8-grpo`);
    await first.locator('[data-testid=reward-lab] > summary').click();
    await pasteRewardCode(first, MINE);
    await first.getByTestId('reward-apply').click();
    await expect.poll(() => first.evaluate(() => localStorage.getItem('rl-playground.reward.mine'))).toBe(MINE);
    await first.close();
    // The hackable preset's link (it carries its own term, 'closer'), opened in another tab of the
    // same browser, as a student opens a link they were sent.
    const page = await context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${appUrl}?backend=wasm#view=train&preset=grid-empty-8x8-hackable`);
    const editor = () => page.locator('[data-testid=reward-editor] .cm-content').textContent();
    const openLab = async () => {
      if ((await page.locator('[data-testid=reward-lab][open]').count()) === 0) await page.locator('[data-testid=reward-lab] > summary').click();
    };
    const prompt = page.getByTestId('reward-replace-prompt');
    await prompt.waitFor();
    await page.screenshot({ path: `${ARTIFACTS}/reward-replace-prompt.png` });
    await page.getByTestId('reward-keep-mine').click();
    await expect.poll(() => prompt.count()).toBe(0);
    await openLab();
    await expect.poll(editor).toContain('export const mine');
    // Again, and this time the link's code: it is applied, and one click brings the person's back.
    await page.reload();
    await prompt.waitFor();
    await page.getByTestId('reward-use-link').click();
    await openLab();
    await expect.poll(editor).toContain('closer');
    await page.getByTestId('reward-restore-mine').click();
    await expect.poll(editor).toContain('export const mine');
    expect(errors).toEqual([]);
    await context.close();
  });
});
