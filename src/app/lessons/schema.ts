/**
 * Lessons as data: each lesson is a short sequence of steps, each step a setup (a preset plus
 * overrides, applied to the Train view's form the way a `#view=train&preset=…&<path>=<value>` link
 * is), an action for the student, and a check on the live iteration metrics that marks the step
 * done by itself. Every lesson file is validated here (zod); a broken one is reported, never thrown.
 */
import { z } from 'zod';
import { FIELD_BY_PATH } from '../train/fields.ts';
import { metricDecl } from '../../core/metrics/lookup.ts';

/**
 * A form field path (fields.ts), an env kwarg (`env.kwargs.<name>`) or a kwarg of the warm start's
 * demonstrator only (`warmStart.envKwargs.<name>`): what a setup may override.
 */
export function isOverridePath(path: string): boolean {
  return (FIELD_BY_PATH.has(path) && path !== 'backend') || /^(env\.kwargs|warmStart\.envKwargs)\.[A-Za-z][A-Za-z0-9_]*$/.test(path);
}

const metricName = z
  .string()
  .regex(/^(it|[a-z_]+(\/[A-Za-z0-9_]+)+)$/, 'must be a metric key such as groups/frac_zero_std (or it, the iteration number from 1)')
  .refine((k) => {
    if (k === 'it') return true;
    const d = metricDecl(k);
    return d !== undefined && (d.stream ?? 'iteration') === 'iteration';
  }, 'is no metric a run logs (the keys are listed in ARCHITECTURE.md, Metric names)');

/** One condition on one metric at one iteration. */
/** Read the mean over the last `window` iterations that report the metric (1 = the iteration's own value): for noisy batch metrics. */
const windowSize = z.number().int().min(1).max(20).optional();

export const ConditionSchema = z.union([
  z.strictObject({
    metric: metricName,
    /** Compare the iteration's value with `value`. */
    op: z.enum(['>=', '<=']),
    value: z.number().finite(),
    window: windowSize,
  }),
  z.strictObject({
    metric: metricName,
    /** Compare with the run's start: the mean over its first BASELINE_ITERATIONS iterations. */
    op: z.enum(['rise', 'fall']),
    by: z.number().finite().positive(),
    window: windowSize,
  }),
]);
export type Condition = z.infer<typeof ConditionSchema>;

export const CheckSchema = z.strictObject({
  /** Every condition holds at the same iteration... */
  all: z.array(ConditionSchema).min(1).max(6),
  /** ...for this many iterations in a row. */
  for: z.number().int().min(1).max(50).default(3),
  /** The streak must be complete by this iteration (from 1); after it the step reads 'missed'. */
  within: z.number().int().min(1).max(10_000).optional(),
  /** The check in words, as the step shows it ("zero-spread groups ≥ 80% for 3 iterations"). */
  says: z.string().min(1).max(200),
});
export type Check = z.infer<typeof CheckSchema>;

const overrideValue = z.union([z.number().finite(), z.boolean(), z.string().max(100), z.array(z.number().int()).max(8)]);

export const SetupSchema = z.strictObject({
  /** A preset id (presets/*.json). */
  preset: z.string().min(1),
  /** Train on the map drawn in the Studio (grid/custom with the map as kwargs), set before the overrides. Default false. */
  studioMap: z.boolean().default(false),
  /** Field path → value, applied in order after the preset (as a link's overrides are). */
  overrides: z
    .array(z.tuple([z.string(), overrideValue]))
    .max(20)
    .default([])
    .superRefine((list, ctx) => {
      list.forEach(([path], i) => {
        if (!isOverridePath(path)) ctx.addIssue({ code: 'custom', path: [i, 0], message: `${JSON.stringify(path)} is not a setting of the Train view (nor env.kwargs.<name>, warmStart.envKwargs.<name>)` });
      });
    }),
});
export type Setup = z.infer<typeof SetupSchema>;

/**
 * A check on the map drawn in the Studio, read live as the student paints: the map's shortest
 * solution and a random agent's success over 100 seeds (the sparse reward it would ever see).
 */
export const MapCheckSchema = z.strictObject({
  map: z.strictObject({
    /** The shortest solution takes at least this many steps (and the map is solvable within its step limit). */
    minSteps: z.number().int().min(1).max(1000),
    /** A random agent reaches the goal in at most this share of 100 episodes. */
    randomSuccessAtMost: z.number().min(0).max(1),
  }),
  /** The check in words, as the step shows it. */
  says: z.string().min(1).max(200),
});
export type MapCheck = z.infer<typeof MapCheckSchema>;

/** True for a check on the Studio's map (its step is done in the Studio, not on the Train view). */
export function isMapCheck(c: Check | MapCheck): c is MapCheck {
  return 'map' in c;
}

export const StepSchema = z.strictObject({
  title: z.string().min(1).max(80),
  /** What is going on and what to watch (a paragraph). */
  text: z.string().min(1).max(1200),
  /** What the student does, in one line ("Press Start"). */
  action: z.string().min(1).max(200),
  /** What the step's button puts on the Train view (a map step opens the Studio and ignores it). */
  setup: SetupSchema,
  check: z.union([CheckSchema, MapCheckSchema]),
});
export type Step = z.infer<typeof StepSchema>;

export const LessonSchema = z.strictObject({
  /** Stable id, used in links and in saved progress. */
  id: z.string().regex(/^[a-z0-9]+(-[a-z0-9]+)*$/, 'must be lowercase words joined by -'),
  title: z.string().min(1).max(80),
  /** One or two sentences: what the lesson shows. */
  summary: z.string().min(1).max(400),
  /** The dashboard badge the lesson is about, if any. */
  badge: z.enum(['outcome', 'exploration', 'signal', 'shift', 'reward']).optional(),
  /** What to take away, shown once every step is done. */
  takeaway: z.string().min(1).max(800),
  steps: z.array(StepSchema).min(1).max(8),
});
export type Lesson = z.infer<typeof LessonSchema>;
/** What a lesson file writes (defaults not yet filled). */
export type LessonInput = z.input<typeof LessonSchema>;

/** Every problem as `<where>: <message>`. */
export function zodMessages(e: z.ZodError, where: string): string[] {
  return e.issues.map((i) => `${where}${i.path.length ? '.' + i.path.join('.') : ''}: ${i.message}`);
}

/** Validates lesson files; the broken ones are reported with every problem, the rest load. */
export function loadLessons(raw: readonly unknown[]): { lessons: Lesson[]; problems: string[] } {
  const lessons: Lesson[] = [];
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const r of raw) {
    const p = LessonSchema.safeParse(r);
    const name = String((r as { id?: unknown } | null)?.id ?? '?');
    if (!p.success) problems.push(...zodMessages(p.error, `lesson ${name}`));
    else if (seen.has(p.data.id)) problems.push(`lesson ${name}: a second lesson with this id`);
    else {
      seen.add(p.data.id);
      lessons.push(p.data);
    }
  }
  return { lessons, problems };
}
