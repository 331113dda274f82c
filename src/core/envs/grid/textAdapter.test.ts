/**
 * The text form of grid envs: the env contract holds through the adapter, actions parse
 * strictly, a malformed action is a flagged no-op that still costs a step, and the text episode
 * is the grid episode step for step.
 */
import { describe, expect, it } from 'vitest';
import { checkEnv, runExpert } from '../checkEnv.ts';
import { makeEnv } from '../registry.ts';
import type { GridEnv } from '../types.ts';
import type { Rng } from '../../util/rng.ts';
import './index.ts';
import '../tools/index.ts';
import { GRID_ACTION_LETTERS, GridTextEnv, makeTextEnv, parseGridAction } from './textAdapter.ts';
import { ACTION } from './world.ts';

/** Mostly legal letters, sometimes junk, so both paths are exercised. */
const randomTextAction = (_env: unknown, rng: Rng): string => (rng.random() < 0.8 ? rng.choice(GRID_ACTION_LETTERS) : rng.choice(['', 'F', 'ff', ' l', 'left', 'x']));

describe('GridTextEnv', () => {
  it.each([
    ['grid/empty-5x5', {}],
    ['grid/door-key-6x6', {}],
    ['grid/memory', { size: 8, viewSize: 3, maxSteps: 20 }],
  ])('%s %j passes checkEnv, and the expert solves it through text', (id, kwargs) => {
    expect(checkEnv(() => makeTextEnv(id, kwargs), { seeds: [0, 1, 2, 7], randomAction: randomTextAction })).toEqual([]);
    const env = makeTextEnv(id, kwargs);
    for (let seed = 0; seed < 30; seed++) expect(runExpert(env, seed).success).toBe(true);
  });

  it('parses exactly one known letter', () => {
    expect(GRID_ACTION_LETTERS.map(parseGridAction)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    for (const bad of ['', 'L', 'ff', ' f', 'f ', 'forward', 'x', '<eoa>', '\n']) expect(parseGridAction(bad)).toBeNull();
  });

  it('plays the same episode as the grid env, with malformed actions as flagged no-ops', () => {
    const kwargs = { size: 8, viewSize: 3, maxSteps: 6 };
    const grid = makeEnv('grid/memory', kwargs) as GridEnv;
    const txt = new GridTextEnv(makeEnv('grid/memory', kwargs) as GridEnv);
    expect(txt.reset({ seed: 5 }).obs.text).toBe(grid.reset({ seed: 5 }).obs.text);
    const script: [string, number][] = [
      ['r', ACTION.right],
      ['bogus', ACTION.done],
      ['f', ACTION.forward],
      ['', ACTION.done],
      ['l', ACTION.left],
      ['f', ACTION.forward],
    ];
    script.forEach(([t, a], i) => {
      const r = txt.step(t);
      const g = grid.step(a);
      expect(r.obs.text).toBe(g.obs.text);
      expect([r.reward, r.terminated, r.truncated]).toEqual([g.reward, g.terminated, g.truncated]);
      expect(r.info.malformed === true).toBe(a === ACTION.done);
      // The no-op still costs a step: the 6-step limit ends the episode on the 6th action.
      expect(r.truncated).toBe(i === 5);
    });
    expect(txt.renderText()).toBe(grid.renderText());
  });

  it('makeTextEnv passes tool envs through and wraps grid envs', () => {
    expect(makeTextEnv('grid/empty-5x5')).toBeInstanceOf(GridTextEnv);
    expect(makeTextEnv('tools/calculator')).not.toBeInstanceOf(GridTextEnv);
    expect(makeTextEnv('grid/empty-5x5').spec).toMatchObject({ id: 'grid/empty-5x5', family: 'grid', actionSpace: { kind: 'text' } });
  });
});
