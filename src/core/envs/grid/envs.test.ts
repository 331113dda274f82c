/**
 * Every registered grid env: the env contract (checkEnv), the expert's success rate over
 * 1,000 seeds, the documentation headings, and each layout's promises checked by an
 * independent flood fill.
 */
import { describe, expect, it } from 'vitest';
import { checkEnv, runExpert } from '../checkEnv.ts';
import { makeEnv } from '../registry.ts';
import type { GridFrame } from '../types.ts';
import './index.ts';
import { DOOR, OBJ } from './objects.ts';

const GRID_IDS = ['grid/empty-5x5', 'grid/empty-8x8', 'grid/four-rooms', 'grid/door-key-6x6', 'grid/lava-crossing-9x9', 'grid/memory', 'grid/switch-door'];

describe.each(GRID_IDS)('%s', (id) => {
  it('passes checkEnv', () => {
    expect(checkEnv(() => makeEnv(id))).toEqual([]);
  });

  it('is solved by the expert in at least 99% of 1,000 seeded episodes', () => {
    const env = makeEnv(id);
    let solved = 0;
    for (let seed = 0; seed < 1000; seed++) {
      const r = runExpert(env, seed);
      if (r.success) solved++;
    }
    expect(solved / 1000).toBeGreaterThanOrEqual(0.99);
  });

  it('declares a grid spec', () => {
    const { spec } = makeEnv(id);
    expect(spec).toMatchObject({ id, family: 'grid', rewardRange: [0, 1] });
    expect(spec.actionSpace).toMatchObject({ kind: 'discrete', n: 7, labels: ['left', 'right', 'forward', 'pickup', 'drop', 'toggle', 'done'] });
    expect(spec.observationSpace).toMatchObject({ kind: 'dict', spaces: { image: { kind: 'box', shape: [7, 7, 3], low: 0, high: 10, dtype: 'uint8' } } });
  });

  it('rejects unknown kwargs, naming them', () => {
    expect(() => makeEnv(id, { sise: 9 })).toThrow(/unknown kwarg sise/);
  });
});

describe('non-default kwargs', () => {
  const VARIANTS: [string, Record<string, unknown>][] = [
    ['grid/empty-5x5', { viewSize: 3, randomStart: true }],
    ['grid/empty-8x8', { size: 12, viewSize: 9 }],
    ['grid/four-rooms', { size: 11, maxSteps: 60 }],
    ['grid/door-key-6x6', { size: 8, viewSize: 5 }],
    ['grid/lava-crossing-9x9', { size: 11, rivers: 4 }],
    ['grid/memory', { size: 10 }],
    ['grid/switch-door', { viewSize: 5, maxSteps: 60 }],
  ];
  it.each(VARIANTS)('%s %j passes checkEnv and the expert solves it', (id, kwargs) => {
    expect(checkEnv(() => makeEnv(id, kwargs), { seeds: [0, 1, 2] })).toEqual([]);
    const env = makeEnv(id, kwargs);
    for (let seed = 0; seed < 50; seed++) expect(runExpert(env, seed).success).toBe(true);
  });
});

