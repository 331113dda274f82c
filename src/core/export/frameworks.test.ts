/**
 * The TRL config's fields and the veRL keys are names those projects define (lists pinned from
 * their source, not from this code), and each algorithm maps to the estimator and loss it is.
 * python3 with trl is not installed here, so GRPOConfig itself is not constructed: the field
 * names are checked against TRL's source instead.
 */
import { describe, expect, it } from 'vitest';
import verlFixture from './verlKeys.fixture.json' with { type: 'json' };
import { trlArgs, unsupported, verlOverrides, TRL_ALGOS, VERL_ALGOS } from './frameworks.ts';
import { parseRunConfig, type RunConfig } from '../presets/schema.ts';

/**
 * GRPOConfig's own dataclass fields, TRL 1.10.0.dev0 (huggingface/trl f2cd5771,
 * trl/trainer/grpo_config.py), and the transformers TrainingArguments fields (main at 00349ae8,
 * src/transformers/training_args.py) an export sets.
 */
const GRPO_CONFIG_FIELDS = new Set(
  (
    'learning_rate model_init_kwargs trust_remote_code router_aux_loss_coef disable_dropout remove_unused_columns num_generations num_generations_eval max_completion_length shuffle_dataset pad_to_multiple_of generation_batch_size steps_per_generation temperature top_p top_k min_p generation_kwargs chat_template_kwargs repetition_penalty cache_implementation use_vllm vllm_mode vllm_model_impl vllm_enable_sleep_mode vllm_structured_outputs_regex vllm_server_base_url vllm_server_host vllm_server_port vllm_server_timeout vllm_group_port vllm_gpu_memory_utilization vllm_max_model_length vllm_tensor_parallel_size beta num_iterations epsilon delta epsilon_high sapo_temperature_neg sapo_temperature_pos vespo_k_pos vespo_lambda_pos vespo_k_neg vespo_lambda_neg importance_sampling_level reward_weights multi_objective_aggregation scale_rewards loss_type mask_truncated_completions sync_ref_model ref_model_mixup_alpha ref_model_sync_steps top_entropy_quantile entropy_coef use_adaptive_entropy entropy_coef_min entropy_coef_max entropy_coef_delta entropy_target max_tool_calling_iterations vllm_importance_sampling_correction vllm_importance_sampling_mode vllm_importance_sampling_clip_max vllm_importance_sampling_clip_min off_policy_mask_threshold use_bias_correction_kl log_completions log_multimodal num_completions_to_print log_unique_prompts log_completions_hub_repo use_transformers_continuous_batching transformers_continuous_batching_config use_transformers_paged vllm_importance_sampling_cap ' +
    'output_dir per_device_train_batch_size num_train_epochs max_steps lr_scheduler_type warmup_steps weight_decay adam_beta1 adam_beta2 adam_epsilon gradient_accumulation_steps max_grad_norm bf16 logging_steps report_to seed'
  ).split(' '),
);
/** TRL's loss_type values (grpo_config.py docstring) and scale_rewards values. */
const TRL_LOSS_TYPES = ['grpo', 'dr_grpo', 'dapo', 'bnpo', 'cispo', 'sapo', 'luspo', 'vespo'];
const VERL_KEYS = new Set(verlFixture.keys);

const config = (algo: Record<string, unknown>, extra: Record<string, unknown> = {}): RunConfig => {
  const r = parseRunConfig({ env: { id: 'tools/calculator' }, model: { kind: 'transformer' }, algo, ...extra });
  if (!r.ok) throw new Error(r.messages.join('\n'));
  return r.config;
};

