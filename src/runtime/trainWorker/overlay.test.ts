import { describe, expect, it } from 'vitest';
import '../../core/envs/index.ts';
import { makeEnv } from '../../core/envs/index.ts';
import type { GridObs } from '../../core/envs/types.ts';
import { encodeGridObs, gridFeatureSize } from '../../core/rollout/features.ts';
import { assembleOverlay, overlayInputs, runRows } from './overlay.ts';

describe('grid overlay inputs', () => {
  it('maps every standable non-terminal cell × 4 headings; the agent\'s own pose matches its real observation', () => {
    const inp = overlayInputs('grid/empty-5x5', {}, 3, [], 0);
    // 5×5 with walls: a 3×3 interior, minus the goal.
    expect(inp.cells.length / 2).toBe(8);
    expect(inp.dim).toBe(gridFeatureSize(7));
    expect(inp.features.length).toBe(8 * 4 * inp.dim);
    const env = makeEnv('grid/empty-5x5');
    const obs = env.reset({ seed: 3 }).obs as GridObs;
    const f = env.frame();
    if (f.kind !== 'grid') throw new Error('grid frame expected');
    const c = [...Array(8).keys()].find((k) => inp.cells[2 * k] === f.agent.x && inp.cells[2 * k + 1] === f.agent.y)!;
    const want = new Float32Array(inp.dim);
    encodeGridObs(obs, want);
    const row = c * 4 + f.agent.dir;
    expect(Array.from(inp.features.subarray(row * inp.dim, (row + 1) * inp.dim))).toEqual(Array.from(want));
  });

  it('takes the world at the replayed step (an opened door stays open)', () => {
    const env = makeEnv('grid/door-key-6x6');
    env.reset({ seed: 7 });
    const actions: number[] = [];
    for (let a = env.expertAction(); a !== null; a = env.expertAction()) {
      actions.push(a as number);
      if (env.step(a).terminated) break;
    }
    const before = overlayInputs('grid/door-key-6x6', {}, 7, actions, 0);
    const after = overlayInputs('grid/door-key-6x6', {}, 7, actions, actions.length - 1);
    // The locked door is not standable at the start; once opened it is, and the key's cell is free.
    expect(after.cells.length).toBeGreaterThan(before.cells.length);
  });

  it('grid/switch-door: the acting agent\'s view at every standable pose (a closed door is not one)', () => {
    // Step 0 (A acts, door closed): A's room 2×3 minus nothing (the plate is standable) + B's room 3×3 + corridor 3 minus the goal.
    const inp = overlayInputs('grid/switch-door', {}, 5, [], 0);
    expect(inp.cells.length / 2).toBe(6 + 9 + 2);
    const env = makeEnv('grid/switch-door');
    const obs = env.reset({ seed: 5 }).obs as GridObs;
    const f = env.frame();
    if (f.kind !== 'grid') throw new Error('grid frame expected');
    const c = [...Array(17).keys()].find((k) => inp.cells[2 * k] === f.agent.x && inp.cells[2 * k + 1] === f.agent.y)!;
    const want = new Float32Array(inp.dim);
    encodeGridObs(obs, want);
    const row = c * 4 + f.agent.dir;
    expect(Array.from(inp.features.subarray(row * inp.dim, (row + 1) * inp.dim))).toEqual(Array.from(want));
  });
});

describe('runRows / assembleOverlay', () => {
  it('feeds rows in fixed batches (zero-padded) and puts every output back at its row', async () => {
    const dim = 3;
    const rows = 7;
    const features = Float32Array.from({ length: rows * dim }, (_, i) => i);
    const A = 2;
    const calls: number[] = [];
    const fake = async (obs: Float32Array) => {
      calls.push(obs.length / dim);
      const B = obs.length / dim;
      const value = new Float32Array(B);
      const logprobs = new Float32Array(B * A).fill(Math.log(0.5));
      for (let b = 0; b < B; b++) value[b] = obs[b * dim] + obs[b * dim + 1] + obs[b * dim + 2];
      return { value, logprobs };
    };
    const out = await runRows(fake, 3, features, dim, A);
    expect(calls).toEqual([3, 3, 3]);
    expect(Array.from(out.values!)).toEqual([3, 12, 21, 30, 39, 48, 57]);
    const o = assembleOverlay({ width: 2, height: 2, cells: new Int16Array(4), features, dim }, out, A, 5, 0);
    expect(o.probs[13]).toBeCloseTo(0.5, 6);
    expect(o.version).toBe(5);
    const noValue = await runRows(async (obs) => ({ logprobs: new Float32Array((obs.length / dim) * A) }), 4, features, dim, A);
    expect(noValue.values).toBeNull();
  });
});
