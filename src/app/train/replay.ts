/**
 * Grid replays from (env, kwargs, seed, actions): envs are deterministic given the reset seed,
 * so re-running the recorded actions reproduces every state the agent saw, and the worker
 * never ships observations. A replay that disagrees with the record (the env ended earlier or
 * later than the rollout did) is reported rather than drawn wrong.
 */
import { makeEnv, type EnvKwargs } from '../../core/envs/index.ts';
import type { GridFrame, GridObs } from '../../core/envs/types.ts';

export interface ReplayStep {
  /** Full map before the action at this step (the last entry: after the final action). */
  frame: GridFrame;
  /** What the agent saw. */
  obs: GridObs;
}

export interface Replay {
  /** T + 1 states: s_0 .. s_T. */
  states: ReplayStep[];
  /** [T] env rewards from the replay. */
  rewards: number[];
  terminated: boolean;
  truncated: boolean;
  /** Set when the replay diverged from the recorded episode. */
  problem?: string;
}

export function replayGrid(envId: string, kwargs: EnvKwargs, seed: number, actions: ArrayLike<number>): Replay {
  const env = makeEnv(envId, kwargs);
  const first = env.reset({ seed });
  // A code env with vector observations has no map or view to draw: the inspector says so instead of drawing.
  if (env.frame().kind !== 'grid') throw new Error(`${env.spec.title} has vector observations: there is no map or agent view to replay`);
  const states: ReplayStep[] = [{ frame: env.frame() as GridFrame, obs: first.obs as GridObs }];
  const rewards: number[] = [];
  let terminated = false;
  let truncated = false;
  for (let t = 0; t < actions.length; t++) {
    if (terminated || truncated) {
      return { states, rewards, terminated, truncated, problem: `the replay ended at step ${t}, but the episode recorded ${actions.length} actions` };
    }
    const r = env.step(actions[t]);
    states.push({ frame: env.frame() as GridFrame, obs: r.obs as GridObs });
    rewards.push(r.reward);
    terminated = r.terminated;
    truncated = r.truncated;
  }
  const problem = terminated || truncated ? undefined : `the replay had not ended after the ${actions.length} recorded actions`;
  return { states, rewards, terminated, truncated, problem };
}
