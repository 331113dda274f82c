/**
 * The Studio's map tab in Chromium on the built app: paint a map with the mouse and the
 * keyboard, read "Solvable in 9 steps", play it by hand to the goal, run the random agent, and
 * train GRPO on it to success >= 0.9; the same map opened from its link in a fresh profile
 * trains too; an unsolvable map is refused with its reason; bad JSON is named and loses nothing;
 * lesson 9 ticks its map step on the four-rooms example and its shaped step trains on it;
 * axe-core finds nothing serious, and at 390 px nothing scrolls sideways.
 */
import { describe, expect, inject, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ARTIFACTS, useBrowser, watchErrors, axeProblems, sideways } from './browser.ts';

const appUrl = inject('appUrl');
const browser = useBrowser();


const num = async (page: Page, name: string) => Number((await page.getByTestId('train-status').getAttribute(name)) ?? 'NaN');

/** The map this test paints, as the link carries it (rows joined by '/'). */
const PAINTED = '######/#>.#.#/#..#.#/#....#/#.~.G#/######';

/** Clicks the middle of map cell (x, y) of a W-wide editor, or drags across cells. */
async function cellPoint(page: Page, x: number, y: number, W: number): Promise<{ x: number; y: number }> {
  const box = (await page.getByTestId('map-editor').boundingBox())!;
  const s = box.width / W;
  return { x: box.x + (x + 0.5) * s, y: box.y + (y + 0.5) * s };
}

/**
 * The run's length: the preset's 40 iterations were not enough to count on. In fresh-clone CI
 * runs success >= 0.9 came anywhere from iteration 21 to 38 (the browser's runs are not bit for
 * bit repeatable), so a slow learner could end the run first, and one that got there at 38 could
 * finish before Pause was pressed. No setting depends on the count (no schedule over iterations).
 */
const TRAIN_ITERATIONS = 300;

/** Trains the Train view's draft to success >= 0.9 (the best iteration so far), then pauses. */
async function trainToSuccess(page: Page): Promise<number> {
  await page.getByTestId('field-iterations').fill(String(TRAIN_ITERATIONS));
  await page.getByTestId('train-start').click();
  await expect.poll(() => num(page, 'data-max-success'), { timeout: 300_000, interval: 1000 }).toBeGreaterThanOrEqual(0.9);
  const it = await num(page, 'data-iteration');
  expect(it, 'the run must still be in progress at the pause').toBeLessThan(TRAIN_ITERATIONS);
  await page.getByTestId('train-pause').click();
  await expect.poll(() => page.getByTestId('train-status').getAttribute('data-status'), { timeout: 60_000 }).toBe('paused');
  return it;
}

