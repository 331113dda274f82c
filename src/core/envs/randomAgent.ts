/**
 * A random agent as a smoke test for an env: how often uniformly random actions solve it. A map
 * a random agent never solves gives a learner no reward to start from (sparse reward fails);
 * one it often solves is easy to learn.
 */
import { Rng } from '../util/rng.ts';
import { sample } from './spaces.ts';
import type { Env } from './types.ts';

export interface RandomAgentReport {
  /** Episodes played, one per seed. */
  episodes: number;
  /** Share of episodes that ended with `info.success`, in [0, 1]. */
  successRate: number;
  /** Mean episode length, steps. */
  meanSteps: number;
  /** Mean undiscounted return. */
  meanReturn: number;
}

/**
 * Plays one episode per seed in `seeds` with actions drawn uniformly from the action space (the
 * draws seeded by the same seed, so a report is reproducible).
 */
export function randomAgent(env: Env, seeds: readonly number[]): RandomAgentReport {
  let wins = 0;
  let steps = 0;
  let ret = 0;
  for (const seed of seeds) {
    const rng = new Rng(seed ^ 0x7a11d0);
    env.reset({ seed });
    for (let t = 0; t < env.spec.maxSteps; t++) {
      const r = env.step(sample(env.spec.actionSpace, rng));
      steps++;
      ret += r.reward;
      if (r.terminated || r.truncated) {
        if (r.info.success === true) wins++;
        break;
      }
    }
  }
  const n = Math.max(1, seeds.length);
  return { episodes: seeds.length, successRate: wins / n, meanSteps: steps / n, meanReturn: ret / n };
}

/** Seeds 0..n-1. */
export const firstSeeds = (n: number): number[] => Array.from({ length: n }, (_, i) => i);
