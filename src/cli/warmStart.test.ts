/**
 * The shipped warm starts in public/warm-start/ are current: each file's key is the key of a
 * preset's or a lesson step's config as they parse today, so a change to the config schema, a
 * preset or a lesson (which changes the key, and silently turns the file into dead weight while
 * the tab trains the warm start again) fails here, naming the command that makes it again.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LESSONS } from '../app/lessons/index.ts';
import { configForSetup } from '../app/lessons/setup.ts';
import { loadPresets } from '../app/train/config.ts';
import { WARM_START_DIR, warmStartFileName, warmStartKey, type WarmStartFile } from '../core/trainer/warmStartCache.ts';
import { loadRunConfig, PRESET_DIR, presetIds } from './presets.ts';

const DIR = join('public', WARM_START_DIR);

/** Every key a shipped file may have: each preset's, each lesson step's, with the command that makes it. */
function wantedKeys(): Map<string, string> {
  const out = new Map<string, string>();
  for (const id of presetIds()) {
    const key = warmStartKey(loadRunConfig(id));
    if (key !== null) out.set(key, `npm run warm-start -- --config ${id}`);
  }
  const presets = loadPresets(readdirSync(PRESET_DIR).filter((f) => f.endsWith('.json')).map((f) => JSON.parse(readFileSync(join(PRESET_DIR, f), 'utf8')) as unknown)).presets;
  for (const lesson of LESSONS.lessons) {
    for (const step of lesson.steps) {
      const r = configForSetup(step.setup, presets);
      const key = r.ok ? warmStartKey(r.config) : null;
      if (key !== null && !out.has(key)) out.set(key, `npm run warm-start -- --lesson ${lesson.id}`);
    }
  }
  return out;
}

describe('shipped warm starts', () => {
  const files = readdirSync(DIR).filter((f) => f.endsWith('.json'));
  const wanted = wantedKeys();

  it('each file is named by its key and trained for a config a preset or lesson has today', () => {
    const stale: string[] = [];
    for (const f of files) {
      const file = JSON.parse(readFileSync(join(DIR, f), 'utf8')) as WarmStartFile;
      expect(warmStartFileName(file.key), f).toBe(f);
      if (!wanted.has(file.key)) stale.push(`${f}: no preset or lesson step has its config any more (delete it, and make the current one with npm run warm-start)`);
    }
    expect(stale).toEqual([]);
  });

  it('calc-grpo and the lessons on sharpening and discovery ship theirs (the tab starts RL within seconds on them)', () => {
    const names = new Set(files);
    const shipped = ['--config calc-grpo', '--config flaky-stop-discovery', '--lesson sharpening-or-discovery', '--lesson rl-learns-what-imitation-cannot'];
    const missing = [...wanted].filter(([key, command]) => shipped.some((s) => command.endsWith(s)) && !names.has(warmStartFileName(key))).map(([, command]) => command);
    expect(missing).toEqual([]);
  });
});
