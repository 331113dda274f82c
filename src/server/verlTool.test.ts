import { describe, expect, it } from 'vitest';
import { lastCall, readVerlBatch } from './verlTool.ts';

describe('lastCall', () => {
  it('finds the last outermost balanced call in an LLM turn', () => {
    expect(lastCall('I will compute it: calc((2+3)*4).')).toBe('calc((2+3)*4)');
    expect(lastCall('first calc(1+1), then answer(2) </tool>')).toBe('answer(2)');
    expect(lastCall('<tool>calc(sum(1))</tool>')).toBe('calc(sum(1))');
    expect(lastCall('answer(12) because calc(3*4 was')).toBe('answer(12)');
  });
  it('leaves text without a call as it is, so the env explains the problem', () => {
    expect(lastCall('the answer is 12')).toBe('the answer is 12');
    expect(lastCall('calc(1+')).toBe('calc(1+');
    expect(lastCall('')).toBe('');
  });
});

describe('readVerlBatch', () => {
  it('merges extra top-level lists into each item\'s extra fields, as verl-tool does', () => {
    const items = readVerlBatch({ trajectory_ids: ['a', 7], actions: ['x', 'y'], finish: [false, true], is_last_step: [true, false], extra_fields: [{ seed: 1 }, {}], tag: ['p', 'q'] });
    expect(items).toEqual([
      { id: 'a', action: 'x', finish: false, isLast: true, extra: { seed: 1, finish: false, is_last_step: true, tag: 'p' } },
      { id: '7', action: 'y', finish: true, isLast: false, extra: { finish: true, is_last_step: false, tag: 'q' } },
    ]);
  });
  it('refuses a malformed batch whole, naming the field', () => {
    expect(() => readVerlBatch({ trajectory_ids: ['a'], actions: ['x'], extra_fields: ['seed'] })).toThrow(/extra_fields\.0: Input should be a valid dictionary/);
    expect(() => readVerlBatch({ trajectory_ids: ['a'], actions: ['x'], is_last_step: [1] })).toThrow(/is_last_step\.0: Input should be a valid boolean/);
    expect(() => readVerlBatch({ trajectory_ids: [''], actions: ['x'] })).toThrow(/trajectory_ids\.0/);
    expect(() => readVerlBatch('nope')).toThrow(/trajectory_ids and actions/);
  });
});
