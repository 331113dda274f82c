/**
 * Phones show a chart: at 390 × 844 with the default backend (no ?backend=), while a run trains,
 * a chart with at least one point is inside the viewport without any scrolling, on a Train link
 * and in a lesson step (whose banner takes room above the charts). Charts draw only while they
 * intersect the viewport (MetricChart's useStaggered), so a chart below the fold holds 0 points.
 * Screenshots: e2e/artifacts/phone-chart-*.png.
 */
import { describe, expect, inject, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ARTIFACTS, axeProblems, sideways, useBrowser, watchErrors } from './browser.ts';

const appUrl = inject('appUrl');
const browser = useBrowser();
const W = 390;
const H = 844;

/** Every chart wholly inside the viewport, with its points, and how far the page and its scrollers are scrolled. */
async function chartsInView(page: Page) {
  return page.evaluate(
    ([w, h]) => {
      const charts = [...document.querySelectorAll<HTMLElement>('figure.chart[data-testid^="chart-"]')].map((el) => {
        const r = el.getBoundingClientRect();
        return { id: el.dataset.testid!, points: Number(el.dataset.points), top: Math.round(r.top), bottom: Math.round(r.bottom), inView: el.checkVisibility() && r.top >= 0 && r.bottom <= h && r.left >= 0 && r.right <= w && r.height > 0 };
      });
      const scrolled = [document.scrollingElement, ...document.querySelectorAll('*')].filter((e): e is Element => !!e && e.scrollTop > 0).length;
      return { charts, scrollY: window.scrollY, scrolled };
    },
    [W, H] as const,
  );
}

async function waitIterations(page: Page, n: number) {
  await expect.poll(async () => Number(await page.getByTestId('train-status').getAttribute('data-iteration')), { timeout: 180_000, interval: 250 }).toBeGreaterThanOrEqual(n);
}

describe('phone: a chart in view while training', () => {
  it('390×844, a Train link: a drawn chart is on screen without scrolling', { timeout: 300_000 }, async () => {
    const page = await browser().newPage({ viewport: { width: W, height: H }, isMobile: true, hasTouch: true });
    const errors = watchErrors(page);
    await page.goto(`${appUrl}#view=train&preset=grid-empty-8x8-grpo&iterations=400`);
    await page.getByTestId('train-start').click();
    await waitIterations(page, 2);
    await page.waitForTimeout(500);
    const seen = await chartsInView(page);
    console.log('train link', JSON.stringify(seen));
    await page.screenshot({ path: `${ARTIFACTS}/phone-chart-train.png` });
    expect(seen.scrollY).toBe(0);
    expect(seen.scrolled).toBe(0);
    const drawn = seen.charts.filter((c) => c.inView && c.points >= 1);
    // The key chart under Start: the success rate, drawn.
    expect(drawn.map((c) => c.id)).toContain('chart-key-success');
    expect(await sideways(page)).toBeLessThanOrEqual(0);
    expect(await axeProblems(page)).toEqual([]);
    page.on('dialog', (d) => void d.accept());
    await page.close({ runBeforeUnload: false });
    expect(errors).toEqual([]);
  });

  it("390×844, lesson 1 step 1 set up from the Lessons view: the step's key chart is on screen without scrolling", { timeout: 300_000 }, async () => {
    const page = await browser().newPage({ viewport: { width: W, height: H }, isMobile: true, hasTouch: true });
    const errors = watchErrors(page);
    await page.goto(`${appUrl}#view=lessons`);
    await page.getByTestId('lesson-item-sparse-vs-shaped').click();
    await page.getByTestId('lesson-setup').click();
    await page.getByTestId('lesson-banner').waitFor();
    await page.getByTestId('train-start').click();
    await waitIterations(page, 2);
    await page.waitForTimeout(500);
    const seen = await chartsInView(page);
    console.log('lesson 1 step 1', JSON.stringify(seen));
    await page.screenshot({ path: `${ARTIFACTS}/phone-chart-lesson.png` });
    expect(seen.scrolled).toBe(0);
    const drawn = seen.charts.filter((c) => c.inView && c.points >= 1);
    // The step's key chart: its check reads zero-spread groups.
    expect(drawn.map((c) => c.id)).toContain('chart-key-zero-std');
    page.on('dialog', (d) => void d.accept());
    await page.close({ runBeforeUnload: false });
    expect(errors).toEqual([]);
  });

  it('lessons 5 and 8 set up: the blurb above the tabs is the step\'s setup (2-digit, d 48), not calc-grpo\'s 4-digit description', { timeout: 120_000 }, async () => {
    const page = await browser().newPage({ viewport: { width: 1280, height: 900 } });
    const errors = watchErrors(page);
    for (const id of ['rlvr-vs-agentic', 'warm-start-then-rl']) {
      await page.goto(`${appUrl}#view=lessons`);
      await page.getByTestId(`lesson-item-${id}`).click();
      await page.getByTestId('lesson-setup').click();
      await page.getByTestId('lesson-banner').waitFor();
      const blurb = await page.getByTestId('preset-blurb').innerText();
      console.log(id, blurb);
      expect(blurb).not.toMatch(/3473|8 attention heads/);
      expect(blurb).toMatch(/d 48/);
      expect(blurb).toMatch(/Model width d 48 \(preset: 64\)/);
    }
    await page.screenshot({ path: `${ARTIFACTS}/lesson-blurb.png` });
    expect(errors).toEqual([]);
    await page.close({ runBeforeUnload: false });
  });

  it('lesson 9 step 1 is never "done" while the Studio still says "Checking…"', { timeout: 120_000 }, async () => {
    const page = await browser().newPage({ viewport: { width: 1280, height: 900 } });
    const errors = watchErrors(page);
    await page.goto(`${appUrl}#view=lessons`);
    await page.getByTestId('lesson-item-design-the-room').click();
    await page.getByTestId('lesson-setup').click();
    await page.getByTestId('lesson-banner').waitFor();
    await page.getByTestId('map-example-four-rooms').click();
    // Both read in the same task, every animation frame, until the banner says done.
    const samples = await page.evaluate(
      () =>
        new Promise<{ banner: string; verdict: string }[]>((resolve) => {
          const out: { banner: string; verdict: string }[] = [];
          const t0 = performance.now();
          const read = () => {
            const banner = document.querySelector('[data-testid="lesson-banner-status"]')?.getAttribute('data-state') ?? '';
            const verdict = document.querySelector('[data-testid="map-verdict"]')?.textContent ?? '';
            out.push({ banner, verdict });
            if (banner === 'done' || performance.now() - t0 > 20_000) resolve(out);
            else requestAnimationFrame(read);
          };
          read();
        }),
    );
    console.log(`lesson 9 step 1: ${samples.length} frames; states ${[...new Set(samples.map((x) => `${x.banner}/${x.verdict}`))].join(' | ')}`);
    expect(samples[samples.length - 1]).toEqual({ banner: 'done', verdict: 'Solvable in 19 steps' });
    expect(samples.filter((x) => x.banner === 'done' && x.verdict !== 'Solvable in 19 steps')).toEqual([]);
    expect(errors).toEqual([]);
    await page.close({ runBeforeUnload: false });
  });
});
