/**
 * "Watch a trained agent" in the Environments view: the shipped door-key policy (public/agents/,
 * made by npm run train-agents) steps once with its action probabilities shown, then plays the
 * episode to the goal; the same seed replays the same actions; greedy takes the likeliest
 * action. The shipped kv-lookup transformer, decoded in the agent worker, writes its lookups
 * call by call with each token's probability and answers correctly. grid/memory's transformer
 * (it reads the grid as text) is offered at the settings it learned with, and the grid viewer
 * animates it to the arm that matches the cue.
 */
import { describe, expect, inject, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ARTIFACTS, useBrowser, watchErrors } from './browser.ts';

const appUrl = inject('appUrl');
const browser = useBrowser();
/** A kv-lookup seed the shipped agent solves greedily (checked against public/agents/kv-lookup.onnx). */
const KV_SEED = 1;
/** A grid/memory seed the shipped agent solves greedily (shipped.test.ts checks it against public/agents/memory.onnx). */
const MEMORY_SEED = 1;

async function open(path: string): Promise<{ page: Page; errors: string[] }> {
  const page = await browser().newPage({ viewport: { width: 1280, height: 900 } });
  const errors = watchErrors(page);
  await page.goto(appUrl + path);
  await page.getByTestId('episode-status').waitFor();
  return { page, errors };
}

/** The actions of the episode so far, from the step log's chips made by the agent. */
const agentActions = (page: Page) => page.locator('.step-chip.by-agent').evaluateAll((els) => els.map((e) => e.textContent ?? ''));

