/**
 * One sampled episode as a trajectories.jsonl line: exactly what the learner saw (TITO ids for
 * token runs). The CLI writes it from the trainer's episodes and the tab's recorder from the
 * episodes its worker sent, so both build the line here and a run file reads the same either way.
 */
import type { TrajectoryLine } from './format.ts';

/** What a line needs of an episode: a grid episode (StepEpisode, a grid EpisodeView) or a token one. */
export interface LineEpisode {
  seed: number;
  group: number;
  rewards: ArrayLike<number>;
  terminated: boolean;
  truncated: boolean;
  success: boolean;
  logprobs: ArrayLike<number>;
  versions: ArrayLike<number>;
  actions: ArrayLike<number> | readonly string[];
  /** Token episodes only: the context's ids, its loss mask and the transcript. */
  tokens?: ArrayLike<number>;
  lossMask?: ArrayLike<number>;
  transcript?: string;
}

/** Log-probs keep 6 decimals: enough to recompute a ratio, a third of the text. */
const round = (x: number) => Number(x.toFixed(6));

/** `reward`: the total shaped reward the advantage compared; `advantage`: the episode's advantage. */
export function trajectoryLine(iteration: number, env: string, ep: LineEpisode, reward: number, advantage: number): TrajectoryLine {
  const common = {
    iteration,
    env,
    seed: ep.seed,
    group: ep.group,
    reward,
    advantage,
    env_rewards: Array.from(ep.rewards),
    terminated: ep.terminated,
    truncated: ep.truncated,
    success: ep.success,
    logprobs: Array.from(ep.logprobs, round),
    versions: Array.from(ep.versions),
  };
  if (ep.tokens !== undefined) {
    return { ...common, actions: Array.from(ep.actions as ArrayLike<number | string>), tokens: Array.from(ep.tokens), loss_mask: Array.from(ep.lossMask ?? []), transcript: ep.transcript };
  }
  return { ...common, actions: Array.from(ep.actions as ArrayLike<number>) };
}
