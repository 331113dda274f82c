/**
 * A step's setup becomes the Train view's form exactly as a link does: the preset, then each
 * override in order through setField (so `algo.algo` swaps in that algorithm's defaults first).
 */
import { draftFromHash, validate, type Preset } from '../train/config.ts';
import type { DraftConfig } from '../train/fields.ts';
import type { RunConfig } from '../../core/presets/schema.ts';
import type { Setup } from './schema.ts';

export function draftForSetup(setup: Setup, presets: readonly Preset[], backend: DraftConfig['backend']): ReturnType<typeof draftFromHash> {
  return draftFromHash({ presetId: setup.preset, backend: null, overrides: setup.overrides, problems: [] }, presets, backend);
}

/** The setup's run config, or every problem (an unknown preset, a value out of bounds). */
export function configForSetup(setup: Setup, presets: readonly Preset[]): { ok: true; config: RunConfig } | { ok: false; problems: string[] } {
  const r = draftForSetup(setup, presets, 'wasm');
  const v = validate(r.draft);
  const problems = [...r.problems];
  if (!v.ok) problems.push(...Object.entries(v.byField).flatMap(([p, ms]) => ms.map((m) => `${p}: ${m}`)), ...v.other);
  if (!v.ok || problems.length > 0) return { ok: false, problems };
  return { ok: true, config: v.config };
}
