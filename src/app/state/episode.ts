/**
 * One episode as the viewer shows it: the live env plus an immutable record of what happened
 * (every action, reward and info, and a snapshot of what was on screen after each step).
 *
 * Stepping back replays the episode from its seed, which is exact because an env's only
 * randomness is its seeded RNG, so a seed replays the episode. No RL logic here: this is a tape recorder.
 */
import { deepClone } from '../../core/util/deep.ts';
import type { Env, Frame, Info } from '../../core/envs/types.ts';

/** Who took a step: the person, the scripted expert, or a shipped trained agent. */
export type Actor = 'you' | 'expert' | 'agent';

export interface StepRecord {
  action: unknown;
  /** The action as a person reads it ("forward", or the tool call text). */
  label: string;
  by: Actor;
  reward: number;
  info: Info;
}

/** What the screen shows at one moment: after reset (index 0) or after step i (index i). */
export interface Snapshot {
  obs: unknown;
  frame: Frame;
  text: string;
}

export interface Episode {
  seed: number;
  steps: readonly StepRecord[];
  /** `steps.length + 1` entries. */
  snapshots: readonly Snapshot[];
  totalReward: number;
  terminated: boolean;
  truncated: boolean;
  /** `info.success` from the final step; null while running or when the env did not say. */
  success: boolean | null;
  /** Tool envs: steps whose action text could not be parsed or named an unknown tool. */
  malformed: number;
}

export function isOver(ep: Episode): boolean {
  return ep.terminated || ep.truncated;
}

/** Label for an action: grid actions by their space label, text actions as written. */
export function actionLabel(env: Env, action: unknown): string {
  const space = env.spec.actionSpace;
  if (space.kind === 'discrete' && typeof action === 'number') return space.labels?.[action] ?? `action ${action}`;
  return typeof action === 'string' ? action : JSON.stringify(action);
}

function snapshot(env: Env, obs: unknown): Snapshot {
  // Envs promise that returned observations are ours, but frames may share internal arrays:
  // clone so history entries never change under us.
  return { obs, frame: deepClone(env.frame()), text: env.renderText() };
}

export function startEpisode(env: Env, seed: number): Episode {
  const { obs } = env.reset({ seed });
  return {
    seed,
    steps: [],
    snapshots: [snapshot(env, obs)],
    totalReward: 0,
    terminated: false,
    truncated: false,
    success: null,
    malformed: 0,
  };
}

/** Steps the live env and returns the extended record. Throws whatever the env throws. */
export function advance(env: Env, ep: Episode, action: unknown, by: Actor): Episode {
  if (isOver(ep)) throw new Error('the episode is over: reset to play again');
  const r = env.step(action);
  const rec: StepRecord = { action, label: actionLabel(env, action), by, reward: r.reward, info: r.info };
  const over = r.terminated || r.truncated;
  return {
    seed: ep.seed,
    steps: [...ep.steps, rec],
    snapshots: [...ep.snapshots, snapshot(env, r.obs)],
    totalReward: ep.totalReward + r.reward,
    terminated: r.terminated,
    truncated: r.truncated,
    success: over && typeof r.info.success === 'boolean' ? r.info.success : null,
    malformed: ep.malformed + (r.info.malformed ? 1 : 0),
  };
}

/** The episode as it was after `keep` steps, with the live env brought back to that state. */
export function rewind(env: Env, ep: Episode, keep: number): Episode {
  const n = Math.max(0, Math.min(keep, ep.steps.length));
  let out = startEpisode(env, ep.seed);
  for (let i = 0; i < n; i++) out = advance(env, out, ep.steps[i].action, ep.steps[i].by);
  return out;
}
