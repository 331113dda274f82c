/**
 * Every chart or metric a preset's description tells a student to watch exists on that
 * preset's dashboard ("watch the critic's explained variance rise" once named a chart that was
 * not there).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { makeEnv } from '../../core/envs/index.ts';
import { parseRunConfig } from '../../core/presets/schema.ts';
import { dashboardCharts } from './dashboardCharts.ts';

/** Plain-language names in descriptions → the metric a chart must draw for them. */
const PHRASES: [RegExp, string][] = [
  [/explained variance/i, 'critic/explained_variance'],
  [/success rate|sampled success/i, 'episode/success_rate'],
  [/\bentropy\b/i, 'actor/entropy'],
  [/episode length/i, 'episode/length_mean'],
  [/zero[- ](spread|std)/i, 'groups/frac_zero_std'],
  [/staleness/i, 'async/staleness_mean'],
  [/importance weights?/i, 'async/is_ratio_mean'],
  [/format shaping/i, 'reward/format/mean'],
];
/** Metric namespaces (env ids like grid/... and tools/... are not metrics). */
const METRIC = /\b(?:reward|episode|adv|groups|actor|critic|async|mismatch|perf|agents)\/[a-z_]+(?:\/[a-z_]+)?\b/g;

const presets = readdirSync('presets')
  .filter((f) => f.endsWith('.json'))
  .map((f) => JSON.parse(readFileSync(`presets/${f}`, 'utf8')) as { id: string; description: string });

describe('preset descriptions name only charts the dashboard has', () => {
  it.each(presets.map((p) => [p.id, p] as const))('%s', (_id, p) => {
    const r = parseRunConfig(p);
    if (!r.ok) throw new Error(r.messages.join('; '));
    const env = makeEnv(r.config.env.id, r.config.env.kwargs);
    const numActions = r.config.model.kind === 'transformer' ? 0 : env.spec.actionSpace.kind === 'discrete' ? env.spec.actionSpace.n : 0;
    const charts = dashboardCharts(r.config, env.spec.maxSteps, numActions, env.spec.agents);
    const keys = new Set<string>(Object.values(charts).flatMap((cs) => cs.flatMap((c) => c.lines.map((l) => l.key))));
    const titles = new Set([...Object.keys(charts), ...Object.values(charts).flatMap((cs) => cs.map((c) => c.title.toLowerCase()))]);
    const wanted = [...(p.description.match(METRIC) ?? []), ...PHRASES.filter(([re]) => re.test(p.description)).map(([, k]) => k)];
    for (const k of wanted) expect(keys.has(k), `${p.id} mentions ${k}; its dashboard draws ${[...keys].join(', ')}`).toBe(true);
    // "the Speed and Shift charts": each named section or chart exists.
    for (const m of p.description.matchAll(/the ((?:[A-Z][a-z]+)(?: and [A-Z][a-z]+)*) charts?/g)) {
      for (const name of m[1].split(' and ')) expect(titles.has(name.toLowerCase()), `${p.id} mentions the ${name} chart`).toBe(true);
    }
  });
});
