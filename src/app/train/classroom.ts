/**
 * Classroom links, TF-Playground style: a link that opens a lesson (or a preset on the Train view)
 * with chosen controls hidden or locked.
 *
 *   #view=lessons&lesson=signal-degeneration&step=2&hide=panel.reward,presets&lock=algo.algo
 *   #view=train&preset=grid-empty-8x8-grpo&algo.lr=0.01&hide=panel.policy&lock=algo.entropyCoef
 *
 * A control is a Train-view field path, `panel.<id>` (a whole panel) or `presets` (the preset
 * list). The classroom part of a link is validated with zod; what is wrong is named and dropped,
 * the rest of the link still applies, and nothing here ever starts training.
 */
import { z } from 'zod';
import { FIELD_BY_PATH, PANELS, getPath, sameValue, type DraftConfig } from './fields.ts';
import { setField } from './config.ts';

/** Every control a link may hide or lock. */
export const CONTROLS: readonly string[] = ['presets', ...PANELS.map((p) => `panel.${p.id}`), ...FIELD_BY_PATH.keys()];
const CONTROL_SET = new Set(CONTROLS);

/** Link keys that belong to the classroom part (and to the lessons view). */
export const CLASSROOM_KEYS = ['hide', 'lock', 'lesson', 'step'] as const;

const control = z.string().refine((c) => CONTROL_SET.has(c), { message: 'is not a control (a field path such as algo.lr, panel.<env|policy|algo|reward|rollout>, or presets)' });

export const ClassroomSchema = z.strictObject({
  hide: z.array(control).max(CONTROLS.length).default([]),
  lock: z.array(control).max(CONTROLS.length).default([]),
});
export type Classroom = z.infer<typeof ClassroomSchema>;

export const NO_CLASSROOM: Classroom = { hide: [], lock: [] };

export interface ParsedLessonLink {
  classroom: Classroom;
  /** `lesson=` (not yet checked against the lesson list). */
  lesson: string | null;
  /** `step=` as a 0-based index. */
  step: number | null;
  problems: string[];
  /** The hash without the classroom keys, for the view's own parser. */
  rest: string;
}

function split(hash: string): [string, string | null][] {
  const body = hash.startsWith('#') ? hash.slice(1) : hash;
  return body
    .split('&')
    .filter(Boolean)
    .map((part) => {
      const eq = part.indexOf('=');
      const dec = (s: string) => {
        try {
          return decodeURIComponent(s);
        } catch {
          return null;
        }
      };
      return [dec(eq < 0 ? part : part.slice(0, eq)) ?? part, dec(eq < 0 ? '' : part.slice(eq + 1))];
    });
}

export function parseClassroomLink(hash: string): ParsedLessonLink {
  const problems: string[] = [];
  const keep: string[] = [];
  const lists: Record<'hide' | 'lock', string[]> = { hide: [], lock: [] };
  let lesson: string | null = null;
  let step: number | null = null;
  const body = hash.startsWith('#') ? hash.slice(1) : hash;
  const rawParts = body.split('&').filter(Boolean);
  split(hash).forEach(([key, value], i) => {
    if (!(CLASSROOM_KEYS as readonly string[]).includes(key)) {
      keep.push(rawParts[i]);
      return;
    }
    if (value === null) {
      problems.push(`could not decode ${JSON.stringify(rawParts[i].slice(0, 60))}`);
      return;
    }
    if (key === 'hide' || key === 'lock') lists[key].push(...value.split(',').map((s) => s.trim()).filter(Boolean));
    else if (key === 'lesson') lesson = value || null;
    else {
      const n = Number(value);
      if (Number.isInteger(n) && n >= 1 && n <= 64) step = n - 1;
      else problems.push(`step=${value.slice(0, 20)} is not a step number (1, 2, …)`);
    }
  });
  // Validate each list; a bad entry is named and dropped, the good ones stay.
  const classroom: Classroom = { hide: [], lock: [] };
  for (const key of ['hide', 'lock'] as const) {
    const r = ClassroomSchema.shape[key].safeParse(lists[key]);
    if (r.success) classroom[key] = [...new Set(r.data)];
    else {
      const bad = new Set(r.error.issues.map((i) => Number(i.path[0])).filter((i) => Number.isInteger(i)));
      for (const i of bad) problems.push(`${key}: ${JSON.stringify(lists[key][i].slice(0, 40))} ${r.error.issues.find((x) => x.path[0] === i)?.message ?? 'is not valid'}`);
      if (bad.size === 0) problems.push(`${key}: ${r.error.issues[0].message}`);
      classroom[key] = [...new Set(lists[key].filter((_, i) => !bad.has(i) && CONTROL_SET.has(lists[key][i])))];
    }
  }
  return { classroom, lesson, step, problems, rest: keep.length ? '#' + keep.join('&') : '' };
}

