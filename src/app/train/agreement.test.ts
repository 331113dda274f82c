/**
 * On a recorded run (a real CLI training run's metrics.jsonl), every number a badge quotes is
 * the window mean of the very metric its section's chart draws: text, chart and headline read
 * one key each, and the badge's figure is `recent()` of it (the mean of the last 3 iterations).
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../cli/train.ts';
import { dashboardCharts } from './dashboardCharts.ts';
import { explorationHealth, outcomeHealth, recent, signalHealth } from './health.ts';
import { loadRunConfig } from '../../cli/presets.ts';

describe('badges, charts and headline agree on a recorded run', () => {
  it('grid-empty-8x8-grpo, 6 iterations', { timeout: 60_000 }, async () => {
    const out = mkdtempSync(join(tmpdir(), 'agree-'));
    expect(await main(['--config', 'grid-empty-8x8-grpo', '--iterations', '6', '--out', out, '--quiet'])).toBe(0);
    const history = readFileSync(join(out, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, number>);
    const charts = dashboardCharts(loadRunConfig('grid-empty-8x8-grpo'), 256, 7);
    const drawn = (section: keyof typeof charts) => new Set(charts[section].flatMap((c) => c.lines.map((l) => l.key)));
    const pct = (x: number) => `${Math.round(x * 100)}%`;

    // Outcome: the success chart's key, its last-3 mean in the badge text.
    expect(drawn('outcome').has('episode/success_rate')).toBe(true);
    expect(outcomeHealth(history).text).toContain(pct(recent(history, 'episode/success_rate')));
    // Signal: the zero-spread chart's key; the badge quotes 1 − its last-3 mean (groups that differ).
    expect(drawn('signal').has('groups/frac_zero_std')).toBe(true);
    const z = recent(history, 'groups/frac_zero_std');
    const signal = signalHealth(history, true);
    expect(signal.text).toContain(z >= 0.9 || (z >= 0.5 && recent(history, 'episode/success_rate') < 0.9) ? pct(z) : pct(1 - z));
    // Exploration: the entropy chart's key, as a share of ln 7.
    expect(drawn('exploration').has('actor/rollout_entropy')).toBe(true);
    expect(explorationHealth(history, 7).text).toContain(pct(recent(history, 'actor/rollout_entropy') / Math.log(7)));
  });
});
