/**
 * Every metric key, declared once: what it measures, its unit, which runs log it, and the name
 * TRL's GRPOTrainer or veRL's PPO trainer gives the same quantity. The trainers drop keys
 * whose declaration excludes the run (`keepApplicable`), the dashboard's chart specs are typed by
 * `MetricKey`, tests hold every emitted and every read key to this list, ARCHITECTURE.md's
 * metric table is generated from it, and `--metric-names trl|verl` renames by it.
 *
 * A key with `<term>` or `<name>` is a pattern: one segment (no '/') stands there, a reward
 * term's or an agent's name. A literal declaration wins over a pattern that also matches it
 * (the shaping terms are literal, user reward terms fall to the pattern).
 *
 * Anchors were read off the anchors' own code: TRL's `GRPOTrainer._generate_and_score_completions`
 * and `_compute_loss` (`self._metrics[mode][...]`), veRL's `trainer/ppo/metric_utils.py`
 * (`compute_data_metrics`, `compute_timing_metrics`, `compute_throughout_metrics`) and its policy
 * losses in `core_algos.py`. An anchor is given only where the quantity is the same; `anchorNote`
 * says where the estimator or the unit of an episode differs.
 */
import { ENV_FAMILIES, type EnvFamilyName } from '../envs/families.ts';

/** The env family a run trains on. Grid-as-text runs are family 'grid' with a 'token' policy. */
export type EnvFamily = EnvFamilyName;
/** What one policy action is: an env step of an MLP policy, or a token of a transformer. */
export type PolicyKind = 'step' | 'token';

export type MetricUnit =
  | 'reward'
  | 'share'
  | 'nats'
  | 'advantage'
  | 'steps'
  | 'tokens'
  | 'turns'
  | 'calls'
  | 'count'
  | 'versions'
  | 'ratio'
  | 'loss'
  | 'norm'
  | 'lr'
  | 'index'
  | 'flag'
  | 's'
  | 'ms'
  | 'per s';

/**
 * Where a key lives: 'iteration' is a per-iteration metric (metrics.jsonl, the charts);
 * 'warm-start' is one imitation warm-start step (the warm-start charts); 'chart' is derived by
 * the app from iteration keys for drawing and is never logged.
 */
export type MetricStream = 'iteration' | 'warm-start' | 'chart';

export interface MetricDecl {
  readonly key: string;
  readonly doc: string;
  readonly unit: MetricUnit;
  readonly families: readonly EnvFamily[];
  readonly policies: readonly PolicyKind[];
  /** Logged only by some runs of those families and policies: the condition, in words. Absent: every iteration of every such run. */
  readonly when?: string;
  /** Default 'iteration'. */
  readonly stream?: MetricStream;
  /** TRL GRPOTrainer's name for the same quantity. */
  readonly trl?: string;
  /** veRL's name for the same quantity. */
  readonly verl?: string;
  /** How the anchor's definition differs from ours, where it does. */
  readonly anchorNote?: string;
}

/** Every registered family (envs/families.ts). */
const BOTH: readonly EnvFamily[] = ENV_FAMILIES.map((f) => f.name);
const GRID: readonly EnvFamily[] = ['grid'];
const TOOL: readonly EnvFamily[] = ['tool'];
/** Remote envs, and tool envs: the continuous token loop reports every text run as 'tool', remote ones included. */
const TOOL_OR_REMOTE: readonly EnvFamily[] = ['tool', 'remote'];
const ANY: readonly PolicyKind[] = ['step', 'token'];
const STEP: readonly PolicyKind[] = ['step'];
const TOKEN: readonly PolicyKind[] = ['token'];

const CORRECTION = 'rollout correction on (algo.rolloutCorrection: an IS, RS or M2PO mode, or a mismatch mode)';
const HELD_OUT = 'every heldOut.every-th iteration (heldOut.every > 0), iteration 0 included';
const GROUP = 'group algorithms (GRPO, Dr. GRPO, GSPO, CISPO, GiGPO, RLOO, ReMax)';
const ASYNC_TOKEN = 'step runs, and token runs of group algorithms on tool envs (the continuous token loop)';
const USER_TERMS = 'runs with reward-lab code (user reward terms)';

