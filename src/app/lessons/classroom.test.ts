import { describe, expect, it } from 'vitest';
import { CONTROLS, formatLessonHash, isHidden, isLessonsHash, isLocked, parseClassroomLink } from './classroom.ts';
import { EMPTY_PROGRESS, forgetLesson, isDone, markDone, PROGRESS_KEY, readProgress, writeProgress } from './progress.ts';

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
