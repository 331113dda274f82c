import { describe, expect, it } from 'vitest';
import { commonLocks, CONTROLS, formatLessonHash, isHidden, isLessonsHash, isLocked, keepLocked, lockedEditNotice, NO_CLASSROOM, parseClassroomLink } from './classroom.ts';
import '../../core/envs/index.ts';
import emptyPreset from '../../../presets/grid-empty-8x8-grpo.json';
import ppoPreset from '../../../presets/grid-door-key-ppo.json';
import { draftFromHash, loadPresets, parseTrainHash } from './config.ts';
import { getPath } from './fields.ts';
import { EMPTY_PROGRESS, forgetLesson, isDone, markDone, PROGRESS_KEY, readProgress, writeProgress } from '../lessons/progress.ts';

describe('classroom links', () => {
  it('parse hide/lock/lesson/step and hand the rest of the link back untouched', () => {
    const r = parseClassroomLink('#view=train&preset=grid-empty-8x8-grpo&algo.lr=0.01&hide=panel.reward,presets&lock=algo.entropyCoef');
    expect(r.problems).toEqual([]);
    expect(r.classroom).toEqual({ hide: ['panel.reward', 'presets'], lock: ['algo.entropyCoef'] });
    expect(r.rest).toBe('#view=train&preset=grid-empty-8x8-grpo&algo.lr=0.01');
    const l = parseClassroomLink('#view=lessons&lesson=signal-degeneration&step=2');
    expect([l.lesson, l.step]).toEqual(['signal-degeneration', 1]);
  });

  it('a bad control or step is named and dropped; the good ones stay', () => {
    const r = parseClassroomLink('#view=lessons&lesson=x&step=zero&hide=algo.lr,rm%20-rf,panel.nope&lock=presets');
    expect(r.classroom).toEqual({ hide: ['algo.lr'], lock: ['presets'] });
    expect(r.problems).toHaveLength(3);
    expect(r.problems.join('\n')).toMatch(/step=zero is not a step number/);
    expect(r.problems.join('\n')).toMatch(/hide: "rm -rf" is not a control/);
    expect(r.problems.join('\n')).toMatch(/hide: "panel.nope" is not a control/);
    expect(parseClassroomLink('#hide=%E0%A4%A').problems[0]).toMatch(/could not decode/);
  });

  it('format → parse round-trips; panels hide and lock their fields', () => {
    const c = { hide: ['panel.reward', 'presets'], lock: ['algo.algo'] };
    const h = formatLessonHash('grpo-vs-ppo', 1, c);
    expect(h).toBe('#view=lessons&lesson=grpo-vs-ppo&step=2&hide=panel.reward,presets&lock=algo.algo');
    expect(isLessonsHash(h)).toBe(true);
    const back = parseClassroomLink(h);
    expect(back.classroom).toEqual(c);
    expect(isHidden(c, 'shaping.potential.weight')).toBe(true);
    expect(isHidden(c, 'algo.lr')).toBe(false);
    expect(isLocked(c, 'algo.algo')).toBe(true);
    expect(CONTROLS).toContain('rollout.mode');
  });
});

