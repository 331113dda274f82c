/**
 * A run's algorithm and hyperparameters under TRL's and veRL's names: `trlArgs` gives
 * `GRPOConfig(**args)` keyword arguments (TRL's own fields and the transformers
 * `TrainingArguments` it extends), `verlOverrides` gives veRL hydra overrides (`key=value`, the
 * keys of verl/trainer/config/ppo_trainer.yaml). Each says, in `notes`, what did not translate.
 *
 * Read off TRL 1.10.0.dev0 (trl/trainer/grpo_config.py and grpo_trainer.py at f2cd5771),
 * transformers main (training_args.py at 00349ae8) and veRL 0.8.0.dev
 * (verl/trainer/config/_generated_ppo_trainer.yaml and trainer/ppo/core_algos.py at b178a3cd).
 */
import type { AlgoConfig } from '../algos/config.ts';
import type { RunConfig } from '../presets/schema.ts';

/** Algorithms each framework can run as the same estimator and loss. */
export const TRL_ALGOS = ['grpo', 'drgrpo', 'gspo', 'cispo'] as const;
export const VERL_ALGOS = ['grpo', 'drgrpo', 'gspo', 'cispo', 'ppo', 'rloo', 'remax', 'reinforcepp'] as const;

export interface Mapped {
  /** Field or key → value, in the order written. */
  values: Record<string, unknown>;
  /** One line per setting that did not translate (or translated with a difference). */
  notes: string[];
}

/** Why a run cannot be exported to `to` (its algorithm has no counterpart there), or null. */
export function unsupported(config: RunConfig, to: 'trl' | 'verl'): string | null {
  const algos: readonly string[] = to === 'trl' ? TRL_ALGOS : VERL_ALGOS;
  if (algos.includes(config.algo.algo)) return null;
  const name = to === 'trl' ? "TRL's GRPOTrainer" : 'veRL';
  return `${name} has no '${config.algo.algo}' (its estimator and loss have no counterpart there); ${to} exports support ${algos.join(', ')}`;
}

/** Notes every export shares: settings neither framework has. */
function commonNotes(c: RunConfig): string[] {
  const a = c.algo;
  const out: string[] = [];
  if (a.dynamicSampling.enabled) out.push(`algo.dynamicSampling (drop zero-spread groups, up to ${a.dynamicSampling.maxRounds} sampling rounds): not translated (veRL's DAPO recipe has filter_groups; the trainers exported here do not)`);
  if (c.warmStart) out.push(`warmStart (${c.warmStart.steps} imitation steps on expert episodes before RL): not translated; fine-tune on expert episodes (GET /state gives expert_action) before this run`);
  if (c.stages.length > 0) out.push(`stages (${c.stages.length}): not translated; the export is the run's first stage settings only`);
  if (c.schedule !== null) out.push('schedule (progressive shaping weights): not translated; the reward terms keep their first-stage weights');
  if (c.rollout.mode === 'async') out.push(`rollout.mode async (maxStaleness ${c.rollout.maxStaleness}): not translated; both trainers are set up synchronous here`);
  if (c.rollout.constrained) out.push("rollout.constrained (sampling masked to the env's action grammar): not translated");
  if (c.rollout.budget.mode === 'adaptive') out.push('rollout.budget adaptive (episodes go to prompts of uncertain outcome): not translated');
  if (c.rollout.tree.enabled) out.push('rollout.tree (branching rollouts): not translated');
  if (c.model.kind === 'mlp') out.push(`model: an MLP policy over grid cells (hidden ${c.model.hidden.join('×')}) has no counterpart in an LLM trainer; set the model path to a causal LM`);
  else out.push(`model: a ${c.model.nLayers}-layer, d ${c.model.dModel} transformer trained from scratch on the project's own vocabulary; TRL and veRL fine-tune a pretrained causal LM (set its path)`);
  return out;
}

/** Our aggregation as TRL's loss_type. */
function trlLossType(a: AlgoConfig): string {
  if (a.algo === 'cispo') return 'cispo';
  if (a.algo === 'gspo') return 'grpo';
  return a.aggregation === 'token' ? 'dapo' : a.aggregation === 'sequence' ? 'grpo' : 'dr_grpo';
}