describe('studio: maps', () => {
  it('paint (mouse + keyboard), solvable in 9 steps, play it, random agent, train (map preset: GRPO + potential shaping) to >= 0.9; its link trains in a fresh profile', { timeout: 600_000 }, async () => {
    const page = await browser().newPage({ viewport: { width: 1400, height: 1000 } });
    const errors = watchErrors(page);
    await page.goto(`${appUrl}?backend=wasm#view=studio`);
    await page.getByTestId('map-editor').waitFor();
    await expect.poll(() => page.getByTestId('map-verdict').textContent()).toBe('Solvable in 7 steps');

    // Mouse: a wall down column 3, rows 1-2, in one drag.
    await page.getByTestId('tool-wall').click();
    const a = await cellPoint(page, 3, 1, 6);
    const b = await cellPoint(page, 3, 2, 6);
    await page.mouse.move(a.x, a.y);
    await page.mouse.down();
    await page.mouse.move(b.x, b.y, { steps: 4 });
    await page.mouse.up();
    // Keyboard: focus the editor, pick lava (3), move the cursor from where the drag ended (3,2)
    // to (2,4), Space paints.
    await page.getByTestId('map-editor').focus();
    await page.keyboard.press('3');
    for (const k of ['ArrowDown', 'ArrowDown', 'ArrowLeft']) await page.keyboard.press(k);
    expect(await page.getByTestId('map-cursor').textContent()).toContain('Cursor column 3, row 5: floor · painting lava');
    await page.keyboard.press(' ');
    expect(await page.getByTestId('map-cursor').textContent()).toContain('column 3, row 5: lava');
    await expect.poll(() => page.evaluate(() => decodeURIComponent(location.hash))).toContain(`map=${PAINTED}`);
    await expect.poll(() => page.getByTestId('map-verdict').textContent()).toBe('Solvable in 9 steps');
    await expect.poll(() => page.getByTestId('map-contract').textContent()).toMatch(/^checkEnv: the env keeps the contract/);
    // Painting over the start would leave the map without one: refused, and it says why.
    await page.keyboard.press('2');
    for (const k of ['ArrowUp', 'ArrowUp', 'ArrowUp', 'ArrowLeft']) await page.keyboard.press(k);
    await page.keyboard.press('Enter');
    expect(await page.getByTestId('map-refusal').textContent()).toMatch(/^Not painted: the map has no agent start/);
    await page.screenshot({ path: `${ARTIFACTS}/studio-map.png`, fullPage: true });
    const studioLink = page.url();

    // The random agent over 100 seeds.
    await page.getByTestId('map-random').click();
    await expect.poll(() => page.getByTestId('map-random-result').textContent()).toMatch(/^succeeds \d+% of 100 episodes/);

    // Play it by hand: the shortest path, 9 key presses.
    await page.getByTestId('map-play-toggle').click();
    await page.getByTestId('map-play').waitFor();
    for (const k of ['ArrowRight', 'ArrowUp', 'ArrowUp', 'ArrowLeft', 'ArrowUp', 'ArrowUp', 'ArrowUp', 'ArrowRight', 'ArrowUp']) await page.keyboard.press(k);
    await expect.poll(() => page.locator('.end-banner').textContent()).toMatch(/^Solved in 9 steps/);
    await page.screenshot({ path: `${ARTIFACTS}/studio-play.png`, fullPage: true });
    await page.getByTestId('map-play-toggle').click();

    // Train on it with the map preset (the CLI's default too: GRPO + potential shaping).
    expect(await page.getByTestId('map-preset').inputValue()).toBe('grid-map-grpo-shaped');
    await page.getByTestId('map-train').click();
    await page.getByTestId('train-status').waitFor();
    // The map preset's env is grid/custom already, so the link names the preset and the map only.
    expect(decodeURIComponent(page.url())).toContain(`preset=grid-map-grpo-shaped`);
    expect(decodeURIComponent(page.url())).toContain(`env.kwargs.map=${PAINTED}`);
    // The blurb names the map, not the preset's empty room.
    expect(await page.getByTestId('preset-blurb').textContent()).toMatch(/^The map "[^"]+", trained with the setup of the preset /);
    const trainLink = new URL(page.url()).hash;
    const it1 = await trainToSuccess(page);
    console.log(`painted map: shaped GRPO success >= 0.9 by iteration ${it1}`);
    await page.screenshot({ path: `${ARTIFACTS}/studio-trained.png` });
    expect(errors).toEqual([]);
    page.on('dialog', (d) => void d.accept());
    await page.close({ runBeforeUnload: false });

    // The studio link in a fresh profile: the same map, the same Train setup as the run above
    // that reached 0.9 (its link, letter for letter: preset, map and every override), and it
    // trains. (It once trained to 0.9 a second time: ~8 s of CI for what the equal link and the
    // run above already show.)
    const fresh = await browser().newPage({ viewport: { width: 1400, height: 1000 } });
    const freshErrors = watchErrors(fresh);
    await fresh.goto(studioLink);
    await expect.poll(() => fresh.getByTestId('map-verdict').textContent(), { timeout: 30_000 }).toBe('Solvable in 9 steps');
    await fresh.getByTestId('map-train').click();
    await fresh.getByTestId('train-status').waitFor();
    await expect.poll(() => new URL(fresh.url()).hash).toBe(trainLink);
    expect(await fresh.getByTestId('preset-blurb').textContent()).toMatch(/^The map "[^"]+", trained with the setup of the preset /);
    await fresh.getByTestId('train-start').click();
    await expect.poll(() => num(fresh, 'data-iteration'), { timeout: 300_000, interval: 500 }).toBeGreaterThanOrEqual(2);
    console.log(`same map from its link, fresh profile: the same Train link, ${await num(fresh, 'data-iteration')} iterations trained`);
    expect(freshErrors).toEqual([]);
    fresh.on('dialog', (d) => void d.accept());
    await fresh.close({ runBeforeUnload: false });
  });

  it('an unsolvable map is refused with the reason; bad JSON is named and the map kept; examples open; saves list; lesson 9', { timeout: 420_000 }, async () => {
    const page = await browser().newPage({ viewport: { width: 1400, height: 1000 } });
    const errors = watchErrors(page);
    const walled = encodeURIComponent('######/#>.#G#/######');
    await page.goto(`${appUrl}?backend=wasm#view=studio&tab=map&map=${walled}`);
    await expect.poll(() => page.getByTestId('map-verdict').textContent()).toBe('Not solvable: the goal is walled off: no path reaches it even through doors and lava');
    expect(await page.getByTestId('map-train').isDisabled()).toBe(true);
    expect(await page.getByTestId('map-train-why').textContent()).toBe('This map cannot be solved: the goal is walled off: no path reaches it even through doors and lava.');
    await page.screenshot({ path: `${ARTIFACTS}/studio-unsolvable.png`, fullPage: true });
    // The door's key behind the door.
    await page.goto(`${appUrl}?backend=wasm#view=studio&tab=map&map=${encodeURIComponent('#######/#>.LKG#/#######')}`);
    await expect.poll(() => page.getByTestId('map-verdict').textContent()).toBe('Not solvable: the door needs a key that is behind it');

    // Bad JSON: named, nothing lost.
    await page.locator('.map-paste > summary').click();
    await page.getByTestId('map-paste').fill('{"kind": "grid-map", "rows": [');
    await page.getByTestId('map-paste-open').click();
    expect(await page.getByTestId('map-import-error').textContent()).toMatch(/^the pasted text is not a map: not valid JSON: .*Your map is unchanged\.$/);
    expect(decodeURIComponent(page.url())).toContain('map=#######/#>.LKG#/#######');
    expect(await page.getByTestId('map-paste').inputValue()).toBe('{"kind": "grid-map", "rows": [');

    // The checks run in a worker: one that dies (an uncaught error in it) is replaced on the next check.
    const names = await Promise.all(page.workers().map((w) => w.evaluate(() => self.name).catch(() => '')));
    const checker = page.workers()[names.indexOf('map-check')];
    expect(checker, names.join(', ')).toBeDefined();
    await checker.evaluate(() => void setTimeout(() => { throw new Error('map-check worker killed by the test'); }, 0));
    await expect.poll(async () => (await Promise.all(page.workers().map((w) => w.evaluate(() => self.name).catch(() => '')))).filter((n) => n === 'map-check').length).toBe(0);

    // An example opens; saving lists it.
    await page.getByTestId('map-example-four-rooms').click();
    await expect.poll(() => page.getByTestId('map-verdict').textContent()).toBe('Solvable in 19 steps');
    await page.getByTestId('map-save').click();
    await expect.poll(() => page.getByTestId('map-saved').textContent()).toContain('Four rooms 11x11');
    await page.getByTestId('map-example-lava-crossing').click();
    await expect.poll(() => page.getByTestId('map-verdict').textContent()).toMatch(/^Solvable in \d+ steps$/);

    // Lesson 9: its first step is checked live on the studio's map.
    await page.getByTestId('view-lessons').click();
    await page.getByTestId('lesson-item-design-the-room').click();
    await page.getByTestId('lesson-setup').click();
    await page.getByTestId('lesson-banner').waitFor();
    await page.getByTestId('map-example-four-rooms').click();
    await expect.poll(() => page.getByTestId('lesson-banner-status').getAttribute('data-state'), { timeout: 20_000 }).toBe('done');
    await page.screenshot({ path: `${ARTIFACTS}/studio-lesson9.png`, fullPage: true });
    await page.getByTestId('lesson-back').click();
    // The step's tick is saved with the lesson's progress as the banner turns done; the list reads it back.
    await expect.poll(() => page.getByTestId('lesson-step-1').getAttribute('data-done'), { timeout: 10_000 }).toBe('true');
    // Step 3 trains on that map with potential shaping until its check ticks.
    await page.getByTestId('lesson-step-3').click();
    await page.getByTestId('lesson-setup').click();
    expect(decodeURIComponent(page.url())).toContain('env.kwargs.name=Four rooms 11x11');
    await page.getByTestId('train-start').click();
    await expect.poll(() => page.getByTestId('lesson-banner-status').getAttribute('data-state'), { timeout: 300_000, interval: 1000 }).toBe('done');
    console.log(`lesson 9 step 3 on four rooms: done after ${await page.getByTestId('train-status').getAttribute('data-iteration')} iterations`);
    expect(errors.filter((e) => !e.includes('killed by the test'))).toEqual([]);
    page.on('dialog', (d) => void d.accept());
    await page.close({ runBeforeUnload: false });
  });

  it('axe-core clean (drawing and playing); 390 px: nothing scrolls sideways and the editor fits', { timeout: 120_000 }, async () => {
    const page = await browser().newPage({ viewport: { width: 1400, height: 1000 } });
    const errors = watchErrors(page);
    await page.goto(`${appUrl}?backend=wasm#view=studio`);
    await page.getByTestId('map-editor').waitFor();
    await expect.poll(() => page.getByTestId('map-verdict').textContent()).toMatch(/^Solvable/);
    const report: Record<string, string[]> = { draw: await axeProblems(page) };
    expect(await page.locator('h1').count()).toBe(1);
    await page.getByTestId('map-play-toggle').click();
    await page.getByTestId('map-play').waitFor();
    report.play = await axeProblems(page);
    expect(report).toEqual({ draw: [], play: [] });
    await page.close();

    const phone = await browser().newPage({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    await phone.goto(`${appUrl}?backend=wasm#view=studio&tab=map&map=${encodeURIComponent('#########/#>..~...#/#...~...#/#...~...#/#...~...#/#...~...#/#.......#/#...~..G#/#########')}`);
    await phone.getByTestId('map-editor').waitFor();
    expect(await sideways(phone)).toBeLessThanOrEqual(0);
    const box = (await phone.getByTestId('map-editor').boundingBox())!;
    expect(box.x + box.width).toBeLessThanOrEqual(390);
    // Touch paints too.
    await phone.getByTestId('tool-wall').tap();
    const p = await cellPoint(phone, 2, 2, 9);
    await phone.touchscreen.tap(p.x, p.y);
    await expect.poll(() => phone.evaluate(() => decodeURIComponent(location.hash))).toContain('map=#########/#>..~...#/#.#.~...#');
    await phone.screenshot({ path: `${ARTIFACTS}/studio-phone.png`, fullPage: true });
    expect(errors).toEqual([]);
    await phone.close();
  });
});