describe('lesson progress', () => {
  const store = () => {
    const m = new Map<string, string>();
    return { getItem: (k: string) => m.get(k) ?? null, setItem: (k: string, v: string) => void m.set(k, v), m };
  };
  it('survives a write and a read', () => {
    const s = store();
    let p = markDone(markDone(EMPTY_PROGRESS, 'a', 1), 'a', 0);
    p = { ...p, current: { lesson: 'a', step: 1 } };
    expect(writeProgress(s, p)).toBe(true);
    const r = readProgress(s);
    expect(r.problem).toBeNull();
    expect(r.progress).toEqual({ done: { a: [0, 1] }, current: { lesson: 'a', step: 1 } });
    expect(isDone(r.progress, 'a', 1)).toBe(true);
    expect(forgetLesson(r.progress, 'a').done).toEqual({});
  });
  it('damaged storage is reported and replaced, never thrown', () => {
    const s = store();
    s.m.set(PROGRESS_KEY, '{nope');
    expect(readProgress(s).problem).toMatch(/not valid JSON/);
    s.m.set(PROGRESS_KEY, JSON.stringify({ done: { a: [-1] }, current: null }));
    expect(readProgress(s)).toMatchObject({ progress: EMPTY_PROGRESS });
    expect(readProgress(s).problem).toMatch(/damaged/);
    expect(readProgress({ getItem: () => { throw new Error('denied'); } }).problem).toMatch(/not kept/);
    expect(writeProgress({ setItem: () => { throw new Error('full'); } }, EMPTY_PROGRESS)).toBe(false);
  });
});

describe('a hash edit of a locked value (it once applied while the field still said "locked")', () => {
  const { presets } = loadPresets([emptyPreset, ppoPreset]);
  const open = (hash: string) => draftFromHash(parseTrainHash(hash), presets, 'wasm');
  const link = '#view=train&preset=grid-empty-8x8-grpo&algo.lr=0.01';
  const current = open(link);

  it('keeps the locked field at its value, applies the rest of the edit, and names what was refused', () => {
    const locks = parseClassroomLink(`${link}&lock=algo.lr`).classroom;
    const next = open('#view=train&preset=grid-empty-8x8-grpo&algo.lr=0.5&algo.groupSize=16');
    // Before: the edit applied as it was (algo.lr 0.5).
    expect(getPath(next.draft, 'algo.lr')).toBe(0.5);
    const r = keepLocked(locks, current, next);
    expect(r.refused).toEqual(['Learning rate']);
    expect(getPath(r.setup.draft, 'algo.lr')).toBe(0.01);
    expect(getPath(r.setup.draft, 'algo.groupSize')).toBe(16);
    expect(lockedEditNotice(r.refused)).toBe('Not applied: Learning rate is locked by the link this page was opened with, so its value in the address was put back.');
  });

  it('a locked panel locks its fields; an edit of what is not locked applies untouched', () => {
    const r = keepLocked({ hide: [], lock: ['panel.algo'] }, current, open('#view=train&preset=grid-empty-8x8-grpo&algo.lr=0.5&algo.entropyCoef=0.2'));
    expect(r.refused.sort()).toEqual(['Entropy coef', 'Learning rate'].sort());
    const free = open('#view=train&preset=grid-empty-8x8-grpo&algo.lr=0.01&iterations=7');
    expect(keepLocked({ hide: [], lock: ['algo.lr'] }, current, free)).toEqual({ setup: free, refused: [] });
    expect(keepLocked(NO_CLASSROOM, current, open('#view=train&preset=grid-empty-8x8-grpo&algo.lr=0.5')).refused).toEqual([]);
  });

  it('another preset while the preset list is locked refuses the whole edit', () => {
    const next = open('#view=train&preset=grid-door-key-ppo');
    const r = keepLocked({ hide: [], lock: ['presets'] }, current, next);
    expect(r.refused).toEqual(['the preset']);
    expect(r.setup).toBe(current);
    // The same preset with another value of a field that is not locked: applied.
    expect(keepLocked({ hide: [], lock: ['presets'] }, current, open('#view=train&preset=grid-empty-8x8-grpo&algo.lr=0.5')).refused).toEqual([]);
  });

  it('only locks kept by the edited link count (a first load locks nothing yet; dropping lock= is the student\'s choice)', () => {
    expect(commonLocks({ hide: ['presets'], lock: ['algo.lr', 'presets'] }, { hide: [], lock: ['presets'] })).toEqual({ hide: [], lock: ['presets'] });
    expect(commonLocks(NO_CLASSROOM, { hide: [], lock: ['algo.lr'] }).lock).toEqual([]);
  });
});
