/**
 * "Train on this map": the Train view's link for a preset's algorithm and policy with the env set
 * to the map (`env.id=grid/custom&env.kwargs.map=…`), so the run's config, its link and the
 * runs list all carry the map, and every trainer takes it like a built-in env.
 */
import { DEFAULT_MAP_PRESET, mapToKwargs, type GridMap } from '../../../core/envs/grid/mapSpec.ts';
import { familyOfEnvId } from '../../../core/envs/families.ts';
import { draftFromPreset, formatTrainHash, type Preset } from '../../train/config.ts';
import type { DraftConfig } from '../../train/fields.ts';

/**
 * Presets whose algorithm and policy fit any one-agent grid map: MLP, one stage, no env kwargs of
 * their own, a one-agent grid env. The map default (DEFAULT_MAP_PRESET, the CLI's too) comes
 * first, so the Studio's picker starts on it.
 */
export function mapPresets(presets: readonly Preset[]): Preset[] {
  const fit = presets.filter((p) => {
    const c = p.config;
    return c.model.kind === 'mlp' && !(c.stages?.length) && Object.keys(c.env.kwargs).length === 0 && familyOfEnvId(c.env.id)?.observation === 'grid' && c.env.id !== 'grid/switch-door';
  });
  return [...fit.filter((p) => p.id === DEFAULT_MAP_PRESET), ...fit.filter((p) => p.id !== DEFAULT_MAP_PRESET)];
}

/** The `#view=train&…` link that trains `preset`'s setup on `map`. */
export function trainHashForMap(preset: Preset, map: GridMap, backend: DraftConfig['backend'] = 'auto'): string {
  const base = draftFromPreset(preset, backend);
  const draft: DraftConfig = { ...base, env: { id: 'grid/custom', kwargs: mapToKwargs(map) } };
  return formatTrainHash(preset.id, base, draft);
}
