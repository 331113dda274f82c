/** A sampled episode the training worker sent the page, as a trajectories.jsonl line (the line the CLI writes: core/runs/trajectoryLine.ts). */
import type { TrajectoryLine } from '../../core/runs/format.ts';
import { trajectoryLine as lineOf } from '../../core/runs/trajectoryLine.ts';
import type { EpisodeView } from './types.ts';

export function trajectoryLine(iteration: number, env: string, ep: EpisodeView): TrajectoryLine {
  return lineOf(iteration, env, ep, ep.reward, ep.advantage);
}
