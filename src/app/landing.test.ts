import { describe, expect, it } from 'vitest';
import { landing, markVisited, VISITED_KEY } from './landing.ts';
import { PROGRESS_KEY } from './lessons/progress.ts';

/** A Map-backed Storage stand-in: only what landing reads and writes. */
function memory(init: Record<string, string> = {}) {
  const m = new Map(Object.entries(init));
  return { getItem: (k: string) => m.get(k) ?? null, setItem: (k: string, v: string) => void m.set(k, v) };
}

describe('landing', () => {
  it('a first visit with no hash opens the start page; the visit is then remembered', () => {
    const s = memory();
    expect(landing('', s)).toBe('start');
    expect(landing('#', s)).toBe('start');
    markVisited(s);
    expect(s.getItem(VISITED_KEY)).toBe('1');
    expect(landing('', s)).toBe('hash');
  });

  it('any hash opens what it names, first visit or not', () => {
    expect(landing('#view=train&preset=grid-empty-8x8-grpo', memory())).toBe('hash');
    expect(landing('#env=grid/empty-5x5&seed=0', memory())).toBe('hash');
  });

  it('lesson progress from before the visited key counts as a return', () => {
    expect(landing('', memory({ [PROGRESS_KEY]: '{"done":{}}' }))).toBe('hash');
  });

  it('no storage, or one that throws, still lands on the start page and marking does not throw', () => {
    expect(landing('', null)).toBe('start');
    const throwing = {
      getItem: () => {
        throw new Error('blocked');
      },
      setItem: () => {
        throw new Error('blocked');
      },
    };
    expect(landing('', throwing)).toBe('start');
    expect(() => markVisited(throwing)).not.toThrow();
  });
});
