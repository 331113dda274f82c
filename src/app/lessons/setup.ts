/**
 * A step's setup becomes the Train view's form exactly as a link does: the preset, then each
 * override in order through setField (so `algo.algo` swaps in that algorithm's defaults first).
 */
import { draftFromHash, validate, type Preset } from '../train/config.ts';
import type { DraftConfig } from '../train/fields.ts';
import type { RunConfig } from '../../core/presets/schema.ts';
import type { Setup } from './schema.ts';
import { EXAMPLE_MAPS } from '../../core/envs/grid/exampleMaps.ts';
import { mapToKwargs, type GridMap } from '../../core/envs/grid/mapSpec.ts';

/**
 * The overrides a setup applies: with `studioMap`, the env becomes the given map (the Studio's;
 * the first example map where there is none, as in tests and classroom links) before the step's own.
 */
function overridesOf(setup: Setup, map: GridMap): [string, unknown][] {
  if (!setup.studioMap) return setup.overrides;
  const env: [string, unknown][] = [['env.id', 'grid/custom'], ...Object.entries(mapToKwargs(map)).map(([k, v]): [string, unknown] => [`env.kwargs.${k}`, v])];
  return [...env, ...setup.overrides];
}

export function draftForSetup(setup: Setup, presets: readonly Preset[], backend: DraftConfig['backend'], map: GridMap = EXAMPLE_MAPS[0].map): ReturnType<typeof draftFromHash> {
  return draftFromHash({ presetId: setup.preset, backend: null, overrides: overridesOf(setup, map), problems: [] }, presets, backend);
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
