import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ANCHOR_DOC, withAnchorTable, withMetricTable } from './metricDocs.ts';
import { METRICS } from '../core/metrics/registry.ts';

describe('generated metric tables', () => {
  it('ARCHITECTURE.md lists every registry key (run npm run docs:metrics after changing src/core/metrics/registry.ts)', () => {
    const doc = readFileSync('ARCHITECTURE.md', 'utf8');
    expect(withMetricTable(doc)).toBe(doc);
    for (const d of METRICS) expect(doc).toContain(`| \`${d.key}\` |`);
    // A pipe inside a doc is escaped, or the row would split into extra columns.
    expect(doc).toMatch(/\| `agents\/<name>\/adv_share` \| share \| grid MLP runs; multi-agent envs \(EnvSpec\.agents\) \| that agent's share of Σ\\\|advantage\\\| over the batch \|/);
  });

  it("docs/headless.md's table of TRL / veRL names matches the registry", () => {
    const readme = readFileSync(ANCHOR_DOC, 'utf8');
    expect(withAnchorTable(readme)).toBe(readme);
    expect(readme).toContain('| `groups/frac_zero_std` | `frac_reward_zero_std` |  |');
    expect(readme).toContain('| `critic/value_loss` |  | `critic/vf_loss` |');
  });

  it('a stale table is caught', () => {
    const doc = readFileSync('ARCHITECTURE.md', 'utf8');
    const stale = doc.replace('| `actor/entropy` |', '| `actor/entropy_old` |');
    expect(withMetricTable(stale)).not.toBe(stale);
  });
});