describe('TRL GRPOConfig', () => {
  it.each(TRL_ALGOS.map((a) => [a]))('%s: every field is a GRPOConfig field, loss_type is one TRL knows', (algo) => {
    const { values } = trlArgs(config({ algo, klCoef: 0.01, tis: { enabled: true, cap: 2 } }), 4);
    for (const k of Object.keys(values)) expect(GRPO_CONFIG_FIELDS.has(k), k).toBe(true);
    expect(TRL_LOSS_TYPES).toContain(values.loss_type);
  });

  it('maps each algorithm to its loss and scaling (hand-read from grpo_trainer.py)', () => {
    const g = trlArgs(config({ algo: 'grpo', groupSize: 8, clipLow: 0.2, clipHigh: 0.28, lr: 3e-4, klCoef: 0.02 }, { rollout: { groups: 4 }, iterations: 10 }), 4).values;
    expect(g).toMatchObject({ num_generations: 8, generation_batch_size: 32, per_device_train_batch_size: 32, max_steps: 10, epsilon: 0.2, epsilon_high: 0.28, beta: 0.02, learning_rate: 3e-4, loss_type: 'dapo', scale_rewards: 'group' });
    // Dr. GRPO: no std scaling, the constant normaliser.
    expect(trlArgs(config({ algo: 'drgrpo' }), 4).values).toMatchObject({ loss_type: 'dr_grpo', scale_rewards: 'none' });
    // GSPO: the sequence ratio under the grpo loss (TRL warns that other losses weigh by length).
    expect(trlArgs(config({ algo: 'gspo' }), 4).values).toMatchObject({ importance_sampling_level: 'sequence', loss_type: 'grpo' });
    // CISPO: TRL clamps the ratio at epsilon_high itself (coef_1.clamp(max=epsilon_high)), ours at 1 + clipHigh.
    const c = trlArgs(config({ algo: 'cispo', clipHigh: 4 }), 4);
    expect(c.values).toMatchObject({ loss_type: 'cispo', epsilon_high: 5 });
    expect(c.notes.join('\n')).toMatch(/clipLow/);
    // Two minibatches: two optimizer steps per generation, each on half the batch.
    expect(trlArgs(config({ algo: 'grpo', groupSize: 8, minibatches: 2, updateEpochs: 2 }, { rollout: { groups: 4 }, iterations: 3 }), 4).values).toMatchObject({ per_device_train_batch_size: 16, num_iterations: 2, max_steps: 12 });
  });

  it('refuses algorithms GRPOTrainer does not have, naming the ones it does', () => {
    expect(unsupported(config({ algo: 'ppo' }), 'trl')).toMatch(/TRL's GRPOTrainer has no 'ppo'.*grpo, drgrpo, gspo, cispo/);
    expect(unsupported(config({ algo: 'grpo' }), 'trl')).toBeNull();
  });
});

describe('veRL overrides', () => {
  it.each(VERL_ALGOS.map((a) => [a]))('%s: every key is a key of ppo_trainer.yaml', (algo) => {
    const { values } = verlOverrides(config({ algo, klCoef: 0.01, tis: { enabled: true, cap: 2 } }), 4);
    for (const k of Object.keys(values)) expect(VERL_KEYS.has(k), k).toBe(true);
  });

  it('maps estimators, losses and KL placement (hand-read from core_algos.py)', () => {
    const g = verlOverrides(config({ algo: 'grpo', groupSize: 8, klCoef: 0.01, klEstimator: 'k3' }, { rollout: { groups: 4 } }), 4).values;
    expect(g).toMatchObject({ 'algorithm.adv_estimator': 'grpo', 'data.train_batch_size': 4, 'actor_rollout_ref.rollout.n': 8, 'actor_rollout_ref.actor.use_kl_loss': true, 'actor_rollout_ref.actor.kl_loss_coef': 0.01, 'actor_rollout_ref.actor.kl_loss_type': 'low_var_kl', 'algorithm.use_kl_in_reward': false, 'actor_rollout_ref.actor.loss_agg_mode': 'token-mean' });
    expect(verlOverrides(config({ algo: 'drgrpo' }), 4).values).toMatchObject({ 'algorithm.norm_adv_by_std_in_grpo': false, 'actor_rollout_ref.actor.loss_agg_mode': 'seq-mean-token-sum-norm' });
    const ppo = verlOverrides(config({ algo: 'ppo', klCoef: 0.05, klMode: 'reward', klEstimator: 'k1' }, { rollout: { episodes: 16 } }), 4).values;
    expect(ppo).toMatchObject({ 'algorithm.adv_estimator': 'gae', 'actor_rollout_ref.rollout.n': 1, 'data.train_batch_size': 16, 'algorithm.use_kl_in_reward': true, 'algorithm.kl_ctrl.kl_coef': 0.05, 'algorithm.kl_penalty': 'kl', 'actor_rollout_ref.actor.use_kl_loss': false });
    expect(verlOverrides(config({ algo: 'reinforcepp' }), 4).values['algorithm.adv_estimator']).toBe('reinforce_plus_plus_baseline');
    expect(unsupported(config({ algo: 'gigpo' }), 'verl')).toMatch(/veRL has no 'gigpo'/);
  });
});
