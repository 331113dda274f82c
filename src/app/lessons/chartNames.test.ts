/**
 * Lesson texts name only charts that exist: every phrase a lesson quotes ("groups dropped",
 * "Reward by term", …) is the title or a line label of a chart the dashboard draws for that
 * step's setup, unless it is listed below as a quote of something else.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import '../../core/envs/index.ts';
import { makeEnv } from '../../core/envs/index.ts';
import { loadPresets } from '../train/config.ts';
import { dashboardCharts } from '../train/dashboardCharts.ts';
import { LESSONS } from './index.ts';
import { configForSetup } from './setup.ts';
import { isMapCheck } from './schema.ts';
import { BADGES } from '../train/Dashboard.tsx';
import { keyChart } from '../train/dashboardCharts.ts';
import { TRAIN_TABS } from '../train/trainState.ts';
import { STUDIO_TABS } from '../studio/studioHash.ts';
import { metricDecl } from '../../core/metrics/lookup.ts';
import type { MetricKey } from '../../core/metrics/registry.ts';

const presets = loadPresets(readdirSync('presets').map((f) => JSON.parse(readFileSync(`presets/${f}`, 'utf8')) as unknown)).presets;

/** Quotes that are not chart names: words used as words, and what an episode says. */
const NOT_CHARTS = new Set(['closer', 'further', 'expected', 'converged', 'what is 47 * 83?', 'result: 3901']);

const quotes = (text: string) => [...text.matchAll(/"([^"]{2,40})"/g)].map((m) => m[1]);

describe('lesson texts', () => {
  for (const lesson of LESSONS.lessons) {
    it(`${lesson.id}: every quoted chart name is a chart of its step's dashboard`, () => {
      const all = new Set<string>();
      const perStep = lesson.steps.map((step) => {
        const r = configForSetup(step.setup, presets);
        if (!r.ok) throw new Error(r.problems.join('; '));
        const spec = makeEnv(r.config.env.id, r.config.env.kwargs).spec;
        const n = spec.actionSpace.kind === 'discrete' ? spec.actionSpace.n : 0;
        const names = new Set<string>();
        for (const charts of Object.values(dashboardCharts(r.config, spec.maxSteps, n, spec.agents))) {
          for (const c of charts) {
            names.add(c.title.toLowerCase());
            for (const l of c.lines) names.add(l.label.toLowerCase());
          }
        }
        for (const x of names) all.add(x);
        return names;
      });
      const bad: string[] = [];
      lesson.steps.forEach((step, i) => {
        for (const q of [...quotes(step.text), ...quotes(step.action)]) if (!NOT_CHARTS.has(q) && !perStep[i].has(q.toLowerCase())) bad.push(`step ${i + 1}: "${q}"`);
      });
      for (const q of [...quotes(lesson.summary), ...quotes(lesson.takeaway)]) if (!NOT_CHARTS.has(q) && !all.has(q.toLowerCase())) bad.push(`summary/takeaway: "${q}"`);
      expect(bad).toEqual([]);
    });
  }
});

/**
 * The names a lesson uses without quoting a chart's title: each refers to one metric, and its step's
 * dashboard must draw that metric in a chart (a text that says "watch the KV-cache hit rate" on a
 * dashboard without that chart sends the student looking for nothing).
 */
const METRIC_WORDS: readonly [RegExp, MetricKey][] = [
  [/\btool calls per episode\b/i, 'tools/call_frequency'],
  [/\bkv[- ]cache hit rate\b/i, 'perf/kv_cache_hit_rate'],
  [/\bturns per episode\b|\bturns\b/i, 'episode/turns_mean'],
  [/\bepisode length\b|\blength\b/i, 'episode/length_mean'],
  [/\bsuccess rate\b|\bsuccess\b/i, 'episode/success_rate'],
  [/\bentropy\b/i, 'actor/entropy'],
  [/\bstaleness\b/i, 'async/staleness_mean'],
  [/\bimportance[- ]ratio\b/i, 'async/is_ratio_mean'],
  [/\bexplained variance\b/i, 'critic/explained_variance'],
  [/\bzero[- ]spread groups\b|\bzero[- ]spread chart\b/i, 'groups/frac_zero_std'],
  [/\bgroups dropped\b/i, 'groups/dropped'],
  [/\bmean reward\b|\bshaped return\b/i, 'reward/mean'],
  [/\bclipped ratios\b/i, 'actor/clipfrac_high'],
  [/\bthe critic charts\b/i, 'critic/explained_variance'],
];

