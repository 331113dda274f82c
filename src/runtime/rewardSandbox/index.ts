/**
 * The reward lab's runtime side: from a run config's `reward` section to the trainer's
 * `RewardLab` (a QuickJS sandbox over `reward.code`), shared by the CLI and the training worker.
 */
import type { RunConfig } from '../../core/presets/schema.ts';
import type { RewardLab } from '../../core/trainer/stepTrainer.ts';
import { createRewardSandbox } from './quickjs.ts';

export { createRewardSandbox, DEFAULT_SANDBOX, type SandboxOptions } from './quickjs.ts';

/**
 * The run's user reward terms, or undefined when `reward.code` is empty. Rejects with a
 * `RewardTermError` naming the problem (syntax, a non-function export, a top-level loop …)
 * before anything trains.
 */
export async function rewardLabFor(config: Pick<RunConfig, 'reward'>, onProblem?: (message: string) => void, version = 1): Promise<RewardLab | undefined> {
  if (config.reward.code.trim() === '') return undefined;
  const scorer = await createRewardSandbox(config.reward.code, { callTimeoutMs: config.reward.callTimeoutMs });
  return { scorer, onNonFinite: config.reward.onNonFinite, onProblem, version };
}
