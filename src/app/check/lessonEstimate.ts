/**
 * The device check's lesson estimate, pure: which distinct run shapes the lessons use, and, from a
 * few measured iterations of each shape, how long each lesson takes on this device.
 *
 * A lesson's time = Σ over its steps of (setup s + warm-start steps × s per warm-start step +
 * the step's iterations × the shape's median s per iteration). The range uses the fastest and the
 * slowest measured iteration instead of the median.
 */
import type { RunConfig } from '../../core/presets/schema.ts';
import type { Lesson } from '../lessons/schema.ts';
import type { Preset } from '../train/config.ts';
import { configForSetup } from '../lessons/setup.ts';
import { remoteAddresses } from '../train/remoteConsent.ts';

/** A lesson whose estimate is at most this many seconds is "ready"; above it, "slow" (3 minutes: one lesson in a class hour of several). */
export const READY_S = 180;
/** Spread (max − min) / median of the iteration times above which the page warns that the figures are unsteady. */
export const UNSTEADY_SPREAD = 0.5;

export interface PlannedStep {
  lesson: number;
  lessonId: string;
  lessonTitle: string;
  step: number;
  /** The step's own iterations (what Start runs). */
  iterations: number;
  /** Imitation warm-start steps before RL (0: none). */
  warmSteps: number;
  shape: string;
  /** The OpenEnv server a remote env step plays against (null: the env runs in the page). Not timed: the check cannot know that server is up, and must not connect to one unasked. */
  server: string | null;
}

export interface Shape {
  key: string;
  /** The first step's config with this shape: the one the check times. */
  config: RunConfig;
  /** "lesson 1 step 1" style label of that first step. */
  from: string;
  /** Short description: env, model, algorithm, episodes. */
  label: string;
}

export interface LessonPlan {
  steps: PlannedStep[];
  shapes: Shape[];
  /** Steps whose setup does not resolve (a lesson/preset mismatch), one message each. */
  problems: string[];
}

/**
 * What costs time per iteration: the env and its episode/turn limits, the model, the algorithm
 * with its epochs and dynamic sampling (resampling rounds multiply the rollouts), the rollout plan.
 * Not learning rates, coefficients, reward terms or shaping, the seed or the iteration count: they
 * change what is learned, not the work per iteration (reward terms score each step in a sandbox,
 * a small share of a grid step's policy call).
 */
export function shapeKey(c: RunConfig): string {
  const kw = (c.env.kwargs ?? {}) as Record<string, unknown>;
  const a = c.algo as unknown as Record<string, unknown>;
  return JSON.stringify({
    env: c.env.id,
    maxSteps: kw.maxSteps ?? null,
    maxTurns: kw.maxTurns ?? null,
    map: kw.map ?? null,
    model: c.model,
    algo: a.algo,
    epochs: a.updateEpochs ?? null,
    dynamic: a.dynamicSampling ?? null,
    rollout: c.rollout,
  });
}

function shapeLabel(c: RunConfig): string {
  const r = c.rollout as { episodes?: number; mode?: string; workers?: number };
  const kw = c.env.kwargs as Record<string, unknown> | undefined;
  const bits = [c.env.id, c.model.kind, c.algo.algo, `${r.episodes ?? '?'} episodes`];
  if (kw && typeof kw.maxSteps === 'number') bits.push(`${kw.maxSteps} steps max`);
  if (kw && typeof kw.maxTurns === 'number') bits.push(`${kw.maxTurns} turn(s) max`);
  const ds = (c.algo as unknown as { dynamicSampling?: { enabled?: boolean; maxRounds?: number } }).dynamicSampling;
  if (ds?.enabled) bits.push(`dynamic sampling (≤ ${ds.maxRounds} rounds)`);
  if (r.mode === 'async') bits.push(`async, ${r.workers} rollout worker(s)`);
  return bits.join(' · ');
}

