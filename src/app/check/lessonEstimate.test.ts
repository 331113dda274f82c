import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { LESSONS } from '../lessons/index.ts';
import { loadPresets } from '../train/config.ts';
import { estimateLessons, formatDuration, planLessons, READY_S, shapeKey, spread, type ShapeTiming } from './lessonEstimate.ts';

const presets = loadPresets(readdirSync('presets').filter((f) => f.endsWith('.json')).map((f) => JSON.parse(readFileSync(`presets/${f}`, 'utf8')))).presets;
const plan = planLessons(LESSONS.lessons, presets);

describe('lesson plan', () => {
  it('covers every step of every lesson, with fewer distinct shapes than steps', () => {
    expect(plan.problems).toEqual([]);
    expect(plan.steps.length).toBe(LESSONS.lessons.reduce((n, l) => n + l.steps.length, 0));
    expect(plan.shapes.length).toBeLessThan(plan.steps.length);
    // Every step's shape is one the check times, except a step whose env is on a server.
    for (const s of plan.steps) expect(plan.shapes.map((x) => x.key).includes(s.shape), `lesson ${s.lesson} step ${s.step}`).toBe(s.server === null);
  });

  it('a lesson played over the wire is named with its server, not timed (the check contacts no server)', () => {
    const wired = plan.steps.filter((s) => s.server !== null);
    expect(wired.length).toBeGreaterThan(0);
    const timings = new Map<string, ShapeTiming>(plan.shapes.map((s) => [s.key, { iterS: [1], setupS: 1, warmStepS: 0 }]));
    for (const e of estimateLessons(plan, timings).filter((x) => wired.some((w) => w.lesson === x.lesson))) {
      expect(e.verdict).toBe('server');
      expect(e.seconds).toBeNull();
      expect(e.line).toMatch(new RegExp(`^needs a server: lesson ${e.lesson} plays its env over the wire from ws://`));
    }
  });

  it('a learning-rate or entropy change keeps the shape; more episodes, a longer episode or PPO does not', () => {
    const c = presets.find((p) => p.id === 'grid-empty-8x8-grpo')!.config;
    expect(shapeKey({ ...c, algo: { ...c.algo, lr: 0.1, entropyCoef: 0 } })).toBe(shapeKey(c));
    expect(shapeKey({ ...c, iterations: 7, seed: 9 })).toBe(shapeKey(c));
    expect(shapeKey({ ...c, rollout: { ...c.rollout, episodes: 64 } })).not.toBe(shapeKey(c));
    expect(shapeKey({ ...c, env: { ...c.env, kwargs: { maxSteps: 60 } } })).not.toBe(shapeKey(c));
  });
});

describe('lesson estimate', () => {
  it('sums setup + warm-start steps + iterations × median per step, with a range from min and max', () => {
    const timings = new Map<string, ShapeTiming>(plan.shapes.map((s) => [s.key, { iterS: [0.5, 1, 3], setupS: 2, warmStepS: 0.1 }]));
    const est = estimateLessons(plan, timings);
    expect(est).toHaveLength(LESSONS.lessons.length);
    for (const e of est.filter((x) => x.verdict !== 'server')) {
      const steps = plan.steps.filter((s) => s.lesson === e.lesson);
      const fixed = steps.reduce((t, s) => t + 2 + 0.1 * s.warmSteps, 0);
      const its = steps.reduce((t, s) => t + s.iterations, 0);
      expect(e.seconds).toBeCloseTo(fixed + its * 1, 6);
      expect(e.low).toBeCloseTo(fixed + its * 0.5, 6);
      expect(e.high).toBeCloseTo(fixed + its * 3, 6);
      expect(e.unsteady).toBe(true); // (3 − 0.5) / 1 > 0.5
      expect(e.verdict).toBe(e.seconds! <= READY_S ? 'ready' : 'slow');
      expect(e.line).toBe(e.verdict === 'ready' ? `ready: lesson ${e.lesson} takes about ${formatDuration(e.seconds!)} here` : `slow: lesson ${e.lesson} needs about ${formatDuration(e.seconds!)}`);
    }
  });

  it('lesson 8 (calculator warm start, 300 imitation steps + 60 iterations) at 0.2 s per step and 2 s per iteration: slow, about 3 minutes', () => {
    const l8 = plan.steps.filter((s) => s.lessonId === 'warm-start-then-rl');
    expect(l8.map((s) => [s.iterations, s.warmSteps])).toEqual([[60, 300]]);
    const timings = new Map<string, ShapeTiming>([[l8[0].shape, { iterS: [2, 2], setupS: 1, warmStepS: 0.2 }]]);
    const e = estimateLessons(plan, timings).find((x) => x.lessonId === 'warm-start-then-rl')!;
    expect(e.seconds).toBeCloseTo(1 + 60 + 120, 6);
    expect(e.line).toBe('slow: lesson 8 needs about 3 minutes');
  });

  it('a lesson whose setup was not timed says so instead of guessing', () => {
    const e = estimateLessons(plan, new Map());
    expect(e.every((x) => (x.verdict === 'untimed' || x.verdict === 'server') && x.seconds === null)).toBe(true);
    expect(e.filter((x) => x.verdict === 'untimed').length).toBe(e.length - new Set(plan.steps.filter((s) => s.server !== null).map((s) => s.lesson)).size);
    expect(e[0].line).toMatch(/^not timed: lesson 1 /);
  });

  it('spread and durations', () => {
    expect(spread([3, 1, 2])).toEqual({ median: 2, min: 1, max: 3 });
    expect(spread([1, 4])).toEqual({ median: 2.5, min: 1, max: 4 });
    expect(formatDuration(40.4)).toBe('40 s');
    expect(formatDuration(240)).toBe('4 minutes');
    expect(formatDuration(100)).toBe('1.5 minutes');
  });
});
