/**
 * What the Train view says about the setup above its tabs (pure: no store, no DOM). A preset's
 * description is true of the preset as written; a lesson step or a link that changes its fields
 * trains something else (lesson 5 trains 2-digit questions on a d 48 model, while calc-grpo's
 * description speaks of 4-digit questions and 8 heads of width 64). So a lesson step's setup is
 * described by the step's own text, and any change from the preset is listed with the preset's value.
 */
import { changedFields } from './config.ts';
import { FIELD_BY_PATH, getPath, sameValue, type DraftConfig } from './fields.ts';

const show = (v: unknown): string => (v === undefined ? "the env's default" : Array.isArray(v) ? v.join(', ') : String(v));

/** Each field and env kwarg the draft sets differently from the preset: "Model width d 48 (preset: 64)". */
export function setupChanges(base: DraftConfig, draft: DraftConfig): string[] {
  const fields = changedFields(base, draft)
    .filter((p) => p !== 'backend' && !p.startsWith('env.'))
    .map((p) => `${FIELD_BY_PATH.get(p)?.label ?? p} ${show(getPath(draft, p))} (preset: ${show(getPath(base, p))})`);
  // Env kwargs only while the env is the preset's own (another env is named as a whole).
  if (draft.env.id !== base.env.id) return fields;
  const bk = (base.env.kwargs ?? {}) as Record<string, unknown>;
  const dk = (draft.env.kwargs ?? {}) as Record<string, unknown>;
  const kwargs = Object.keys(dk)
    .filter((k) => !sameValue(bk[k], dk[k]))
    .map((k) => `env ${k} ${show(dk[k])} (preset: ${show(bk[k])})`);
  return [...kwargs, ...fields];
}

export interface SetupBlurb {
  /** Bold lead: the preset's title, or the lesson step's. */
  title: string;
  /** The preset's description, or the lesson step's text. */
  text: string;
  /** What differs from the preset (empty: the preset as written). */
  changes: string[];
}

/** The blurb for a preset's draft; with `step` (a lesson step set up on the view) the step's setup. */
export function setupBlurb(preset: { title: string; description: string }, base: DraftConfig, draft: DraftConfig, step?: { title: string; text: string }): SetupBlurb {
  const changes = setupChanges(base, draft);
  if (step) return { title: `This lesson step: ${step.title}`, text: step.text, changes };
  return { title: preset.title, text: preset.description, changes };
}
