import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { loadPresets } from '../../train/config.ts';
import { presetsFor } from './train.ts';

const raw = readdirSync('presets').filter((f) => f.endsWith('.json')).map((f) => JSON.parse(readFileSync(`presets/${f}`, 'utf8')) as unknown);

describe('presets offered to train a code env', () => {
  it('grid: the plain MLP presets (GRPO on the empty room first), none that reads a built-in grid’s state or needs two agents', () => {
    const ids = presetsFor(loadPresets(raw).presets, 'grid').map((p) => p.id);
    expect(ids).toContain('grid-empty-8x8-grpo');
    expect(ids).toContain('grid-door-key-ppo');
    for (const no of ['grid-empty-8x8-potential', 'grid-coop-switch-shared', 'grid-door-key-pipeline', 'calc-grpo']) expect(ids).not.toContain(no);
  });
});
