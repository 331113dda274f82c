/**
 * The shipped vector-observation code env trains headless with its documented command (docs/studio.md)
 * (`npm run train -- --env-file examples/envs/cartpole.js`: the default code-env preset, GRPO
 * with the MLP): held-out greedy play goes from the initial policy's ~10 steps to the threshold
 * (mean return ≥ 195, CartPole-v0's "solved" bar) within 16 iterations.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from './train.ts';

interface EvalEpisode {
  when: string;
  temperature: number;
  return: number;
  success: boolean;
}

describe('CartPole (vector observations) trains with the CLI', () => {
  it('reaches a held-out greedy mean return >= 195 in 16 GRPO iterations (the initial policy: < 50); policy.json takes the 4 floats', { timeout: 240_000 }, async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'cartpole-')), 'run');
    expect(await main(['--env-file', 'examples/envs/cartpole.js', '--iterations', '16', '--eval', '20', '--out', out, '--quiet'])).toBe(0);
    const episodes = readFileSync(join(out, 'eval-episodes.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as EvalEpisode);
    const mean = (when: string) => {
      const r = episodes.filter((e) => e.when === when && e.temperature === 0).map((e) => e.return);
      expect(r).toHaveLength(20);
      return r.reduce((a, b) => a + b, 0) / r.length;
    };
    const before = mean('before RL');
    const after = mean('after RL');
    console.log(`CartPole, 16 GRPO iterations: held-out greedy mean return ${before.toFixed(1)} -> ${after.toFixed(1)}`);
    expect(before).toBeLessThan(50);
    expect(after).toBeGreaterThanOrEqual(195);
    const card = JSON.parse(readFileSync(join(out, 'policy.json'), 'utf8'));
    expect(card.observation).toMatchObject({ kind: 'vector', shape: [4], floats: 4 });
    expect(card.onnx.inputs[0].shape).toEqual([1, 4]);
    expect(card.actions).toEqual({ kind: 'discrete', names: ['push left', 'push right'] });
  });
});
