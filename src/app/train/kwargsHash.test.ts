/** Env kwargs travel in the Train view's link (`env.kwargs.<name>=<value>`), as lesson setups set them. */
import { describe, expect, it } from 'vitest';
import '../../core/envs/index.ts';
import emptyPreset from '../../../presets/grid-empty-8x8-grpo.json';
import { draftFromHash, draftFromPreset, formatTrainHash, loadPresets, parseTrainHash, setField, validate } from './config.ts';

const { presets } = loadPresets([emptyPreset]);

describe('env kwargs in the train hash', () => {
  it('round-trip: only kwargs that differ from the preset are written, and they parse back', () => {
    const base = draftFromPreset(presets[0], 'wasm');
    const d = setField(setField(base, 'env.kwargs.maxSteps', 100), 'algo.lr', 0.01);
    const hash = formatTrainHash(presets[0].id, base, d);
    expect(hash).toBe('#view=train&preset=grid-empty-8x8-grpo&algo.lr=0.01&env.kwargs.maxSteps=100');
    const back = draftFromHash(parseTrainHash(hash), presets, 'wasm');
    expect(back.problems).toEqual([]);
    expect(back.draft.env.kwargs).toEqual({ maxSteps: 100 });
    expect(validate(back.draft).ok).toBe(true);
    expect(formatTrainHash(presets[0].id, base, base)).toBe('#view=train&preset=grid-empty-8x8-grpo');
  });
  it('a kwarg the env does not take is named by validation, not dropped silently', () => {
    const r = draftFromHash(parseTrainHash('#view=train&preset=grid-empty-8x8-grpo&env.kwargs.maxSteps=abc&env.kwargs.bogus=1'), presets, 'wasm');
    const v = validate(r.draft);
    expect(v.ok).toBe(false);
    if (!v.ok) expect([...Object.values(v.byField).flat(), ...v.other].join(' ')).toMatch(/maxSteps|bogus/);
  });
});
