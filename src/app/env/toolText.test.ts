import { describe, expect, it } from 'vitest';
import { toolsFromTask } from './toolText.ts';

describe('toolsFromTask', () => {
  it('lists the signatures in the task text', () => {
    expect(toolsFromTask('task: what is 3473 * 1561? tools: calc(expression), answer(number).')).toEqual(['calc(expression)', 'answer(number)']);
    expect(
      toolsFromTask('task: fetch the value stored under k13 and answer with it. tools: call(key), retry(), answer(value). each call costs 0.05.'),
    ).toEqual(['call(key)', 'retry()', 'answer(value)']);
  });

  it('returns nothing when the task names no tools', () => {
    expect(toolsFromTask('task: say hi.')).toEqual([]);
    expect(toolsFromTask('tools: none at all.')).toEqual([]);
  });
});
