import { describe, expect, it } from 'vitest';
import { phaseNote, warmEmptyNote } from './startNote.ts';

describe('what empty charts say while a run starts', () => {
  it('names the phase and its elapsed time, with the first rollout\'s episodes where reported', () => {
    expect(phaseNote(null, 5000)).toBeUndefined();
    expect(phaseNote({ name: 'engine', since: 1000 }, 2200)).toBe('loading the engine · 1.2 s');
    expect(phaseNote({ name: 'session', since: 1000 }, 900)).toBe('building the session · 0.0 s');
    expect(phaseNote({ name: 'rollout', since: 0, done: 37, total: 64 }, 2100)).toBe('first rollout · 37 of 64 episodes · 2.1 s');
    expect(phaseNote({ name: 'update', since: 0 }, 300)).toBe('first update · 0.3 s');
    expect(warmEmptyNote({ step: 3, total: 150 })).toBe('RL begins after the warm start (step 3 / 150).');
  });
});