/** `&hide=…&lock=…` (empty when nothing is hidden or locked). */
export function formatClassroom(c: Classroom): string {
  const enc = (xs: readonly string[]) => xs.map((x) => encodeURIComponent(x)).join(',');
  return (c.hide.length ? `&hide=${enc(c.hide)}` : '') + (c.lock.length ? `&lock=${enc(c.lock)}` : '');
}

/** `#view=lessons&lesson=<id>&step=<n>` plus the classroom part. */
export function formatLessonHash(lesson: string | null, step: number | null, c: Classroom = NO_CLASSROOM): string {
  return '#view=lessons' + (lesson ? `&lesson=${encodeURIComponent(lesson)}` : '') + (lesson && step !== null ? `&step=${step + 1}` : '') + formatClassroom(c);
}

export function isLessonsHash(hash: string): boolean {
  return /(^#?|&)view=lessons(&|$)/.test(hash);
}

/** Whether a control is hidden: itself, or the panel it sits in. */
export function isHidden(c: Classroom, control: string): boolean {
  if (c.hide.includes(control)) return true;
  const f = FIELD_BY_PATH.get(control);
  return !!f && c.hide.includes(`panel.${f.panel}`);
}

export function isLocked(c: Classroom, control: string): boolean {
  if (c.lock.includes(control)) return true;
  const f = FIELD_BY_PATH.get(control);
  return !!f && c.lock.includes(`panel.${f.panel}`);
}

/** A Train-view setup as a hash edit replaces it: the preset, its defaults and the edited form. */
export interface TrainSetup {
  presetId: string;
  base: DraftConfig;
  draft: DraftConfig;
}

/**
 * A hash edit while controls are locked: what was locked keeps its value, the rest of the edit
 * applies. `locks` are the controls locked both before and after the edit (a link that drops its
 * own lock list is the student's choice: hiding and locking are for focus, not security). A
 * changed preset while the preset list is locked refuses the whole edit (another preset replaces
 * every field); a locked field's new value is put back to the current one. `refused` names what
 * was refused, as a person reads it ("the preset", "Learning rate"); empty when nothing was.
 */
export function keepLocked(locks: Classroom, current: TrainSetup, next: TrainSetup): { setup: TrainSetup; refused: string[] } {
  if (isLocked(locks, 'presets') && next.presetId !== current.presetId) return { setup: current, refused: ['the preset'] };
  let draft = next.draft;
  const refused: string[] = [];
  for (const [path, f] of FIELD_BY_PATH) {
    if (!isLocked(locks, path)) continue;
    const was = getPath(current.draft, path);
    if (sameValue(getPath(draft, path), was)) continue;
    draft = setField(draft, path, was);
    refused.push(f.label);
  }
  return { setup: refused.length ? { ...next, draft } : next, refused };
}

/** The notice for a refused hash edit of locked controls. */
export function lockedEditNotice(refused: readonly string[]): string {
  return `Not applied: ${refused.join(', ')} ${refused.length === 1 ? 'is' : 'are'} locked by the link this page was opened with, so ${refused.length === 1 ? 'its' : 'their'} value in the address was put back.`;
}

/** The notice when a locked control is clicked or typed into. */
export function lockedClickNotice(what: string): string {
  return `${what} is locked by the link this page was opened with: it keeps the value the link set and cannot be changed here.`;
}

/** The controls locked both in `a` and in `b` (the locks a hash edit keeps). */
export function commonLocks(a: Classroom, b: Classroom): Classroom {
  return { hide: [], lock: a.lock.filter((c) => b.lock.includes(c)) };
}
