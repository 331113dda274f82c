import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ANCHOR_DOC, METRIC_DOC, withAnchorTable, withMetricGroups, withMetricTable } from './metricDocs.ts';
import { METRICS } from '../core/metrics/registry.ts';

describe('generated metric tables', () => {
  it('docs/metrics.md lists every registry key (run npm run docs:metrics after changing src/core/metrics/registry.ts)', () => {
    const doc = readFileSync(METRIC_DOC, 'utf8');
    expect(withMetricTable(doc)).toBe(doc);
    for (const d of METRICS) expect(doc).toContain(`| \`${d.key}\` |`);
    // A pipe inside a doc is escaped, or the row would split into extra columns.
    expect(doc).toMatch(/\| `agents\/<name>\/adv_share` \| share \| grid MLP runs; multi-agent envs \(EnvSpec\.agents\) \| that agent's share of Σ\\\|advantage\\\| over the batch \|/);
  });

  it("ARCHITECTURE.md's table of metric groups names every key under its group, with its unit", () => {
    const doc = readFileSync('ARCHITECTURE.md', 'utf8');
    expect(withMetricGroups(doc)).toBe(doc);
    for (const d of METRICS) {
      const [group, ...rest] = d.key.split('/');
      const row = doc.split('\n').find((l) => l.startsWith(`| \`${group}/\` |`));
      expect(row, d.key).toContain(`\`${rest.join('/') || d.key}\` ${d.unit}`);
    }
    expect(doc).toMatch(/\| `actor\/` \| [^|]*`entropy` nats/);
  });

  it("docs/headless.md's table of TRL / veRL names matches the registry", () => {
    const readme = readFileSync(ANCHOR_DOC, 'utf8');
    expect(withAnchorTable(readme)).toBe(readme);
    expect(readme).toContain('| `groups/frac_zero_std` | `frac_reward_zero_std` |  |');
    expect(readme).toContain('| `critic/value_loss` |  | `critic/vf_loss` |');
  });

  it('a stale table is caught', () => {
    const doc = readFileSync(METRIC_DOC, 'utf8');
    const stale = doc.replace('| `actor/entropy` |', '| `actor/entropy_old` |');
    expect(withMetricTable(stale)).not.toBe(stale);
    const arch = readFileSync('ARCHITECTURE.md', 'utf8');
    const staleArch = arch.replace('`entropy` nats', '`entropy_old` nats');
    expect(withMetricGroups(staleArch)).not.toBe(staleArch);
  });
});