describe('documentation', () => {
  const sources = import.meta.glob(['./empty.ts', './four-rooms.ts', './door-key.ts', './lava-crossing.ts', './memory.ts', './switch-door.ts'], {
    query: '?raw',
    import: 'default',
    eager: true,
  }) as Record<string, string>;
  const HEADINGS = ['## Description', '## Observation', '## Actions', '## Reward', '## Termination', '## Kwargs'];

  it.each(Object.keys(sources))('%s opens with the shared headings, in order', (file) => {
    const src = sources[file];
    expect(src.startsWith('/**')).toBe(true);
    const positions = HEADINGS.map((h) => src.indexOf(h));
    expect(positions.every((p) => p > 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    expect(positions[positions.length - 1]).toBeLessThan(src.indexOf('import '));
  });

  it('has one file per registered env family', () => {
    expect(Object.keys(sources)).toHaveLength(6);
  });
});

/** Cells reachable from (x, y) by walking, treating `blocked(type, state)` cells as walls. */
function reachable(f: GridFrame, x: number, y: number, blocked: (type: number, state: number) => boolean): Set<string> {
  const seen = new Set([`${x},${y}`]);
  const todo = [[x, y]];
  while (todo.length > 0) {
    const [cx, cy] = todo.pop()!;
    for (const [dx, dy] of [[1, 0], [-1, 0], [0, 1], [0, -1]]) {
      const nx = cx + dx;
      const ny = cy + dy;
      const o = (ny * f.width + nx) * 3;
      if (nx < 0 || ny < 0 || nx >= f.width || ny >= f.height || seen.has(`${nx},${ny}`)) continue;
      if (blocked(f.cells[o], f.cells[o + 2])) continue;
      seen.add(`${nx},${ny}`);
      todo.push([nx, ny]);
    }
  }
  return seen;
}
const find = (f: GridFrame, type: number): string[] => {
  const out: string[] = [];
  for (let i = 0; i < f.width * f.height; i++) if (f.cells[i * 3] === type) out.push(`${i % f.width},${Math.floor(i / f.width)}`);
  return out;
};
const solid = (type: number, state: number): boolean =>
  type === OBJ.wall || type === OBJ.key || type === OBJ.ball || type === OBJ.box || (type === OBJ.door && state !== DOOR.open);

describe('seeding', () => {
  it('without a seed, resets continue one deterministic stream (Gymnasium semantics)', () => {
    const a = makeEnv('grid/four-rooms');
    const b = makeEnv('grid/four-rooms');
    a.reset();
    const first = a.frame();
    a.reset();
    const second = a.frame();
    expect(second).not.toEqual(first); // each reset is a new episode
    b.reset();
    expect(b.frame()).toEqual(first); // a fresh instance replays the same sequence
    b.reset();
    expect(b.frame()).toEqual(second);
    a.reset({ seed: 5 });
    b.reset({ seed: 5 });
    a.reset();
    b.reset();
    expect(a.frame()).toEqual(b.frame()); // a seed restarts the stream
  });
});

describe('layouts', () => {
  it('empty: fixed corner start by default, random start on request', () => {
    const env = makeEnv('grid/empty-8x8');
    env.reset({ seed: 1 });
    expect((env.frame() as GridFrame).agent).toMatchObject({ x: 1, y: 1, dir: 0 });
    expect(find(env.frame() as GridFrame, OBJ.goal)).toEqual(['6,6']);
    const random = makeEnv('grid/empty-8x8', { randomStart: true });
    const starts = new Set<string>();
    for (let seed = 0; seed < 20; seed++) {
      random.reset({ seed });
      const { agent } = random.frame() as GridFrame;
      starts.add(`${agent.x},${agent.y},${agent.dir}`);
    }
    expect(starts.size).toBeGreaterThan(10);
  });

  it('empty: default time limit is 4 * size^2', () => {
    expect(makeEnv('grid/empty-5x5').spec.maxSteps).toBe(100);
    expect(makeEnv('grid/empty-8x8').spec.maxSteps).toBe(256);
    expect(makeEnv('grid/empty-5x5', { maxSteps: 7 }).spec.maxSteps).toBe(7);
  });

  it('four-rooms: gaps vary with the seed and every cell is connected', () => {
    const env = makeEnv('grid/four-rooms');
    expect(env.spec.maxSteps).toBe(100);
    const layouts = new Set<string>();
    for (let seed = 0; seed < 30; seed++) {
      env.reset({ seed });
      const f = env.frame() as GridFrame;
      const open = (f.width - 2) * (f.height - 2) - 2 * (f.width - 2) + 1 + 4; // interior minus the cross of walls, plus 4 gaps
      expect(reachable(f, f.agent.x, f.agent.y, solid).size).toBe(open);
      const mid = f.width >> 1;
      const gaps = [];
      for (let i = 1; i < f.width - 1; i++) {
        if (f.cells[(mid * f.width + i) * 3] !== OBJ.wall) gaps.push(`${i},${mid}`);
        if (f.cells[(i * f.width + mid) * 3] !== OBJ.wall) gaps.push(`${mid},${i}`);
      }
      expect(gaps).toHaveLength(4);
      layouts.add(gaps.join(' '));
    }
    expect(layouts.size).toBeGreaterThan(25);
  });

  it('door-key: the key is on the agent side, the goal only behind the locked door', () => {
    const env = makeEnv('grid/door-key-6x6');
    expect(env.spec.maxSteps).toBe(360);
    for (let seed = 0; seed < 50; seed++) {
      env.reset({ seed });
      const f = env.frame() as GridFrame;
      const [door] = find(f, OBJ.door);
      const [dx, dy] = door.split(',').map(Number);
      expect(f.cells[(dy * f.width + dx) * 3 + 2]).toBe(DOOR.locked);
      // Walk without opening doors (keys are walkable here: we only ask where they lie).
      const side = reachable(f, f.agent.x, f.agent.y, (t, s) => t === OBJ.wall || (t === OBJ.door && s !== DOOR.open));
      expect(side.has(find(f, OBJ.key)[0])).toBe(true);
      expect(side.has(find(f, OBJ.goal)[0])).toBe(false);
    }
  });

  it('lava-crossing: one river with exactly one gap, and a lava-free path to the goal', () => {
    const env = makeEnv('grid/lava-crossing-9x9');
    expect(env.spec.maxSteps).toBe(324);
    for (let seed = 0; seed < 50; seed++) {
      env.reset({ seed });
      const f = env.frame() as GridFrame;
      expect(find(f, OBJ.lava)).toHaveLength(6); // 7 interior cells of one river, minus one gap
      const safe = reachable(f, 1, 1, (t) => t === OBJ.wall || t === OBJ.lava);
      expect(safe.has('7,7')).toBe(true);
    }
  });

  it('lava-crossing: more rivers on request, still solvable', () => {
    const env = makeEnv('grid/lava-crossing-9x9', { rivers: 3 });
    for (let seed = 0; seed < 50; seed++) {
      env.reset({ seed });
      const f = env.frame() as GridFrame;
      expect(reachable(f, 1, 1, (t) => t === OBJ.wall || t === OBJ.lava).has('7,7')).toBe(true);
      expect(runExpert(env, seed).success).toBe(true);
    }
    expect(() => makeEnv('grid/lava-crossing-9x9', { rivers: 7 })).toThrow(/rivers = 7 is above the maximum 6/);
  });
});
