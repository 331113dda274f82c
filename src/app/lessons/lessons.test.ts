/** The lesson files: every one validates, and every step's setup makes a valid run config. */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadPresets } from '../train/config.ts';
import { LESSON_FILES, LESSONS } from './index.ts';
import { loadLessons } from './schema.ts';
import { configForSetup } from './setup.ts';

const presets = loadPresets(readdirSync('presets').map((f) => JSON.parse(readFileSync(`presets/${f}`, 'utf8')) as unknown)).presets;

describe('lessons', () => {
  it('every lesson file validates, with a distinct id', () => {
    expect(LESSONS.problems).toEqual([]);
    expect(LESSONS.lessons.length).toBe(LESSON_FILES.length);
    expect(LESSONS.lessons.map((l) => l.id)).toEqual(['sparse-vs-shaped', 'exploration-collapse', 'signal-degeneration', 'shift-staleness', 'rlvr-vs-agentic', 'grpo-vs-ppo', 'reward-hacking', 'warm-start-then-rl', 'design-the-room', 'sharpening-or-discovery', 'rl-learns-what-imitation-cannot', 'over-the-wire']);
  });

  for (const lesson of LESSONS.lessons) {
    for (const [i, step] of lesson.steps.entries()) {
      it(`${lesson.id} step ${i + 1}: the setup is a valid run config`, () => {
        const r = configForSetup(step.setup, presets);
        expect(r.ok ? [] : r.problems).toEqual([]);
      });
    }
  }

  it('a broken lesson is reported with every problem and where, and the others still load', () => {
    const good = LESSON_FILES[0];
    const bad = { id: 'Bad Id', title: '', summary: 's', takeaway: 't', steps: [{ title: 't', text: 't', action: 'a', setup: { preset: 'p', overrides: [['algo.nope', 1]] }, check: { all: [], says: 'x' } }] };
    const r = loadLessons([good, bad, good]);
    expect(r.lessons.length).toBe(1);
    expect(r.problems.join('\n')).toMatch(/lesson Bad Id\.id: must be lowercase/);
    expect(r.problems.join('\n')).toMatch(/lesson Bad Id\.steps\.0\.setup\.overrides\.0\.0: "algo\.nope" is not a setting/);
    expect(r.problems.join('\n')).toMatch(/lesson Bad Id\.steps\.0\.check\.all/);
    expect(r.problems.join('\n')).toMatch(/a second lesson with this id/);
  });

  it('an unknown preset or an out-of-range override is named', () => {
    const r = configForSetup({ preset: 'nope', studioMap: false, overrides: [['algo.lr', 5]] }, presets);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problems.join('; ')).toMatch(/no preset "nope".*algo\.lr/);
  });
});
