/**
 * Lesson progress across reloads (localStorage): which steps each lesson has done, and where the
 * student was. Read through zod: a damaged or foreign entry is reported and replaced, never thrown.
 */
import { z } from 'zod';

export const PROGRESS_KEY = 'arl-playground.lessons.v1';

const ProgressSchema = z.strictObject({
  /** Lesson id → indices (0-based) of its steps whose check was reached. */
  done: z.record(z.string(), z.array(z.number().int().min(0).max(63))),
  /** The lesson and step the student last had open. */
  current: z.strictObject({ lesson: z.string(), step: z.number().int().min(0).max(63) }).nullable(),
});
export type Progress = z.infer<typeof ProgressSchema>;

export const EMPTY_PROGRESS: Progress = { done: {}, current: null };

/** The saved progress, or empty with a problem when what is saved cannot be read. */
export function readProgress(storage: Pick<Storage, 'getItem'> | null): { progress: Progress; problem: string | null } {
  let raw: string | null;
  try {
    raw = storage?.getItem(PROGRESS_KEY) ?? null;
  } catch {
    return { progress: EMPTY_PROGRESS, problem: 'this browser does not let the page read its storage, so lesson progress is not kept' };
  }
  if (raw === null) return { progress: EMPTY_PROGRESS, problem: null };
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return { progress: EMPTY_PROGRESS, problem: 'the saved lesson progress is not valid JSON; starting afresh' };
  }
  const p = ProgressSchema.safeParse(json);
  if (!p.success) return { progress: EMPTY_PROGRESS, problem: `the saved lesson progress is damaged (${p.error.issues[0].path.join('.') || 'root'}: ${p.error.issues[0].message}); starting afresh` };
  return { progress: p.data, problem: null };
}

/** Saves; false when the storage refused (private mode, full). */
export function writeProgress(storage: Pick<Storage, 'setItem'> | null, p: Progress): boolean {
  try {
    storage?.setItem(PROGRESS_KEY, JSON.stringify(p));
    return !!storage;
  } catch {
    return false;
  }
}

export function markDone(p: Progress, lesson: string, step: number): Progress {
  const had = p.done[lesson] ?? [];
  if (had.includes(step)) return p;
  return { ...p, done: { ...p.done, [lesson]: [...had, step].sort((a, b) => a - b) } };
}

export function isDone(p: Progress, lesson: string, step: number): boolean {
  return (p.done[lesson] ?? []).includes(step);
}

export function forgetLesson(p: Progress, lesson: string): Progress {
  const { [lesson]: _gone, ...done } = p.done;
  return { ...p, done };
}