describe('trained agents', () => {
  it('door-key: one step shows the policy, watching reaches the goal, and the seed replays the same episode', { timeout: 120_000 }, async () => {
    const { page, errors } = await open('#env=grid/door-key-6x6&seed=7');
    const status = page.getByTestId('episode-status');
    const panel = page.getByTestId('agent-panel');
    await panel.waitFor();
    expect(await panel.getAttribute('data-agent')).toBe('door-key-6x6.onnx');
    expect(await page.getByTestId('agent-facts').textContent()).toMatch(/Held-out success \(64 unseen seeds\): sampled \d+%, greedy \d+%/);

    await page.getByTestId('agent-step').click();
    const probs = page.getByTestId('agent-probs');
    await probs.waitFor();
    expect(await probs.getAttribute('data-step')).toBe('0');
    const ps = await probs.locator('li').evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-prob'))));
    expect(ps.length).toBe(7);
    expect(ps.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 3);
    await expect.poll(() => status.getAttribute('data-steps')).toBe('1');
    expect(await page.locator('.step-chip.by-agent').count()).toBe(1);

    // Full speed, then watch it finish.
    await page.getByLabel('Expert speed (actions per second)').fill('12');
    await page.getByTestId('agent-watch').click();
    await expect.poll(() => status.getAttribute('data-state'), { timeout: 60_000 }).not.toBe('running');
    expect(await status.getAttribute('data-success')).toBe('true');
    await page.screenshot({ path: `${ARTIFACTS}/agent-door-key.png` });
    const first = await agentActions(page);

    await page.getByTestId('reset').click();
    await page.getByTestId('agent-watch').click();
    await expect.poll(() => status.getAttribute('data-state'), { timeout: 60_000 }).not.toBe('running');
    expect(await agentActions(page)).toEqual(first);

    // Greedy: the chosen action is the likeliest one.
    await page.getByTestId('reset').click();
    await page.getByTestId('agent-mode').selectOption('greedy');
    for (let i = 0; i < 3; i++) {
      await page.getByTestId('agent-step').click();
      await expect.poll(() => probs.getAttribute('data-step')).toBe(String(i));
      const p = await probs.locator('li').evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-prob'))));
      expect(Number(await probs.getAttribute('data-action'))).toBe(p.indexOf(Math.max(...p)));
    }
    expect(errors).toEqual([]);
    await page.close();
  });

  it('kv-lookup: the trained transformer looks up the chain turn by turn and answers correctly', { timeout: 180_000 }, async () => {
    const { page, errors } = await open(`#env=tools/kv-lookup&seed=${KV_SEED}`);
    const status = page.getByTestId('episode-status');
    const panel = page.getByTestId('agent-panel');
    await panel.waitFor();
    expect(await panel.getAttribute('data-agent')).toBe('kv-lookup.onnx');
    expect(await page.getByTestId('agent-facts').textContent()).toMatch(/transformer .* Held-out success \(64 unseen seeds\): sampled \d+%, greedy \d+%/);

    // One call: the transcript gains the agent's turn, and its tokens show with their probabilities.
    await page.getByTestId('agent-mode').selectOption('greedy');
    await page.getByTestId('agent-step').click();
    // The first call loads the policy and decodes the whole episode in the worker (~1 s alone, 15-30 s on a busy 2-core machine).
    await expect.poll(() => status.getAttribute('data-steps'), { timeout: 90_000 }).toBe('1');
    const tokens = page.getByTestId('agent-tokens');
    await tokens.waitFor();
    expect(await tokens.getAttribute('data-turn')).toBe('1');
    const chips = await tokens.locator('li').evaluateAll((els) => els.map((e) => [e.querySelector('code')?.textContent ?? '', Number(e.getAttribute('data-prob'))] as const));
    expect(chips[0][0]).toBe('lookup(');
    expect(chips[chips.length - 1][0]).toBe('⏎');
    for (const [, p] of chips) expect(p).toBeGreaterThan(0);
    expect(await page.locator('.msg-agent.by-agent').count()).toBe(1);

    // Watch the rest at a watchable pace: one call per tick, ending with a correct answer.
    await page.getByLabel('Expert speed (actions per second)').fill('4');
    await page.getByTestId('agent-watch').click();
    await expect.poll(() => status.getAttribute('data-state'), { timeout: 60_000 }).not.toBe('running');
    expect(await status.getAttribute('data-success')).toBe('true');
    expect(await page.getByTestId('agent-outcome').getAttribute('data-success')).toBe('true');
    const calls = await page.locator('.msg-agent.by-agent .msg-body').allTextContents();
    expect(calls.length).toBeGreaterThanOrEqual(3); // two hops: at least two lookups, then the answer
    expect(calls.slice(0, -1).every((c) => c.startsWith('lookup('))).toBe(true);
    expect(calls[calls.length - 1]).toMatch(/^answer\(/);
    await page.screenshot({ path: `${ARTIFACTS}/agent-kv-lookup.png` });
    expect(errors).toEqual([]);
    await page.close();
  });

  it('grid/memory: the transformer reading the grid as text is offered at its settings, and remembers the cue to a success', { timeout: 180_000 }, async () => {
    // Opened with the env's defaults (size 13, view 7): the agent learned another world, and the panel says so with a way there.
    const { page, errors } = await open(`#env=grid/memory&seed=${MEMORY_SEED}`);
    const none = page.getByTestId('agent-none');
    await expect.poll(() => none.textContent()).toMatch(/learned in a different world \(trained with size 8, viewSize 5, maxSteps 12\)/);
    expect(await page.getByTestId('agent-watch').count()).toBe(0);
    await page.getByTestId('agent-open-settings').click();
    await expect.poll(() => page.evaluate(() => location.hash)).toMatch(/k\.size=8/);

    const status = page.getByTestId('episode-status');
    const panel = page.getByTestId('agent-panel');
    await panel.waitFor();
    expect(await panel.getAttribute('data-agent')).toBe('memory.onnx');
    expect(await status.getAttribute('data-steps')).toBe('0');
    expect(await page.getByTestId('agent-facts').textContent()).toMatch(/reads the grid as text .* Held-out success \(64 unseen seeds\): sampled \d+%, greedy \d+%/);

    // Greedy, a watchable pace: the grid viewer animates the agent's steps to the arm that matches the cue.
    await page.getByTestId('agent-mode').selectOption('greedy');
    await page.getByLabel('Expert speed (actions per second)').fill('4');
    await page.getByTestId('agent-watch').click();
    await expect.poll(() => status.getAttribute('data-state'), { timeout: 120_000 }).not.toBe('running');
    expect(await status.getAttribute('data-success')).toBe('true');
    expect(await page.getByTestId('agent-outcome').getAttribute('data-success')).toBe('true');
    const steps = Number(await status.getAttribute('data-steps'));
    expect(steps).toBeGreaterThan(3);
    expect(await page.locator('.step-chip.by-agent').count()).toBe(steps);
    // The last step's letter and its probability.
    const tokens = page.getByTestId('agent-tokens');
    expect(await tokens.getAttribute('data-turn')).toBe(String(steps));
    const chips = await tokens.locator('li').evaluateAll((els) => els.map((e) => [e.querySelector('code')?.textContent ?? '', Number(e.getAttribute('data-prob'))] as const));
    expect(chips[0][0]).toMatch(/^[lrfpdtn]$/);
    expect(chips[0][1]).toBeGreaterThan(0);
    await page.screenshot({ path: `${ARTIFACTS}/agent-memory.png` });
    expect(errors).toEqual([]);
    await page.close();
  });
});