/** The label a badge can show (health.ts's and rewardHealth.ts's verdicts), read off their source: a lesson quotes them ('gamed'). */
const BADGE_LABELS = new Set(['health.ts', 'rewardHealth.ts'].flatMap((f) => [...readFileSync(`src/app/train/${f}`, 'utf8').matchAll(/label: '([^']+)'/g)].map((m) => m[1])));

/** Buttons a lesson tells the student to press, where they are: the Train view's run button and the Studio map tab's random agent (MapChecks.tsx). */
const BUTTONS = new Set(['start', 'random agent']);

/** What a step's screen shows: the metric keys its charts draw, their names, the badges and the tabs. */
function screenOf(step: { setup: Parameters<typeof configForSetup>[0] }) {
  const r = configForSetup(step.setup, presets);
  if (!r.ok) throw new Error(r.problems.join('; '));
  const spec = makeEnv(r.config.env.id, r.config.env.kwargs).spec;
  const n = spec.actionSpace.kind === 'discrete' ? spec.actionSpace.n : 0;
  const family = r.config.env.id.startsWith('tools/') ? 'tool' : 'grid';
  const policy = r.config.model.kind === 'transformer' ? 'token' : 'step';
  const keys = new Set<string>();
  for (const charts of Object.values(dashboardCharts(r.config, spec.maxSteps, n, spec.agents))) for (const c of charts) for (const l of c.lines) keys.add(l.key);
  return { keys, family, policy } as const;
}

/** Every single- or double-quoted phrase (an apostrophe inside a word, as in "task's", is no quote). */
const anyQuotes = (text: string) => [...text.matchAll(/(?<![A-Za-z])(["'])([^"']{2,40})\1(?![A-Za-z])/g)].map((m) => m[2]);

describe('lesson texts name only what their step shows', () => {
  it('the metric words are found in no text where they are not drawn, and every metric is logged by the run', () => {
    const bad: string[] = [];
    LESSONS.lessons.forEach((lesson, li) => {
      lesson.steps.forEach((step, si) => {
        if (isMapCheck(step.check)) return;
        const screen = screenOf(step);
        const text = `${step.text} ${step.action}`;
        for (const [re, key] of METRIC_WORDS) {
          if (!re.test(text)) continue;
          const decl = metricDecl(key);
          if (!screen.keys.has(key)) bad.push(`lesson ${li + 1} step ${si + 1}: "${text.match(re)?.[0]}" (${key}) is no chart of this step's dashboard`);
          else if (!decl || !decl.families.includes(screen.family) || !decl.policies.includes(screen.policy)) bad.push(`lesson ${li + 1} step ${si + 1}: ${key} is not logged by a ${screen.family}/${screen.policy} run`);
        }
      });
    });
    expect(bad).toEqual([]);
  });

  it('every "Watch …" list names only charts, badges and metrics of its step', () => {
    const bad: string[] = [];
    LESSONS.lessons.forEach((lesson, li) => {
      lesson.steps.forEach((step, si) => {
        if (isMapCheck(step.check)) return;
        for (const m of `${step.text} ${step.action}`.matchAll(/\b[Ww]atch ([^.:;]+)/g)) {
          // "Watch turns per episode (about 2), tool calls per episode, and the KV-cache hit rate"
          const items = m[1].replace(/\([^)]*\)/g, '').split(/,\s*(?:and\s+)?|\s+and\s+(?=the\b|["'])/);
          for (const raw of items) {
            const item = raw.trim().replace(/^the\s+/i, '');
            const known = METRIC_WORDS.some(([re]) => re.test(item) && item.search(re) === 0) || /^(\w+) badge\b/i.test(item) || /^["']/.test(item) || /^\w[\w -]* charts?\b/i.test(item);
            if (!known) bad.push(`lesson ${li + 1} step ${si + 1}: watch "${item}"`);
          }
        }
      });
    });
    expect(bad).toEqual([]);
  });

  it('every badge, badge label, tab and button a text names exists', () => {
    const tabs = new Set([...TRAIN_TABS.map((t) => t.title.toLowerCase()), ...STUDIO_TABS]);
    const badges = new Set<string>(BADGES);
    const bad: string[] = [];
    LESSONS.lessons.forEach((lesson, li) => {
      const texts = [lesson.summary, lesson.takeaway, ...lesson.steps.flatMap((s) => [s.text, s.action])];
      for (const text of texts) {
        for (const m of text.matchAll(/\bthe (\w+) badge\b/gi)) if (!badges.has(m[1].toLowerCase())) bad.push(`lesson ${li + 1}: no badge "${m[1]}"`);
        for (const m of text.matchAll(/\bthe (\w+) tab\b/gi)) if (!tabs.has(m[1].toLowerCase())) bad.push(`lesson ${li + 1}: no tab "${m[1]}"`);
        for (const m of text.matchAll(/\b[Pp]ress ([A-Z]\w*(?: agent)?)/g)) if (!BUTTONS.has(m[1].toLowerCase())) bad.push(`lesson ${li + 1}: no button "${m[1]}"`);
        // A quoted word next to "badge" is a badge's label: one health.ts can show.
        for (const m of text.matchAll(/badge (?:turns? to|stays|reads?|ends at|stays \w+ and ends at) (["'])([^"']{2,30})\1/g)) {
          const label = m[2];
          if (!BADGE_LABELS.has(label)) bad.push(`lesson ${li + 1}: no badge label "${label}"`);
        }
      }
    });
    expect(bad).toEqual([]);
  });

  it('single-quoted names are charts of the step, badge labels or the reward-lab term the lesson defines', () => {
    const bad: string[] = [];
    LESSONS.lessons.forEach((lesson, li) => {
      lesson.steps.forEach((step, si) => {
        if (isMapCheck(step.check)) return;
        const r = configForSetup(step.setup, presets);
        if (!r.ok) throw new Error(r.problems.join('; '));
        const spec = makeEnv(r.config.env.id, r.config.env.kwargs).spec;
        const names = new Set<string>();
        for (const charts of Object.values(dashboardCharts(r.config, spec.maxSteps, spec.actionSpace.kind === 'discrete' ? spec.actionSpace.n : 0, spec.agents))) for (const c of charts) for (const x of [c.title, ...c.lines.map((l) => l.label)]) names.add(x.toLowerCase());
        for (const q of anyQuotes(`${step.text} ${step.action}`)) if (!NOT_CHARTS.has(q) && !names.has(q.toLowerCase()) && !BADGE_LABELS.has(q)) bad.push(`lesson ${li + 1} step ${si + 1}: '${q}'`);
      });
    });
    expect(bad).toEqual([]);
  });
});

describe("a phone's key chart (under Start while training)", () => {
  it("is the chart of the step's first checked metric that a chart draws, else the success rate", () => {
    const picked: string[] = [];
    LESSONS.lessons.forEach((lesson, li) => {
      lesson.steps.forEach((step, si) => {
        if (isMapCheck(step.check)) return;
        const r = configForSetup(step.setup, presets);
        if (!r.ok) throw new Error(r.problems.join('; '));
        const spec = makeEnv(r.config.env.id, r.config.env.kwargs).spec;
        const specs = dashboardCharts(r.config, spec.maxSteps, spec.actionSpace.kind === 'discrete' ? spec.actionSpace.n : 0, spec.agents);
        const metrics = step.check.all.map((c) => c.metric);
        const chart = keyChart(specs, metrics)!;
        const drawn = Object.values(specs).flat().flatMap((c) => c.lines.map((l) => l.key as string));
        const first = metrics.find((m) => drawn.includes(m));
        if (first) expect(chart.lines.map((l) => l.key as string)).toContain(first);
        else expect(chart.id).toBe('success');
        picked.push(`${li + 1}.${si + 1} ${chart.id}`);
      });
    });
    // Lesson 1 step 1 checks zero-spread groups; lesson 5 step 1 turns per episode (the Episode length chart).
    expect(picked).toContain('1.1 zero-std');
    expect(picked).toContain('5.1 length');
  });

  it('without a lesson, the success rate', () => {
    const r = configForSetup({ preset: 'grid-empty-8x8-grpo', studioMap: false, overrides: [] }, presets);
    if (!r.ok) throw new Error(r.problems.join('; '));
    expect(keyChart(dashboardCharts(r.config, 60, 7))?.id).toBe('success');
  });
});
