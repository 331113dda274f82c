/**
 * Everything the app reads is a declared metric key: the dashboard's charts for every preset and
 * every lesson step's setup, the lesson checks, and every metric-shaped string literal in the
 * source of the app, the CLI's training loop and the browser's recorder and training worker
 * (badges, run list columns, comparisons). A key missing from core/metrics/registry.ts fails
 * here, whether it is drawn, checked or read.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import '../core/envs/index.ts';
import { envIds, makeEnv } from '../core/envs/index.ts';
import { metricDecl } from '../core/metrics/lookup.ts';
import { METRICS } from '../core/metrics/registry.ts';
import { loadPresets } from './train/config.ts';
import { dashboardCharts } from './train/dashboardCharts.ts';
import type { LineSpec } from './ui/MetricChart.tsx';
import { LESSONS } from './lessons/index.ts';
import { configForSetup } from './lessons/setup.ts';
import { LessonSchema } from './lessons/schema.ts';

const presets = loadPresets(readdirSync('presets').map((f) => JSON.parse(readFileSync(`presets/${f}`, 'utf8')) as unknown)).presets;

/** The namespaces of declared keys (`reward`, `actor`, …): a string in one of them that looks like a key is read as one. */
const NAMESPACES = new Set(METRICS.map((d) => d.key.split('/')[0]));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    if (statSync(p).isDirectory()) return sourceFiles(p);
    return /\.tsx?$/.test(f) && !/\.test\.tsx?$/.test(f) ? [p] : [];
  });
}

/** Quoted strings shaped like a metric key (`'actor/entropy'`, `"reward/mean"`, a template without `${…}`). */
function keyLiterals(text: string): string[] {
  return [...text.matchAll(/(['"`])([a-z_]+(?:\/[A-Za-z0-9_]+)+)\1/g)].map((m) => m[2]).filter((k) => NAMESPACES.has(k.split('/')[0]));
}

/** Where metric keys are read or written outside core: the app, the CLI's loop, the browser's recorder and training worker. */
const READERS = [...sourceFiles('src/app'), 'src/cli/train.ts', ...sourceFiles('src/runtime/storage'), ...sourceFiles('src/runtime/trainWorker')];

describe('keys the app reads are declared', () => {
  it('every metric-shaped string literal in the readers is a declared key (env ids aside)', () => {
    const envs = new Set(envIds());
    const bad: string[] = [];
    let seen = 0;
    for (const file of READERS) {
      for (const k of keyLiterals(readFileSync(file, 'utf8'))) {
        if (envs.has(k)) continue;
        seen++;
        if (metricDecl(k) === undefined) bad.push(`${file}: ${k}`);
      }
    }
    expect(bad).toEqual([]);
    // The scan found the dashboard's and the badges' keys (it is not reading nothing).
    expect(seen).toBeGreaterThan(100);
  });

  it('the scan tells an undeclared key from a declared one', () => {
    const found = keyLiterals(`x('actor/entropy'); y("actor/entropyy"); z(\`agents/\${n}/entropy\`); w('tools/calculator'); v('notaspace/x');`);
    expect(found).toEqual(['actor/entropy', 'actor/entropyy', 'tools/calculator']);
    expect(found.map((k) => metricDecl(k) !== undefined)).toEqual([true, false, false]);
  });

  it("every chart the dashboard draws, for every preset and every lesson step's setup, draws declared keys", () => {
    const configs = [...presets.map((p) => ({ name: p.id, config: p.config })), ...LESSONS.lessons.flatMap((l) => l.steps.map((s, i) => ({ name: `${l.id} step ${i + 1}`, setup: s.setup })))];
    const bad: string[] = [];
    let lines = 0;
    for (const c of configs) {
      const r = 'setup' in c ? configForSetup(c.setup, presets) : { ok: true as const, config: c.config };
      if (!r.ok) throw new Error(`${c.name}: ${r.problems.join('; ')}`);
      const spec = makeEnv(r.config.env.id, r.config.env.kwargs).spec;
      const n = spec.actionSpace.kind === 'discrete' ? spec.actionSpace.n : 0;
      for (const chart of Object.values(dashboardCharts(r.config, spec.maxSteps, n, spec.agents)).flat()) {
        for (const k of [...chart.lines.map((l) => l.key), ...(chart.band ?? [])]) {
          lines++;
          if (metricDecl(k) === undefined) bad.push(`${c.name}: ${chart.id}: ${k}`);
        }
      }
    }
    expect(bad).toEqual([]);
    expect(lines).toBeGreaterThan(200);
  });

  it('every lesson check reads a declared per-iteration key, and the lesson schema refuses one that is not', () => {
    const read = LESSONS.lessons.flatMap((l) => l.steps.flatMap((s) => ('all' in s.check ? s.check.all : []).map((c) => c.metric)));
    expect(read.length).toBeGreaterThan(10);
    expect(read.filter((k) => k !== 'it' && metricDecl(k) === undefined)).toEqual([]);
    const lesson = JSON.parse(JSON.stringify(LESSONS.lessons[0])) as { steps: { check?: { all: { metric: string }[] } }[] };
    const step = lesson.steps.find((s) => s.check)!;
    step.check!.all[0].metric = 'groups/frac_zero_stdd';
    const parsed = LessonSchema.safeParse(lesson);
    expect(parsed.success).toBe(false);
    expect(JSON.stringify(parsed.error?.issues)).toMatch(/is no metric a run logs/);
  });

  it('a chart line takes declared keys only (compile time)', () => {
    // @ts-expect-error: 'actor/entropyy' is no declared key.
    const bad: LineSpec = { key: 'actor/entropyy', label: 'x', color: '#000' };
    const good: LineSpec = { key: 'reward/myTerm/mean', label: 'x', color: '#000' };
    expect([bad.key, good.key]).toHaveLength(2);
  });
});
