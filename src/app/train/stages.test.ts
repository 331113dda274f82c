import { describe, expect, it } from 'vitest';
import { stageMarkers, stageRows } from './stages.ts';
import { getPath, setPath } from './fields.ts';

const stages = [
  { name: 'RL 1: door-key 6×6', iterations: 30 },
  { name: 'RL 2: door-key 8×8', iterations: 30 },
  { name: 'Distill', iterations: 20, distill: { student: { hidden: [16] } } },
];

describe('staged runs on the dashboard', () => {
  it('marks where each stage after the first begins (x = iterations done, as the charts count)', () => {
    expect(stageMarkers(stages)).toEqual([
      { x: 31, label: 'stage 2' },
      { x: 61, label: 'stage 3' },
    ]);
    expect(stageMarkers(stages.slice(0, 1))).toEqual([]);
  });

  it('the strip: each stage with its iterations and kind, and which one runs', () => {
    const rows = stageRows(stages, 2);
    expect(rows.map((r) => [r.index, r.from, r.to, r.state])).toEqual([
      [1, 1, 30, 'done'],
      [2, 31, 60, 'running'],
      [3, 61, 80, 'next'],
    ]);
    expect(rows[2].kind).toBe('distill into an MLP of 16');
    expect(rows[0].kind).toBe('RL');
    expect(stageRows(stages, undefined).every((r) => r.state === 'next')).toBe(true);
  });

  it("a stage's form field edits the stage inside the array (the array stays an array)", () => {
    const c = { stages: stages.map((s) => ({ ...s })), iterations: 80 };
    const next = setPath(c, 'stages.1.iterations', 40);
    expect(Array.isArray(next.stages)).toBe(true);
    expect(next.stages.map((s) => s.iterations)).toEqual([30, 40, 20]);
    expect(getPath(next, 'stages.2.distill.student.hidden')).toEqual([16]);
    // Copies along the path only: the input is untouched.
    expect(c.stages[1].iterations).toBe(30);
    expect(next.stages[0]).toBe(c.stages[0]);
  });
});