export function planLessons(lessons: readonly Lesson[], presets: readonly Preset[]): LessonPlan {
  const steps: PlannedStep[] = [];
  const shapes = new Map<string, Shape>();
  const problems: string[] = [];
  lessons.forEach((l, i) =>
    l.steps.forEach((s, j) => {
      const r = configForSetup(s.setup, presets);
      if (!r.ok) {
        problems.push(`lesson ${i + 1} step ${j + 1}: ${r.problems.join('; ')}`);
        return;
      }
      const key = shapeKey(r.config);
      const server = remoteAddresses(r.config)[0] ?? null;
      if (!shapes.has(key) && server === null) shapes.set(key, { key, config: r.config, from: `lesson ${i + 1} step ${j + 1}`, label: shapeLabel(r.config) });
      steps.push({ lesson: i + 1, lessonId: l.id, lessonTitle: l.title, step: j + 1, iterations: r.config.iterations, warmSteps: r.config.warmStart?.steps ?? 0, shape: key, server });
    }),
  );
  return { steps, shapes: [...shapes.values()], problems };
}

/** Median, min and max of a non-empty sample. */
export function spread(xs: readonly number[]): { median: number; min: number; max: number } {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  return { median: m, min: s[0], max: s[s.length - 1] };
}

/** What the check measured for one shape. */
export interface ShapeTiming {
  /** Seconds per RL iteration, one per measured iteration. */
  iterS: number[];
  /** Seconds to build the run (runtime load on the first shape, sessions), warm-start steps excluded. */
  setupS: number;
  /** Seconds per imitation warm-start step (0 when the shape has no warm start). */
  warmStepS: number;
}

export interface LessonEstimate {
  lesson: number;
  lessonId: string;
  title: string;
  /** Estimated seconds with the median iteration; null when a shape of it was not measured. */
  seconds: number | null;
  low: number | null;
  high: number | null;
  /** 'untimed': a setup of it was not reached within the check's 30 s (the laptop is busy or slow); 'server': it plays an env over the wire, from a server the check does not contact. */
  verdict: 'ready' | 'slow' | 'untimed' | 'server';
  /** The line the page prints. */
  line: string;
  /** True when a shape of this lesson had a spread above UNSTEADY_SPREAD. */
  unsteady: boolean;
}

/** "40 s", "4 minutes", "1.5 minutes". */
export function formatDuration(s: number): string {
  if (s < 90) return `${Math.max(1, Math.round(s))} s`;
  const m = s / 60;
  return `${m < 10 ? Math.round(m * 2) / 2 : Math.round(m)} minutes`;
}

export function estimateLessons(plan: LessonPlan, timings: ReadonlyMap<string, ShapeTiming>): LessonEstimate[] {
  const byLesson = new Map<number, PlannedStep[]>();
  for (const s of plan.steps) byLesson.set(s.lesson, [...(byLesson.get(s.lesson) ?? []), s]);
  return [...byLesson.entries()].map(([lesson, steps]) => {
    const first = steps[0];
    let mid = 0;
    let low = 0;
    let high = 0;
    let unsteady = false;
    // One estimate object per lesson; a lesson the check gives no figure for (played over the wire, or a setup not reached in time) keeps the figures null.
    const made = (verdict: LessonEstimate['verdict'], line: string, figures: Pick<LessonEstimate, 'seconds' | 'low' | 'high' | 'unsteady'> = { seconds: null, low: null, high: null, unsteady: false }): LessonEstimate => ({
      lesson,
      lessonId: first.lessonId,
      title: first.lessonTitle,
      ...figures,
      verdict,
      line,
    });
    const served = steps.find((s) => s.server !== null);
    if (served) return made('server', `needs a server: lesson ${lesson} plays its env over the wire from ${served.server} (start npm run serve on the machine it names before class); not timed here`);
    for (const s of steps) {
      const t = timings.get(s.shape);
      if (!t || t.iterS.length === 0) return made('untimed', `not timed: lesson ${lesson} (step ${s.step}'s setup was not reached within 30 s: this laptop is busy or slow; close other programs and run again)`);
      const sp = spread(t.iterS);
      if (sp.median > 0 && (sp.max - sp.min) / sp.median > UNSTEADY_SPREAD) unsteady = true;
      const fixed = t.setupS + s.warmSteps * t.warmStepS;
      mid += fixed + s.iterations * sp.median;
      low += fixed + s.iterations * sp.min;
      high += fixed + s.iterations * sp.max;
    }
    const ready = mid <= READY_S;
    const line = ready ? `ready: lesson ${lesson} takes about ${formatDuration(mid)} here` : `slow: lesson ${lesson} needs about ${formatDuration(mid)}`;
    return made(ready ? 'ready' : 'slow', line, { seconds: mid, low, high, unsteady });
  });
}