/** GRPOConfig keyword arguments for a run (call `unsupported` first). */
export function trlArgs(c: RunConfig, maxTurns: number): Mapped {
  const a = c.algo;
  const notes = commonNotes(c);
  const batch = c.rollout.groups * a.groupSize;
  const perDevice = batch % a.minibatches === 0 ? batch / a.minibatches : batch;
  if (perDevice === batch && a.minibatches > 1) notes.push(`algo.minibatches ${a.minibatches} does not divide the batch (${batch} episodes): one optimizer step per generation instead`);
  const values: Record<string, unknown> = {
    output_dir: 'trl-output',
    seed: c.seed,
    // One generation batch = one iteration of ours: groups × groupSize completions.
    generation_batch_size: batch,
    per_device_train_batch_size: perDevice,
    gradient_accumulation_steps: 1,
    num_generations: a.groupSize,
    num_iterations: a.updateEpochs,
    max_steps: c.iterations * a.updateEpochs * (batch / perDevice),
    learning_rate: a.lr,
    lr_scheduler_type: 'constant',
    adam_beta1: a.adamBeta1,
    adam_beta2: a.adamBeta2,
    adam_epsilon: a.adamEps,
    weight_decay: a.weightDecay,
    max_grad_norm: a.maxGradNorm ?? 0,
    temperature: 1.0,
    loss_type: trlLossType(a),
    scale_rewards: a.normalizeStd ? 'group' : 'none',
    epsilon: a.clipLow,
    epsilon_high: a.algo === 'cispo' ? 1 + a.clipHigh : a.clipHigh,
    beta: a.klMode === 'loss' ? a.klCoef : 0,
    entropy_coef: a.entropyCoef,
    max_tool_calling_iterations: maxTurns,
    vllm_importance_sampling_correction: a.tis.enabled,
    logging_steps: 1,
    report_to: 'none',
  };
  if (a.algo === 'gspo') values.importance_sampling_level = 'sequence';
  if (a.tis.enabled) values.vllm_importance_sampling_clip_max = a.tis.cap;
  if (a.algo === 'cispo') notes.push(`algo.clipLow ${a.clipLow} (CISPO's lower clamp of the importance weight at 1 − clipLow): not translated; TRL's cispo clamps above only (epsilon_high = 1 + clipHigh)`);
  if (a.aggregation === 'constant' && a.aggregationLen !== null) notes.push(`algo.aggregationLen ${a.aggregationLen}: TRL's dr_grpo divides by max_completion_length; set that to ${a.aggregationLen}`);
  if (a.klCoef > 0 && a.klMode === 'reward') notes.push(`algo.klMode reward (β·KL subtracted from rewards, β ${a.klCoef}): not translated; TRL puts KL in the loss only (beta)`);
  if (a.klCoef > 0 && a.klEstimator === 'k1') notes.push("algo.klEstimator k1: not translated; TRL's KL term is the k3 estimator");
  if (a.normalizeStd) notes.push(`algo.stdEps ${a.stdEps}: TRL adds a fixed 1e-4 to the group std`);
  notes.push('max_completion_length: left at TRL\'s default; set it to the longest multi-turn completion (all turns\' tokens together)');
  return { values, notes };
}

const VERL_ESTIMATOR: Record<string, string> = { grpo: 'grpo', drgrpo: 'grpo', gspo: 'grpo', cispo: 'grpo', ppo: 'gae', rloo: 'rloo', remax: 'remax', reinforcepp: 'reinforce_plus_plus_baseline' };
const VERL_AGG: Record<string, string> = { token: 'token-mean', sequence: 'seq-mean-token-mean', constant: 'seq-mean-token-sum-norm' };