/** A built-in reward term's per-episode mean and sample std (N−1) over the batch; TRL logs both per reward function. */
function termRows<const T extends string, const F extends readonly EnvFamily[], const P extends readonly PolicyKind[]>(term: T, what: string, families: F, policies: P) {
  return [
    { key: `reward/${term}/mean`, doc: `${what}, mean per episode`, unit: 'reward', families, policies, trl: `rewards/${term}/mean` },
    { key: `reward/${term}/std`, doc: `${what}, sample std over episodes`, unit: 'reward', families, policies, trl: `rewards/${term}/std` },
  ] as const;
}

export const METRICS = [
  // reward: the shaped episode return and its parts
  { key: 'reward/mean', doc: 'total (shaped) episode reward, mean over the sampled episodes', unit: 'reward', families: BOTH, policies: ANY, trl: 'reward', verl: 'critic/score/mean', anchorNote: "veRL's score is the reward function's output before an in-reward KL penalty; ours is after shaping and user terms" },
  { key: 'reward/std', doc: 'sample std (N−1) of the total episode reward over the batch', unit: 'reward', families: BOTH, policies: ANY, trl: 'reward_std', anchorNote: "TRL (≥ 1.0) logs nanstd over the whole batch, Bessel-corrected, whatever scale_rewards is" },
  { key: 'reward/min', doc: 'lowest total episode reward in the batch', unit: 'reward', families: BOTH, policies: ANY, verl: 'critic/score/min' },
  { key: 'reward/max', doc: 'highest total episode reward in the batch', unit: 'reward', families: BOTH, policies: ANY, verl: 'critic/score/max' },
  ...termRows('outcome', "the task's own reward from the env (weight × raw)", BOTH, ANY),
  ...termRows('progress', 'progress shaping term (info.progress)', BOTH, ANY),
  ...termRows('format', 'format shaping term (−1 per malformed text action)', BOTH, TOKEN),
  ...termRows('toolCost', 'tool-cost shaping term (−1 per tool call)', TOOL, TOKEN),
  ...termRows('length', 'length shaping term (−1 per policy token beyond freeTokens)', BOTH, ANY),
  ...termRows('potential', 'potential-based shaping Σ γΦ(s′) − Φ(s) (grid potentials only)', GRID, STEP),
  { key: 'reward/<term>/mean', doc: 'a user reward term (reward lab), mean contribution per episode', unit: 'reward', families: BOTH, policies: ANY, when: USER_TERMS, trl: 'rewards/<term>/mean' },
  { key: 'reward/<term>/std', doc: 'a user reward term, sample std over episodes', unit: 'reward', families: BOTH, policies: ANY, when: USER_TERMS, trl: 'rewards/<term>/std' },
  { key: 'reward/version', doc: 'reward-lab code version that scored the iteration (1 = the starting code)', unit: 'index', families: BOTH, policies: ANY, when: USER_TERMS },
  { key: 'reward/terms_skipped', doc: '(episode, term) pairs counted 0 for a non-finite value', unit: 'count', families: BOTH, policies: ANY, when: USER_TERMS },
  { key: 'eval/reward_mean', doc: 'the eval reward: Σ of the reward.evalTerms terms per episode (log-only terms included), mean over the sampled episodes; the training reward is reward/mean', unit: 'reward', families: BOTH, policies: ANY, when: 'runs with reward-lab code and reward.evalTerms' },

  // episode: outcome and shape
  { key: 'episode/success_rate', doc: "share of sampled episodes whose last step reported info.success", unit: 'share', families: BOTH, policies: ANY },
  { key: 'episode/length_mean', doc: 'policy tokens per episode (grids: one per step)', unit: 'tokens', families: BOTH, policies: ANY, trl: 'completions/mean_length', verl: 'response_length/mean', anchorNote: 'the anchors count one completion; an episode here is every action of a multi-turn episode' },
  { key: 'episode/turns_mean', doc: 'env steps (turns) per episode', unit: 'turns', families: BOTH, policies: ANY, verl: 'num_turns/mean' },
  { key: 'episode/truncated_ratio', doc: "share of episodes cut by the env's step limit before terminating", unit: 'share', families: BOTH, policies: ANY, trl: 'completions/clipped_ratio', verl: 'response_length/clip_ratio', anchorNote: "the anchors' completion cut at the maximum length is our episode cut at the step limit" },
  { key: 'episode/distinct_ratio', doc: 'share of distinct action sequences among the sampled episodes', unit: 'share', families: BOTH, policies: ANY },
  { key: 'episode/forced_end_ratio', doc: 'share of sampled episodes with an action cut at maxActionTokens', unit: 'share', families: BOTH, policies: TOKEN },
  { key: 'episode/context_limited_ratio', doc: "share of sampled episodes ended by the model's context length", unit: 'share', families: BOTH, policies: TOKEN },

  // tools
  { key: 'tools/call_frequency', doc: 'tool calls per episode', unit: 'calls', families: TOOL, policies: TOKEN, trl: 'tools/call_frequency', verl: 'tool_call_counts/mean' },
  { key: 'tools/failure_frequency', doc: 'failed tool calls over all tool calls in the batch (0 without calls)', unit: 'share', families: TOOL, policies: TOKEN, trl: 'tools/failure_frequency' },
  { key: 'tools/recovery_rate', doc: 'failure runs (failed calls in a row) ended by a successful call (info.recovered), over all failure runs', unit: 'share', families: TOOL, policies: TOKEN, when: 'iterations whose batch had a failed tool call' },

  // adv
  { key: 'adv/mean', doc: 'advantage over policy tokens (steps)', unit: 'advantage', families: BOTH, policies: ANY, verl: 'critic/advantages/mean' },
  { key: 'adv/std', doc: 'sample std of the advantage over policy tokens (steps)', unit: 'advantage', families: BOTH, policies: ANY },
  { key: 'adv/abs_mean', doc: 'mean |advantage| over policy tokens (steps)', unit: 'advantage', families: BOTH, policies: ANY },

  // groups
  { key: 'groups/frac_zero_std', doc: 'share of groups whose rewards are all equal (no learning signal)', unit: 'share', families: BOTH, policies: ANY, when: GROUP, trl: 'frac_reward_zero_std' },
  { key: 'groups/reward_std_mean', doc: 'mean over groups of the in-group reward std', unit: 'reward', families: BOTH, policies: ANY, when: GROUP, anchorNote: "no anchor logs it: TRL's reward_std is the batch std (reward/std)" },
  { key: 'groups/dropped', doc: 'zero-spread groups dropped by dynamic sampling this iteration', unit: 'count', families: BOTH, policies: ANY, when: GROUP },
  { key: 'groups/sampling_rounds', doc: 'sampling rounds used this iteration (1 without dynamic sampling)', unit: 'count', families: BOTH, policies: ANY, when: `${GROUP}; every token run` },
  { key: 'groups/step_groups_mean', doc: 'GiGPO: distinct anchor states per group of episodes', unit: 'count', families: BOTH, policies: ANY, when: 'GiGPO' },
  { key: 'groups/grouped_step_share', doc: 'GiGPO: share of steps whose anchor state was visited by another episode of the group', unit: 'share', families: BOTH, policies: ANY, when: 'GiGPO' },

  // actor
  { key: 'actor/entropy', doc: 'mean policy entropy over policy tokens (steps) under the learner', unit: 'nats', families: BOTH, policies: ANY, trl: 'entropy', verl: 'actor/entropy' },
  { key: 'actor/rollout_entropy', doc: 'mean behaviour entropy on the sampled tokens (steps)', unit: 'nats', families: BOTH, policies: ANY },
  { key: 'actor/pg_loss', doc: 'policy-gradient loss, mean over the update’s minibatches', unit: 'loss', families: BOTH, policies: ANY, trl: 'policy_loss', verl: 'actor/pg_loss', anchorNote: "TRL's policy_loss adds β·KL to the reference (ours: actor/kl_ref) when beta > 0; the same at its default beta = 0" },
  { key: 'actor/loss', doc: 'total loss (policy − entropy bonus + KL + value terms)', unit: 'loss', families: BOTH, policies: ANY, trl: 'loss' },
  { key: 'actor/grad_norm', doc: 'global gradient L2 norm before clipping', unit: 'norm', families: BOTH, policies: ANY, trl: 'grad_norm', verl: 'actor/grad_norm' },
  { key: 'actor/lr', doc: 'learning rate in force', unit: 'lr', families: BOTH, policies: ANY, trl: 'learning_rate', verl: 'actor/lr' },
  { key: 'actor/clipfrac_low', doc: 'share of policy tokens clipped below (ratio < 1 − ε with a negative advantage)', unit: 'share', families: BOTH, policies: ANY, trl: 'clip_ratio/low_mean', },
  { key: 'actor/clipfrac', doc: 'share of policy tokens whose ratio clip cut the gradient, either side (clipfrac_low + clipfrac_high)', unit: 'share', families: BOTH, policies: ANY, trl: 'clip_ratio/region_mean', verl: 'actor/pg_clipfrac', anchorNote: "CISPO: any ratio outside the region (TRL logs cispo_clip_ratio there instead)" },
  { key: 'actor/clipfrac_high', doc: 'share of policy tokens clipped above (ratio > 1 + ε_high with a positive advantage)', unit: 'share', families: BOTH, policies: ANY, trl: 'clip_ratio/high_mean' },
  { key: 'actor/approx_kl', doc: 'k3 estimate of KL between the behaviour and the updated policy, per token', unit: 'nats', families: BOTH, policies: ANY, verl: 'actor/ppo_kl', anchorNote: "veRL's ppo_kl is the k1 estimate (mean log-ratio) of the same KL" },
  { key: 'actor/kl_ref', doc: 'k3 estimate of KL to the reference policy (or to the teacher in a distill stage), per token', unit: 'nats', families: BOTH, policies: ANY, when: 'a KL term to a reference (klCoef > 0, KL as reward, distill stages)', trl: 'kl', verl: 'actor/kl_loss' },

  // critic
  { key: 'critic/value_loss', doc: "value head's loss", unit: 'loss', families: BOTH, policies: ANY, when: 'PPO (a value head)', verl: 'critic/vf_loss' },
  { key: 'critic/explained_variance', doc: '1 − Var(returns − values) / Var(returns) over policy tokens (NaN for constant returns)', unit: 'ratio', families: BOTH, policies: ANY, when: 'PPO (a value head)', verl: 'critic/vf_explained_var' },

  // async: off-policy shift
  { key: 'async/staleness_mean', doc: 'policy versions between behaviour and learner, mean per token (step)', unit: 'versions', families: BOTH, policies: ANY },
  { key: 'async/staleness_max', doc: 'largest staleness in the batch', unit: 'versions', families: BOTH, policies: ANY },
  { key: 'async/is_ratio_mean', doc: 'importance ratio π_learner / μ_behaviour, mean over policy tokens (steps)', unit: 'ratio', families: BOTH, policies: ANY, trl: 'sampling/importance_sampling_ratio/mean' },
  { key: 'async/is_ratio_max', doc: 'largest importance ratio in the batch', unit: 'ratio', families: BOTH, policies: ANY, trl: 'sampling/importance_sampling_ratio/max' },
  { key: 'async/is_clipfrac', doc: 'share of importance ratios truncated at the TIS cap', unit: 'share', families: BOTH, policies: ANY },
  { key: 'async/partial_ratio', doc: 'share of episodes generated under more than one policy version', unit: 'share', families: BOTH, policies: ANY },
  { key: 'async/episodes_aborted', doc: 'episodes dropped this iteration as too stale', unit: 'count', families: TOOL, policies: TOKEN, when: 'the continuous token loop' },
  { key: 'async/kv_evictions', doc: 'KV-cache rows evicted this iteration', unit: 'count', families: TOOL, policies: TOKEN, when: 'the continuous token loop' },
  { key: 'async/in_flight', doc: 'episodes still being decoded when the iteration ended', unit: 'count', families: TOOL, policies: TOKEN, when: 'the continuous token loop' },

  // mismatch
  { key: 'mismatch/logprob_abs_diff_mean', doc: 'mean |rollout − learner| log-prob of the same tokens at one policy version', unit: 'nats', families: BOTH, policies: ANY, trl: 'sampling/sampling_logp_difference/mean' },
  { key: 'mismatch/logprob_abs_diff_max', doc: 'largest |rollout − learner| log-prob in the batch', unit: 'nats', families: BOTH, policies: ANY, trl: 'sampling/sampling_logp_difference/max' },

  // rollout correction (algos/correction/): ρ = π_old/μ at every trained step, π_old the learner's weights before the update
  { key: 'correction/is_ess', doc: 'effective sample size of the IS weights, normalised: 1 / mean((w/mean w)²) with w = ρ clamped to [1/isCap, isCap] (1 = all equal)', unit: 'share', families: GRID, policies: STEP, when: CORRECTION, verl: 'rollout_corr/rollout_is_eff_sample_size' },
  { key: 'correction/is_ratio_fraction_high', doc: 'share of IS weights (steps, or episodes for sequence-level IS) above isCap before truncation', unit: 'share', families: GRID, policies: STEP, when: CORRECTION, verl: 'rollout_corr/rollout_is_ratio_fraction_high' },
  { key: 'correction/rs_masked_fraction', doc: 'share of trained steps rejected by rejection sampling (0 with rs off)', unit: 'share', families: GRID, policies: STEP, when: CORRECTION, verl: 'rollout_corr/rollout_rs_masked_fraction' },
  { key: 'correction/second_moment_masked_fraction', doc: 'share of trained steps masked by M2PO (0 with m2po off)', unit: 'share', families: GRID, policies: STEP, when: CORRECTION },
  { key: 'correction/log_ppl_abs_diff', doc: 'mean over episodes of |mean log μ − mean log π_old| over the episode', unit: 'nats', families: GRID, policies: STEP, when: CORRECTION, verl: 'rollout_corr/log_ppl_abs_diff' },
  { key: 'correction/chi_squared_token', doc: 'token-level χ² divergence of π_old from μ: mean of ρ² − 1 over trained steps', unit: 'ratio', families: GRID, policies: STEP, when: CORRECTION, verl: 'rollout_corr/chi2_token' },

  // perf
  { key: 'perf/env_steps_per_s', doc: 'env steps per second of rollout busy time', unit: 'per s', families: BOTH, policies: ANY },
  { key: 'perf/tokens_per_s', doc: 'policy tokens (steps) per second of rollout busy time', unit: 'per s', families: BOTH, policies: ANY },
  { key: 'perf/rollout_s', doc: 'rollout busy time this iteration', unit: 's', families: BOTH, policies: ANY, verl: 'timing_s/gen' },
  { key: 'perf/train_s', doc: 'learner time this iteration (everything after the rollout: off-policy weights, update, weight sync)', unit: 's', families: BOTH, policies: ANY },
  { key: 'perf/iteration_s', doc: 'wall time of the iteration', unit: 's', families: BOTH, policies: ANY, verl: 'perf/time_per_step' },
  { key: 'perf/eval_s', doc: 'wall time of the held-out pass@1 / pass@k evaluation before this iteration\'s update', unit: 's', families: BOTH, policies: ANY, when: HELD_OUT },
  { key: 'eval/pass_at_one', doc: 'held-out pass@1 before this iteration\'s update: mean success of heldOut.k samples (temperature 1) on each of heldOut.questions held-out seeds', unit: 'share', families: BOTH, policies: ANY, when: HELD_OUT },
  { key: 'eval/pass_at_k', doc: 'held-out pass@k before this iteration\'s update: share of the heldOut.questions held-out seeds solved by at least one of their heldOut.k samples', unit: 'share', families: BOTH, policies: ANY, when: HELD_OUT },
  { key: 'perf/learner_idle_ratio', doc: 'share of the iteration the learner waited for rollouts', unit: 'share', families: BOTH, policies: ANY },
  { key: 'perf/rollout_idle_ratio', doc: 'share of the iteration the rollout workers waited for weights', unit: 'share', families: BOTH, policies: ANY },
  { key: 'perf/episodes_per_s', doc: 'trained episodes per second of wall time', unit: 'per s', families: BOTH, policies: ANY, when: ASYNC_TOKEN },
  { key: 'perf/tis_s', doc: 'time spent on off-policy weights (importance sampling) this iteration', unit: 's', families: BOTH, policies: ANY, when: ASYNC_TOKEN },
  { key: 'perf/update_s', doc: 'time spent in gradient steps this iteration', unit: 's', families: GRID, policies: STEP, verl: 'timing_s/update_actor' },
  { key: 'perf/kv_cache_hit_rate', doc: 'share of context tokens served from the KV cache, not recomputed', unit: 'share', families: BOTH, policies: TOKEN },
  { key: 'perf/env_wire_ms', doc: 'real time one env step took over the network (request to reply), mean over the batch\'s steps', unit: 'ms', families: TOOL_OR_REMOTE, policies: TOKEN, when: 'remote envs (remote/openenv) only' },
  { key: 'perf/tool_wait_s', doc: 'time no row could decode because every episode waited on a tool', unit: 's', families: TOOL, policies: TOKEN, when: 'the continuous token loop' },

  // train: learner bookkeeping
  { key: 'train/updates', doc: 'gradient steps this iteration', unit: 'count', families: BOTH, policies: ANY },
  { key: 'train/policy_version', doc: 'policy version after the iteration', unit: 'index', families: BOTH, policies: ANY },
  { key: 'train/finite', doc: '1 when every update of the iteration had a finite loss, gradient and weights (mean over updates)', unit: 'flag', families: BOTH, policies: ANY },
  { key: 'train/stale_rows', doc: 'step rows older than the staleness bound, dropped before the update', unit: 'count', families: GRID, policies: STEP },
  { key: 'train/batch_episodes', doc: 'episodes in the trained (filtered) batch', unit: 'count', families: BOTH, policies: TOKEN },
  { key: 'train/batch_success_rate', doc: 'success rate of the trained (filtered) batch', unit: 'share', families: BOTH, policies: TOKEN },

  // algorithm- and feature-specific
  { key: 'pipeline/stage', doc: 'staged runs: the stage (1-based) the iteration trained in', unit: 'index', families: BOTH, policies: ANY, when: 'staged runs' },
  { key: 'distill/teacher_prob', doc: "the teacher's mean probability of the action (token) the student took", unit: 'share', families: BOTH, policies: ANY, when: 'distill stages' },
  { key: 'distill/kl', doc: "exact reverse KL(π_student‖π_teacher) over the vocabulary, mean over the student's policy tokens, at the weights before the update (the loss per token)", unit: 'nats', families: BOTH, policies: TOKEN, when: 'distill stages with a transformer student' },
  { key: 'schedule/stage', doc: 'progressive shaping: the schedule stage in force', unit: 'index', families: BOTH, policies: ANY, when: 'a progressive shaping schedule' },
  { key: 'remax/greedy_reward_mean', doc: "ReMax: mean reward of the groups' greedy baseline episodes", unit: 'reward', families: BOTH, policies: ANY, when: 'ReMax' },
  { key: 'remax/greedy_success_rate', doc: 'ReMax: success rate of the greedy baseline episodes', unit: 'share', families: BOTH, policies: ANY, when: 'ReMax' },
  { key: 'budget/prompts', doc: 'prompts (groups) sampled this iteration', unit: 'count', families: TOOL, policies: TOKEN, when: 'a prompt pool (rollout.budget)' },
  { key: 'budget/episodes_per_group_max', doc: 'most episodes one prompt got', unit: 'count', families: TOOL, policies: TOKEN, when: 'a prompt pool (rollout.budget)' },
  { key: 'budget/episodes_per_group_min', doc: 'fewest episodes one prompt got', unit: 'count', families: TOOL, policies: TOKEN, when: 'a prompt pool (rollout.budget)' },
  { key: 'budget/uncertain_share', doc: 'share of episodes given to prompts whose success estimate was in [0.2, 0.8]', unit: 'share', families: TOOL, policies: TOKEN, when: 'a prompt pool (rollout.budget)' },
  { key: 'budget/zero_std_episode_share', doc: 'share of episodes in groups whose rewards were all equal', unit: 'share', families: TOOL, policies: TOKEN, when: 'a prompt pool (rollout.budget)' },
  { key: 'budget/pool_success_est', doc: 'mean success estimate over the pool after the update (unseen prompts 0.5)', unit: 'share', families: TOOL, policies: TOKEN, when: 'a prompt pool (rollout.budget)' },
  { key: 'agents/<name>/adv_mean', doc: "advantage over that agent's steps", unit: 'advantage', families: GRID, policies: STEP, when: 'multi-agent envs (EnvSpec.agents)' },
  { key: 'agents/<name>/adv_abs_mean', doc: "mean |advantage| over that agent's steps", unit: 'advantage', families: GRID, policies: STEP, when: 'multi-agent envs (EnvSpec.agents)' },
  { key: 'agents/<name>/adv_share', doc: "that agent's share of Σ|advantage| over the batch", unit: 'share', families: GRID, policies: STEP, when: 'multi-agent envs (EnvSpec.agents)' },
  { key: 'agents/<name>/entropy', doc: "rollout entropy over that agent's steps", unit: 'nats', families: GRID, policies: STEP, when: 'multi-agent envs (EnvSpec.agents)' },
  { key: 'agents/<name>/steps_mean', doc: "that agent's steps per episode", unit: 'steps', families: GRID, policies: STEP, when: 'multi-agent envs (EnvSpec.agents)' },
  { key: 'agents/<name>/subgoal_rate', doc: 'share of episodes in which that agent reached its own subgoal (info.subgoal)', unit: 'share', families: GRID, policies: STEP, when: 'multi-agent envs (EnvSpec.agents)' },
  { key: 'agents/<name>/subgoal_step_mean', doc: 'mean env step (1-based) at which that agent first reached its subgoal', unit: 'steps', families: GRID, policies: STEP, when: 'multi-agent envs (EnvSpec.agents)' },

  // warm start and chart-only keys
  { key: 'imitation/ce_loss', doc: "cross-entropy of the expert's tokens per policy token at one warm-start step", unit: 'nats', families: BOTH, policies: TOKEN, when: 'an imitation warm start', stream: 'warm-start' },
  { key: 'imitation/target_prob_mean', doc: "mean probability the model gives the expert's next token at one warm-start step", unit: 'share', families: BOTH, policies: TOKEN, when: 'an imitation warm start', stream: 'warm-start' },
  { key: 'reward/lo', doc: "reward band's lower edge: max(reward/mean − reward/std, reward/min)", unit: 'reward', families: BOTH, policies: ANY, stream: 'chart' },
  { key: 'reward/hi', doc: "reward band's upper edge: min(reward/mean + reward/std, reward/max)", unit: 'reward', families: BOTH, policies: ANY, stream: 'chart' },
] as const satisfies readonly MetricDecl[];

type Declared = (typeof METRICS)[number]['key'];

/** A declared key as a type: a pattern's `<term>`/`<name>` becomes any string. */
type Expand<K extends string> = K extends `${infer A}<${string}>${infer B}` ? `${A}${string}${Expand<B>}` : K;

/** Every key a run may log, a warm start may report, or a chart may draw. */
export type MetricKey = Expand<Declared>;

/** Per-iteration metric keys (no warm-start or chart-only keys). */
export type IterationKey = Expand<Exclude<(typeof METRICS)[number], { stream: string }>['key']>;
