/** `npm run serve -- --reward-file FILE`: the reward module POST /score scores with, loaded into the reward lab's sandbox. */
import { existsSync, readFileSync } from 'node:fs';
import { createRewardSandbox } from '../runtime/rewardSandbox/index.ts';
import { episodeScorer, type EpisodeScorer } from '../server/score.ts';
import { UsageError } from './args.ts';

/** The /score handler for a reward module file; a module that does not load is a usage error naming the problem. */
export async function scorerFromFile(path: string): Promise<EpisodeScorer> {
  if (!existsSync(path)) throw new UsageError(`--reward-file ${path}: no such file`);
  try {
    return episodeScorer(await createRewardSandbox(readFileSync(path, 'utf8')));
  } catch (e) {
    throw new UsageError(`--reward-file ${path}: ${(e as Error).message}`);
  }
}
