/**
 * The reward lab's runtime side: from a run config's `reward` section to the trainer's
 * `RewardLab` (a QuickJS sandbox over `reward.code`), shared by the CLI and the training worker.
 */
import { makeEnv } from '../../core/envs/index.ts';
import type { GridEnv } from '../../core/envs/types.ts';
import { familyOf } from '../../core/envs/families.ts';
import type { RunConfig } from '../../core/presets/schema.ts';
import { sampleGridEpisode, sampleTextEpisode, type ScoreEpisode } from '../../core/reward/stepRecord.ts';
import { makeTextEnv } from '../../core/envs/grid/textAdapter.ts';
import { rewardTermNameIssues, type RewardLab } from '../../core/reward/userTerms.ts';
import { RewardTermError } from '../../core/reward/rewardTerms.ts';
import { SHAPING_TERMS } from '../../core/reward/shaping.ts';
import { createRewardSandbox } from './quickjs.ts';

export { createRewardSandbox, DEFAULT_SANDBOX, type SandboxOptions } from './quickjs.ts';

/** Actions of the dry run: turns and moves, so terms see a few different states (grid action indices). */
const DRY_RUN_ACTIONS = [2, 1, 2, 0, 2, 2, 5, 3];
/**
 * Actions of a text run's dry run: a malformed action, a tool call (malformed on envs without
 * `calc`: either way a turn with tool facts), a move (grids as text; malformed on tool envs) and
 * an answer, so terms reading `info.*` and `actionName` see each kind of turn.
 */
const DRY_RUN_TEXT_ACTIONS = ['hello', 'calc(1+2)', 'forward', 'answer(3)'];

/**
 * The run's user reward terms, or undefined when `reward.code` is empty. Rejects with a
 * `RewardTermError` naming the problem before anything trains: the module does not load (syntax,
 * a non-function export, a top-level loop …), or a term throws or loops on a dry run over a few
 * steps of a real episode of the run's env (so `while (true) {}` or `fetch(…)` is caught in
 * milliseconds, not after the first batch is collected). Non-finite values are left to the run's
 * `onNonFinite` policy.
 */
export async function rewardLabFor(config: Pick<RunConfig, 'reward' | 'env' | 'seed' | 'model'>, onProblem?: (message: string) => void, version = 1): Promise<RewardLab | undefined> {
  if (config.reward.code.trim() === '') return undefined;
  const scorer = await createRewardSandbox(config.reward.code, { callTimeoutMs: config.reward.callTimeoutMs });
  try {
    const names = rewardTermNameIssues(config.reward, scorer.terms, SHAPING_TERMS);
    if (names.length) throw new RewardTermError('load', names.join('; '));
    await scorer.score([dryRunEpisode(config)]);
  } catch (e) {
    scorer.close();
    throw e;
  }
  return { scorer, onNonFinite: config.reward.onNonFinite, onProblem, version, logOnly: config.reward.logOnly, evalTerms: config.reward.evalTerms };
}

let warmed: Promise<void> | null = null;

/**
 * Loads the sandbox's WebAssembly once, off the training path (the training worker calls it
 * after a run's first iteration), so the first Apply of reward code mid-run costs what later ones
 * do: in the tab the first one fetched and compiled QuickJS inside a busy worker (14.7 s at load
 * ~10, the second 1.2 s). Best effort: a failure here is left to Apply to report.
 */
export function warmRewardSandbox(): Promise<void> {
  warmed ??= createRewardSandbox('export const warm = () => 0;').then(
    (s) => s.close(),
    () => undefined,
  );
  return warmed;
}

/** A few steps of a real episode of the run's env, recorded as its trainer would: grid steps for an mlp policy, text turns for a transformer (tool envs, grids as text). */
function dryRunEpisode(config: Pick<RunConfig, 'env' | 'seed' | 'model'>): ScoreEpisode {
  const env = makeEnv(config.env.id, config.env.kwargs);
  if (familyOf(env.spec).plays[config.model.kind]?.data === 'steps') return sampleGridEpisode(env as GridEnv, config.env.id, config.seed, DRY_RUN_ACTIONS);
  return sampleTextEpisode(makeTextEnv(config.env.id, config.env.kwargs), config.env.id, config.seed, DRY_RUN_TEXT_ACTIONS);
}
