import { describe, expect, it } from 'vitest';
import { discrete } from '../../core/envs/spaces.ts';
import { actionButtons, actionForKey } from './keys.ts';

const minigrid = discrete(7, ['left', 'right', 'forward', 'pickup', 'drop', 'toggle', 'done']);

describe('grid keys', () => {
  it('maps the keys to MiniGrid action indices by label', () => {
    const got = ['ArrowLeft', 'ArrowRight', 'ArrowUp', 'p', 'd', ' ', 'Enter'].map((k) => actionForKey(minigrid, k));
    expect(got).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(actionForKey(minigrid, 'P')).toBe(3);
  });

  it('follows labels, not positions, and ignores unbound keys', () => {
    const reordered = discrete(3, ['forward', 'left', 'right']);
    expect(actionForKey(reordered, 'ArrowUp')).toBe(0);
    expect(actionForKey(reordered, 'p')).toBeNull();
    expect(actionForKey(reordered, 'x')).toBeNull();
    expect(actionForKey(discrete(2), 'ArrowUp')).toBeNull();
  });

  it('lists a button per action with its key caption', () => {
    expect(actionButtons(discrete(3, ['left', 'forward', 'wait']))).toEqual([
      { action: 0, label: 'left', caption: '←' },
      { action: 1, label: 'forward', caption: '↑' },
      { action: 2, label: 'wait', caption: null },
    ]);
  });
});
