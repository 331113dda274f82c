import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LESSONS } from '../lessons/index.ts';
import { isMapCheck } from '../lessons/schema.ts';
import { draftForSetup } from '../lessons/setup.ts';
import { loadPresets } from './config.ts';
import { setupBlurb, setupChanges } from './presetBlurb.ts';

const presets = loadPresets(readdirSync('presets').map((f) => JSON.parse(readFileSync(`presets/${f}`, 'utf8')) as unknown)).presets;

describe('the setup blurb above the Train tabs', () => {
  it('a preset as written: its own description and no changes', () => {
    const r = draftForSetup({ preset: 'calc-grpo', studioMap: false, overrides: [] }, presets, 'wasm');
    const preset = presets.find((p) => p.id === 'calc-grpo')!;
    expect(setupBlurb(preset, r.base, r.draft)).toEqual({ title: preset.title, text: preset.description, changes: [] });
  });

  // Lesson numbers as the Lessons view lists them: 5 is RLVR vs agentic, 8 the warm start then RL.
  for (const id of ['rlvr-vs-agentic', 'warm-start-then-rl']) {
    it(`${id}: every step's blurb is the step's setup (2-digit, d 48), not calc-grpo's 4-digit d 64 description`, () => {
      const lesson = LESSONS.lessons.find((l) => l.id === id)!;
      for (const step of lesson.steps) {
        if (isMapCheck(step.check)) continue;
        const r = draftForSetup(step.setup, presets, 'wasm');
        const preset = presets.find((p) => p.id === r.presetId)!;
        const b = setupBlurb(preset, r.base, r.draft, step);
        const shown = `${b.title}. ${b.text} ${b.changes.join('; ')}`;
        // calc-grpo's description: "what is 3473 * 1561?", "8 attention heads".
        expect(preset.description).toMatch(/3473 \* 1561/);
        expect(shown).not.toMatch(/3473|8 attention heads/);
        expect(b.text).toBe(step.text);
        expect(b.changes).toContain('Model width d 48 (preset: 64)');
        expect(b.changes).toContain("env maxDigits 2 (preset: the env's default)");
        expect(b.changes).toContain('Warm-start steps 300 (preset: 800)');
      }
    });
  }

  it('lists a field the person changed after the setup, with the preset value', () => {
    const r = draftForSetup({ preset: 'grid-empty-8x8-grpo', studioMap: false, overrides: [['algo.lr', 0.1]] }, presets, 'wasm');
    expect(setupChanges(r.base, r.draft)).toEqual(['Learning rate 0.1 (preset: 0.001)']);
  });
});
