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
import { dashboardCharts } from '../train/Dashboard.tsx';
import { LESSONS } from './index.ts';
import { configForSetup } from './setup.ts';

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
