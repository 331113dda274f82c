import { describe, expect, it } from 'vitest';
import { legendFor } from './textLegend.ts';

describe('legendFor', () => {
  it('explains only the characters and colours the text uses', () => {
    // Door-key view: walls, a floor cell, a key and a locked door, the agent, unseen cells.
    const text = '   \n  ###\n  #.#\n  #K#\n  #^L\ncolors: Ky Ly';
    expect(legendFor(text)).toEqual([
      { symbol: '␣', meaning: 'unseen' },
      { symbol: '.', meaning: 'floor' },
      { symbol: '#', meaning: 'wall' },
      { symbol: 'K', meaning: 'key' },
      { symbol: 'L', meaning: 'locked door' },
      { symbol: '^', meaning: 'agent' },
      { symbol: 'y', meaning: 'yellow' },
    ]);
  });

  it('explains a carried object from the carry line, without reading "carry" as map characters', () => {
    const got = legendFor('.^.\ncarry: Bb');
    expect(got.map((e) => e.meaning)).toEqual(['floor', 'ball', 'agent', 'blue']);
  });
});
