/**
 * Lessons and classroom links in a real Chromium on WASM: lesson (c) walked end to end (each
 * step set up from the Lessons view, trained, and ticked off by its own check from the live
 * metrics), progress surviving a reload, and classroom links that hide and lock controls.
 * Screenshots land in e2e/artifacts/lesson-*.png.
 */
import { describe, expect, inject, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ARTIFACTS, axeProblems, useBrowser, watchErrors } from './browser.ts';

const appUrl = inject('appUrl');
const browser = useBrowser();
const status = (page: Page) => page.getByTestId('train-status');
const attr = async (page: Page, testId: string, name: string) => (await page.getByTestId(testId).getAttribute(name)) ?? '';

/**
 * Presses Start and waits for the first iteration. On a 2-core machine under heavy load the
 * training worker's start (WASM compile, session builds) has taken 15–26 s, and once over the
 * page's 30 s heartbeat the run stops with "stopped answering"; that is retried once, and said.
 */
async function start(page: Page): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    await page.getByTestId('train-start').click();
    await expect.poll(async () => ((await status(page).getAttribute('data-status')) === 'error' ? 'error' : Number(await status(page).getAttribute('data-iteration')) > 0 ? 'ok' : 'wait'), { timeout: 120_000, interval: 500 }).not.toBe('wait');
    if ((await status(page).getAttribute('data-status')) !== 'error') return;
    const why = await page.getByTestId('train-error').innerText();
    console.log(`start attempt ${attempt} stopped: ${why}`);
    if (attempt >= 2 || !/stopped answering/.test(why)) throw new Error(`the run did not start: ${why}`);
  }
}

async function close(page: Page): Promise<void> {
  page.on('dialog', (d) => void d.accept());
  await page.close({ runBeforeUnload: false });
}

