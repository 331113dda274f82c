import { describe, expect, it } from 'vitest';
import '../../../core/envs/index.ts';
import { EXAMPLE_MAPS } from '../../../core/envs/grid/exampleMaps.ts';
import { mapToKwargs } from '../../../core/envs/grid/mapSpec.ts';
import { draftFromHash, loadPresets, parseTrainHash, validate } from '../../train/config.ts';
import { mapPresets, trainHashForMap } from './trainLink.ts';

const raw = Object.values(import.meta.glob('../../../../presets/*.json', { eager: true, import: 'default' }));
const { presets } = loadPresets(raw);

describe('train on a map', () => {
  it('offers the one-agent grid MLP presets, GRPO among them', () => {
    const ids = mapPresets(presets).map((p) => p.id);
    expect(ids).toContain('grid-empty-8x8-grpo');
    expect(ids).toContain('grid-door-key-ppo');
    expect(ids).not.toContain('grid-door-key-pipeline');
    expect(ids).not.toContain('grid-coop-switch-shared');
    expect(ids).not.toContain('calc-grpo');
  });

  it("starts on the CLI's map preset (GRPO + potential shaping), so the tab and npm run train -- --env-file agree", async () => {
    const { DEFAULT_MAP_PRESET } = await import('../../../cli/envFile.ts');
    expect(mapPresets(presets)[0].id).toBe(DEFAULT_MAP_PRESET);
    expect(mapPresets(presets)[0].config.shaping.potential.weight).toBeGreaterThan(0);
  });

  it.each(mapPresets(presets).map((p) => [p.id, p] as const))('%s: the link opens a valid draft on the map with the preset’s algorithm', (_id, preset) => {
    const map = EXAMPLE_MAPS[0].map;
    const hash = trainHashForMap(preset, map);
    const r = draftFromHash(parseTrainHash(hash), presets, 'auto');
    expect(r.problems).toEqual([]);
    expect(r.presetId).toBe(preset.id);
    expect(r.draft.env).toEqual({ id: 'grid/custom', kwargs: mapToKwargs(map) });
    expect(r.draft.algo).toEqual(preset.config.algo);
    expect(validate(r.draft).ok).toBe(true);
  });
});

describe('leaving the map for another env on the Train view', () => {
  it('keeps only the kwargs the new env reads, so Start is not blocked by the map', async () => {
    const { setField } = await import('../../train/config.ts');
    const preset = mapPresets(presets)[0];
    const r = draftFromHash(parseTrainHash(trainHashForMap(preset, EXAMPLE_MAPS[0].map)), presets, 'auto');
    const back = setField(r.draft, 'env.id', 'grid/empty-8x8');
    expect(back.env).toEqual({ id: 'grid/empty-8x8', kwargs: { maxSteps: 100, viewSize: 7 } });
    expect(validate(back).ok).toBe(true);
  });
});