/** veRL hydra overrides for a run (call `unsupported` first). */
export function verlOverrides(c: RunConfig, maxTurns: number): Mapped {
  const a = c.algo;
  const notes = commonNotes(c);
  const group = VERL_ESTIMATOR[a.algo] !== 'gae';
  const prompts = group ? c.rollout.groups : c.rollout.episodes;
  const n = group ? a.groupSize : 1;
  const mini = prompts % a.minibatches === 0 ? prompts / a.minibatches : prompts;
  if (mini === prompts && a.minibatches > 1) notes.push(`algo.minibatches ${a.minibatches} does not divide the ${prompts} prompts: one mini-batch per iteration instead`);
  const v: Record<string, unknown> = {
    'algorithm.adv_estimator': VERL_ESTIMATOR[a.algo],
    'algorithm.norm_adv_by_std_in_grpo': a.normalizeStd,
    'algorithm.gamma': a.gamma,
    'algorithm.lam': a.lambda,
    'data.train_batch_size': prompts,
    'data.seed': c.seed,
    'actor_rollout_ref.rollout.n': n,
    'actor_rollout_ref.rollout.temperature': 1.0,
    'actor_rollout_ref.actor.optim.lr': a.lr,
    'actor_rollout_ref.actor.optim.weight_decay': a.weightDecay,
    'actor_rollout_ref.actor.optim.betas': [a.adamBeta1, a.adamBeta2],
    'actor_rollout_ref.actor.ppo_mini_batch_size': mini,
    'actor_rollout_ref.actor.ppo_epochs': a.updateEpochs,
    'actor_rollout_ref.actor.clip_ratio_low': a.clipLow,
    'actor_rollout_ref.actor.clip_ratio_high': a.clipHigh,
    'actor_rollout_ref.actor.entropy_coeff': a.entropyCoef,
    'actor_rollout_ref.actor.loss_agg_mode': VERL_AGG[a.aggregation],
    'actor_rollout_ref.actor.policy_loss.loss_mode': a.algo === 'gspo' ? 'gspo' : a.algo === 'cispo' ? 'cispo' : 'vanilla',
    'actor_rollout_ref.actor.use_kl_loss': a.klCoef > 0 && a.klMode === 'loss',
    'actor_rollout_ref.actor.kl_loss_coef': a.klMode === 'loss' ? a.klCoef : 0,
    'actor_rollout_ref.actor.kl_loss_type': a.klEstimator === 'k3' ? 'low_var_kl' : 'kl',
    'algorithm.use_kl_in_reward': a.klCoef > 0 && a.klMode === 'reward',
    'algorithm.kl_ctrl.kl_coef': a.klMode === 'reward' ? a.klCoef : 0,
    'algorithm.kl_penalty': a.klEstimator === 'k3' ? 'low_var_kl' : 'kl',
    'trainer.total_training_steps': c.iterations,
    'actor_rollout_ref.rollout.multi_turn.max_assistant_turns': maxTurns,
  };
  if (a.maxGradNorm !== null) v['actor_rollout_ref.actor.grad_clip'] = a.maxGradNorm;
  else notes.push("algo.maxGradNorm null (no clipping): veRL always clips (actor.grad_clip, default 1.0); raise it to turn clipping off in effect");
  if (a.tis.enabled) {
    v['algorithm.rollout_correction.rollout_is'] = 'token';
    v['algorithm.rollout_correction.rollout_is_threshold'] = a.tis.cap;
  }
  if (a.algo === 'ppo') {
    v['critic.optim.lr'] = a.lr;
    if (a.valueClip !== null) v['critic.cliprange_value'] = a.valueClip;
    notes.push(`algo.valueCoef ${a.valueCoef}: not translated; veRL trains the critic as its own model with its own optimizer (critic.optim.lr = the actor's lr here)`);
    if (a.normalizeAdvantages === false) notes.push('algo.normalizeAdvantages false: not translated; veRL whitens GAE advantages over the batch');
  }
  notes.push(`algo.adamEps ${a.adamEps}: not translated (veRL's optimizer config has no eps key; torch's AdamW default 1e-8 applies)`);
  if (a.normalizeStd && a.stdEps !== 1e-6) notes.push(`algo.stdEps ${a.stdEps}: veRL adds a fixed 1e-6 to the group std`);
  return { values: v, notes };
}

/** A Python literal for a JSON-like value (True/False/None, lists, strings). */
export function pyLiteral(v: unknown): string {
  if (v === null || v === undefined) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : String(v);
  if (typeof v === 'string') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(pyLiteral).join(', ')}]`;
  return `{${Object.entries(v as Record<string, unknown>).map(([k, x]) => `${JSON.stringify(k)}: ${pyLiteral(x)}`).join(', ')}}`;
}

/** A hydra override value: lists as [a,b], strings bare unless they need quoting. */
export function hydraValue(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(hydraValue).join(',')}]`;
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (v === null) return 'null';
  return String(v);
}