describe('lessons', () => {
  it('lesson (c): each step is set up without training, its check completes by itself, and progress survives a reload', { timeout: 600_000 }, async () => {
    const context = await browser().newContext({ viewport: { width: 1400, height: 1000 } });
    const page = await context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${appUrl}?backend=wasm#view=lessons`);
    await page.getByTestId('lesson-item-signal-degeneration').click();
    await expect.poll(() => attr(page, 'lesson', 'data-lesson')).toBe('signal-degeneration');
    expect(await attr(page, 'lesson-check', 'data-state')).toBe('not set up');
    await page.screenshot({ path: `${ARTIFACTS}/lesson-c-step1-lessons-view.png` });

    // Setting the step up fills the Train view's form and opens it, but trains nothing.
    await page.getByTestId('lesson-setup').click();
    await expect.poll(() => attr(page, 'lesson-banner-status', 'data-state')).toBe('waiting');
    expect(await page.getByTestId('field-algo.groupSize').inputValue()).toBe('4');
    expect(page.url()).toContain('env.kwargs.maxSteps=60');
    await page.waitForTimeout(1500);
    expect(await status(page).getAttribute('data-status')).toBe('idle');
    expect(await status(page).getAttribute('data-iteration')).toBe('0');

    await start(page);
    await expect.poll(() => attr(page, 'lesson-banner-status', 'data-state'), { timeout: 180_000, interval: 250 }).toBe('done');
    const doneAt = Number(await status(page).getAttribute('data-iteration'));
    // Paused at once, while the step's 30 iterations are far from over (the check ticks by 15), so
    // the rest reads a run held in progress, not one racing the clock.
    await page.getByTestId('train-pause').click();
    await expect.poll(() => status(page).getAttribute('data-status'), { timeout: 60_000 }).toBe('paused');
    await expect.poll(() => page.getByTestId('health-signal').getAttribute('data-level'), { timeout: 30_000 }).toBe('bad');
    await page.screenshot({ path: `${ARTIFACTS}/lesson-c-step1-done.png` });
    console.log(`lesson (c) step 1 done after ${doneAt} iterations`);
    expect(doneAt).toBeLessThanOrEqual(15);

    // Reload (the run is dropped; the tick is not).
    page.once('dialog', (d) => void d.accept());
    await page.reload();
    await page.getByTestId('view-lessons').click();
    await expect.poll(() => attr(page, 'lesson-progress-signal-degeneration', 'data-done')).toBe('1');
    await page.getByTestId('lesson-item-signal-degeneration').click();
    expect(await attr(page, 'lesson-step-1', 'data-done')).toBe('true');
    // The lesson reopens where the student was; Next goes to step 2.
    await page.getByTestId('lesson-next').click();
    expect(await attr(page, 'lesson', 'data-step')).toBe('2');
    await page.screenshot({ path: `${ARTIFACTS}/lesson-c-after-reload.png` });

    // Step 2: dynamic sampling.
    await page.getByTestId('lesson-setup').click();
    expect(await page.getByTestId('field-algo.dynamicSampling.enabled').isChecked()).toBe(true);
    await start(page);
    try {
      await expect.poll(() => attr(page, 'lesson-banner-status', 'data-state'), { timeout: 420_000, interval: 1000 }).toBe('done');
    } catch (e) {
      await page.screenshot({ path: `${ARTIFACTS}/lesson-c-step2-failed.png` });
      console.log(`step 2 not done: run ${await status(page).getAttribute('data-status')}, iteration ${await status(page).getAttribute('data-iteration')}`);
      throw e;
    }
    console.log(`lesson (c) step 2 done after ${await status(page).getAttribute('data-iteration')} iterations`);
    await page.screenshot({ path: `${ARTIFACTS}/lesson-c-step2-done.png` });
    await page.getByTestId('lesson-back').click();
    await expect.poll(() => page.getByTestId('lesson-takeaway').isVisible()).toBe(true);
    await page.screenshot({ path: `${ARTIFACTS}/lesson-c-takeaway.png` });
    expect(errors).toEqual([]);
    await close(page);
    await context.close();
  });

  it('a classroom link built in the UI hides and locks controls, keeps them across views and reloads, and starts nothing', { timeout: 180_000 }, async () => {
    const context = await browser().newContext({ viewport: { width: 1400, height: 1000 } });
    const page = await context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${appUrl}?backend=wasm#view=lessons&lesson=grpo-vs-ppo`);
    await page.locator('[data-testid="classroom-builder"] summary').click();
    // With a lesson open the builder starts on it, and lists only the fields its setup has
    // (an MLP preset: no transformer fields; no stages: no stage rows).
    expect(await page.getByTestId('cl-target-lesson').isChecked()).toBe(true);
    expect(await page.getByTestId('cl-show-model.dModel').count()).toBe(0);
    expect(await page.getByTestId('cl-show-stages.0.iterations').count()).toBe(0);
    await page.getByTestId('cl-target-train').check();
    await page.getByTestId('cl-hide-presets').check();
    await page.getByTestId('cl-hide-panel.reward').check();
    await page.getByTestId('cl-hide-algo.entropyCoef').check();
    await page.getByTestId('cl-hide-algo.lr').check();
    await page.getByTestId('cl-lock-algo.algo').check();
    const url = await page.getByTestId('classroom-url').inputValue();
    expect(url).toContain('#view=train&preset=');
    expect(url).toContain('hide=presets,panel.reward,algo.entropyCoef,algo.lr');
    expect(url).toContain('lock=algo.algo');
    await page.screenshot({ path: `${ARTIFACTS}/lesson-classroom-builder.png`, fullPage: true });

    const student = await context.newPage();
    const studentErrors = watchErrors(student);
    await student.goto(url);
    await expect.poll(() => student.getByTestId('train-config').isVisible()).toBe(true);
    const hidden = async () => ({
      entropy: await student.getByTestId('field-algo.entropyCoef').count(),
      lr: await student.getByTestId('field-algo.lr').count(),
      reward: await student.getByTestId('panel-reward').count(),
      presets: await student.locator('.preset-list').count(),
      // The reward lab edits the reward too: hidden with the Reward panel.
      rewardLab: await student.getByTestId('reward-lab').count(),
    });
    expect(await hidden()).toEqual({ entropy: 0, lr: 0, reward: 0, presets: 0, rewardLab: 0 });
    // Locked: aria-disabled (still focusable, so a click or key can say why nothing changes).
    expect(await student.getByTestId('field-algo.algo').getAttribute('aria-disabled')).toBe('true');
    expect(await student.getByTestId('locked-algo.algo').count()).toBe(1);
    expect(await student.getByTestId('field-algo.groupSize').getAttribute('aria-disabled')).toBeNull();
    expect(await student.getByTestId('field-algo.groupSize').isDisabled()).toBe(false);
    await student.screenshot({ path: `${ARTIFACTS}/lesson-classroom-student.png` });
    // Across a view change and a reload: still hidden; the host's builder is not shown to students.
    await student.getByTestId('view-lessons').click();
    expect(await student.getByTestId('classroom-builder').count()).toBe(0);
    await student.getByTestId('view-train').click();
    await student.reload();
    await expect.poll(() => student.getByTestId('train-config').isVisible()).toBe(true);
    expect(await hidden()).toEqual({ entropy: 0, lr: 0, reward: 0, presets: 0, rewardLab: 0 });
    expect(await student.getByTestId('train-status').getAttribute('data-status')).toBe('idle');
    expect(studentErrors).toEqual([]);
    expect(errors).toEqual([]);
    await close(student);
    await close(page);
    await context.close();
  });

  it('locks look locked, say so when clicked or typed into, and a hash edit of a locked value is refused with a notice', { timeout: 120_000 }, async () => {
    const page = await browser().newPage({ viewport: { width: 1400, height: 1000 } });
    const errors = watchErrors(page);
    const notices = () => page.getByTestId('notices').innerText();
    await page.goto(`${appUrl}#view=train&preset=grid-empty-8x8-grpo&algo.lr=0.01&lock=presets,algo.lr`);
    await expect.poll(() => page.getByTestId('train-config').isVisible()).toBe(true);
    const other = page.getByTestId('preset-grid-door-key-ppo');
    const lr = page.getByTestId('field-algo.lr');
    // Looks locked: a lock chip by the list and the field, aria-disabled, and a hatched, dashed,
    // not-allowed style that the unlocked presets do not have.
    expect(await page.getByTestId('locked-presets').innerText()).toMatch(/locked/i);
    expect(await other.getAttribute('aria-disabled')).toBe('true');
    const look = (testId: string) => page.getByTestId(testId).evaluate((e) => ({ border: getComputedStyle(e).borderTopStyle, cursor: getComputedStyle(e).cursor }));
    expect(await look('preset-grid-door-key-ppo')).toEqual({ border: 'dashed', cursor: 'not-allowed' });
    expect(await look('field-algo.lr')).toEqual({ border: 'dashed', cursor: 'not-allowed' });
    expect(await look('field-algo.groupSize')).toEqual({ border: 'solid', cursor: expect.not.stringMatching(/not-allowed/) });
    expect(await lr.getAttribute('aria-disabled')).toBe('true');
    expect(await page.getByTestId('locked-algo.lr').isVisible()).toBe(true);
    await page.screenshot({ path: `${ARTIFACTS}/lesson-locks.png` });

    // Clicking a locked preset says so, and changes nothing (force: Playwright waits for an
    // aria-disabled element to become enabled; a person's click does not).
    await other.click({ force: true });
    await expect.poll(notices).toMatch(/The preset list is locked by the link this page was opened with/);
    expect(await page.getByTestId('preset-grid-empty-8x8-grpo').getAttribute('aria-pressed')).toBe('true');
    // Clicking and typing into the locked field says so; the value stays.
    await lr.click({ force: true });
    await page.keyboard.type('5');
    await expect.poll(notices).toMatch(/Learning rate is locked by the link this page was opened with/);
    expect(await lr.inputValue()).toBe('0.01');

    // A hash edit of the locked value: refused with a notice, the rest of the edit applies.
    await page.evaluate(() => {
      location.hash = location.hash.replace('algo.lr=0.01', 'algo.lr=0.5') + '&algo.groupSize=16';
    });
    await expect.poll(notices).toMatch(/Not applied: Learning rate is locked by the link this page was opened with/);
    await expect.poll(() => page.getByTestId('field-algo.groupSize').inputValue()).toBe('16');
    expect(await lr.inputValue()).toBe('0.01');
    await expect.poll(() => page.url()).toContain('algo.lr=0.01');
    expect(page.url()).not.toContain('algo.lr=0.5');
    // Another preset in the address while the list is locked: refused, the address goes back.
    await page.evaluate(() => {
      location.hash = location.hash.replace('preset=grid-empty-8x8-grpo', 'preset=grid-door-key-ppo');
    });
    await expect.poll(notices).toMatch(/Not applied: the preset is locked/);
    await expect.poll(() => page.url()).toContain('preset=grid-empty-8x8-grpo');
    expect(await page.getByTestId('preset-grid-empty-8x8-grpo').getAttribute('aria-pressed')).toBe('true');
    expect(await axeProblems(page)).toEqual([]);
    // By keyboard: a locked preset is still a Tab stop, and Enter on it says so.
    await other.focus();
    await page.keyboard.press('Enter');
    expect(await page.getByTestId('preset-grid-empty-8x8-grpo').getAttribute('aria-pressed')).toBe('true');
    expect(await page.getByTestId('train-status').getAttribute('data-status')).toBe('idle');
    expect(errors).toEqual([]);
    await close(page);
  });

  it('a bad classroom link is named in a notice, the good part applies, and saved progress is kept', { timeout: 60_000 }, async () => {
    const context = await browser().newContext({ viewport: { width: 1400, height: 1000 } });
    await context.addInitScript(() => {
      if (!localStorage.getItem('arl-playground.lessons.v1')) localStorage.setItem('arl-playground.lessons.v1', JSON.stringify({ done: { 'grpo-vs-ppo': [0] }, current: null }));
    });
    const page = await context.newPage();
    await page.goto(`${appUrl}?backend=wasm#view=lessons&lesson=nope&step=x&hide=algo.lr,<script>`);
    await expect.poll(() => page.getByTestId('notices').innerText()).toMatch(/no lesson "nope"/);
    const text = await page.getByTestId('notices').innerText();
    expect(text).toMatch(/step=x is not a step number/);
    expect(text).toMatch(/"<script>" is not a control/);
    expect(await page.getByTestId('lesson-empty').isVisible()).toBe(true);
    expect(await attr(page, 'lesson-progress-grpo-vs-ppo', 'data-done')).toBe('1');
    expect(page.url()).toContain('hide=algo.lr');
    expect(page.url()).not.toContain('script');
    await page.screenshot({ path: `${ARTIFACTS}/lesson-bad-link.png` });
    await close(page);
    await context.close();
  });
});
