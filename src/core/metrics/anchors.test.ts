/**
 * Every TRL and veRL name the registry maps to is a name that trainer logs today, pinned from its
 * source (not from our registry), and the names whose meaning is easy to get wrong are checked
 * against a formula written here.
 *
 * Versions read: TRL 1.10.0.dev0 (huggingface/trl main at f2cd5771, 2026-07-24),
 * trl/trainer/grpo_trainer.py `self._metrics[mode][...]` plus the `loss`, `grad_norm` and
 * `learning_rate` that transformers' Trainer.log adds; veRL 0.8.0.dev (volcengine/verl main at
 * b178a3cd, 2026-01-29), trainer/ppo/metric_utils.py, trainer/ppo/core_algos.py (policy losses'
 * pg_metrics), workers/actor/dp_actor.py, trainer/ppo/rollout_corr_helper.py, workers/critic/dp_critic.py, workers/fsdp_workers.py.
 */
import { describe, expect, it } from 'vitest';
import { anchorName, renameRow } from './lookup.ts';
import { METRICS, type MetricDecl } from './registry.ts';
import { buildIterationMetrics } from './iterationMetrics.ts';

const ALL: readonly MetricDecl[] = METRICS;

/** Names TRL's GRPOTrainer logs (`<term>` = a reward function's __name__). */
const TRL_LOGGED = new Set([
  'num_tokens',
  'completions/mean_length',
  'completions/min_length',
  'completions/max_length',
  'completions/clipped_ratio',
  'completions/mean_terminated_length',
  'completions/min_terminated_length',
  'completions/max_terminated_length',
  'tools/call_frequency',
  'tools/failure_frequency',
  'rewards/<term>/mean',
  'rewards/<term>/std',
  'reward',
  'reward_std',
  'frac_reward_zero_std',
  'sampling/sampling_logp_difference/mean',
  'sampling/sampling_logp_difference/max',
  'sampling/importance_sampling_ratio/min',
  'sampling/importance_sampling_ratio/mean',
  'sampling/importance_sampling_ratio/max',
  'kl',
  'clip_ratio',
  'policy_loss',
  'entropy_coef',
  'aux_loss',
  'entropy',
  'clip_ratio/low_mean',
  'clip_ratio/high_mean',
  'clip_ratio/region_mean',
  'clip_ratio/low_min',
  'clip_ratio/high_max',
  'cispo_clip_ratio',
  // transformers.Trainer
  'loss',
  'grad_norm',
  'learning_rate',
]);

/** Names veRL's PPO trainer logs. */
const VERL_LOGGED = new Set([
  // trainer/ppo/rollout_corr_helper.py (algorithm.rollout_correction), prefixed rollout_corr/
  'rollout_corr/rollout_is_eff_sample_size',
  'rollout_corr/rollout_is_ratio_fraction_high',
  'rollout_corr/rollout_rs_masked_fraction',
  'rollout_corr/log_ppl_abs_diff',
  'rollout_corr/chi2_token',
  'critic/score/mean',
  'critic/score/max',
  'critic/score/min',
  'critic/rewards/mean',
  'critic/advantages/mean',
  'critic/advantages/max',
  'critic/advantages/min',
  'critic/returns/mean',
  'critic/values/mean',
  'critic/vf_explained_var',
  'response_length/mean',
  'response_length/max',
  'response_length/min',
  'response_length/clip_ratio',
  'prompt_length/mean',
  'num_turns/mean',
  'tool_call_counts/mean',
  'timing_s/gen',
  'timing_s/update_actor',
  'timing_s/step',
  'perf/total_num_tokens',
  'perf/time_per_step',
  'perf/throughput',
  'actor/pg_clipfrac',
  'actor/ppo_kl',
  'actor/pg_clipfrac_lower',
  'actor/entropy',
  'actor/pg_loss',
  'actor/kl_loss',
  'actor/kl_coef',
  'actor/grad_norm',
  'actor/lr',
  'critic/vf_loss',
  'critic/vf_clipfrac',
  'critic/grad_norm',
]);

const mapped = (naming: 'trl' | 'verl') => ALL.filter((d) => d[naming] !== undefined).map((d) => [d.key, d[naming] as string] as const);

describe('TRL names', () => {
  it.each(mapped('trl'))('%s -> %s is a name GRPOTrainer logs', (ours, trl) => {
    // A reward term's name (built-in or a user's) stands where TRL has the reward function's name.
    expect(TRL_LOGGED.has(trl.replace(/^rewards\/[^/]+\//, 'rewards/<term>/')), trl).toBe(true);
    expect(anchorName(ours.replace('<term>', 'calcCall'), 'trl')).toBe(trl.replace('<term>', 'calcCall'));
  });

  it('maps the names the issue found missing', () => {
    // A map that dropped any of these (or kept reward_std on the in-group mean) fails here.
    const byTrl = new Map(mapped('trl').map(([o, t]) => [t, o]));
    expect(byTrl.get('reward_std')).toBe('reward/std');
    expect(byTrl.get('policy_loss')).toBe('actor/pg_loss');
    expect(byTrl.get('clip_ratio/region_mean')).toBe('actor/clipfrac');
    expect(byTrl.get('tools/call_frequency')).toBe('tools/call_frequency');
    expect(byTrl.get('tools/failure_frequency')).toBe('tools/failure_frequency');
  });

  it("reward_std is the batch std of the total reward (nanstd, Bessel), not the mean in-group std", () => {
    // Two groups of two: rewards [0, 1] and [3, 3]. Batch: mean 1.75, Σ(x−m)² = 3.0625+0.5625+1.5625+1.5625 = 6.75,
    // sample var 6.75/3 = 2.25, std 1.5. Mean in-group std: (0.7071 + 0) / 2 = 0.3536 (what the old map wrote).
    const episodes = [0, 1, 3, 3].map((reward) => ({ reward, success: reward > 2, steps: 1, policyTokens: 1, truncated: false, toolCalls: 0, toolFailures: 0 }));
    const m = buildIterationMetrics({ episodes, groups: { fracZeroStd: 0.5, rewardStdMean: Math.SQRT1_2 / 2, nGroups: 2, zeroStdGroups: 1 } });
    const trl = renameRow(m as Record<string, number>, 'trl');
    expect(trl.reward_std).toBeCloseTo(1.5, 12);
    expect(trl.frac_reward_zero_std).toBe(0.5);
  });
});

describe('veRL names', () => {
  it.each(mapped('verl'))('%s -> %s is a name veRL logs', (ours, verl) => {
    expect(VERL_LOGGED.has(verl), verl).toBe(true);
    expect(anchorName(ours, 'verl')).toBe(verl);
  });

  it('actor/pg_clipfrac is mapped (the low and high cuts together)', () => {
    expect(new Map(mapped('verl').map(([o, v]) => [v, o])).get('actor/pg_clipfrac')).toBe('actor/clipfrac');
  });
});
