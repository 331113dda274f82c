/** A sampled episode the training worker sent the page, as a trajectories.jsonl line (the CLI's fields). */
import type { TrajectoryLine } from '../../core/runs/format.ts';
import type { EpisodeView } from '../trainWorker/types.ts';

const round = (x: number) => Number(x.toFixed(6));

export function trajectoryLine(iteration: number, env: string, ep: EpisodeView): TrajectoryLine {
  const common = {
    iteration,
    env,
    seed: ep.seed,
    group: ep.group,
    reward: ep.reward,
    advantage: ep.advantage,
    env_rewards: Array.from(ep.rewards),
    terminated: ep.terminated,
    truncated: ep.truncated,
    success: ep.success,
    logprobs: Array.from(ep.logprobs, round),
    versions: Array.from(ep.versions),
  };
  if (ep.kind === 'tokens') {
    return { ...common, actions: [...ep.actions], tokens: Array.from(ep.tokens), loss_mask: Array.from(ep.lossMask), transcript: ep.transcript };
  }
  return { ...common, actions: Array.from(ep.actions) };
}
