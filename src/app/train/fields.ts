/**
 * The run-configuration form, as data: every editable field with its path in the run config,
 * its panel, its input kind, a tooltip (what it does, units, why: the doc comments of
 * AlgoConfig / the run-config schema, reused), and whether it can change while a run goes on.
 *
 * Live fields are exactly those Trainer.setHyper applies between train steps; changing
 * anything else builds new sessions, so it restarts the run (after a prompt).
 */
import { ALGO_DESCRIPTORS, isAlgo, algoDescriptor, isGroupAlgo } from '../../core/algos/registry/index.ts';
import type { AlgoField } from '../../core/algos/registry/types.ts';
import { MAX_STAGES, type RunConfig } from '../../core/presets/schema.ts';
import { SHAPING_TERM_DOCS } from '../../core/reward/shaping.ts';
import { CORRECTION_FIELDS } from './correctionFields.ts';

export type Panel = 'env' | 'policy' | 'algo' | 'reward' | 'rollout' | 'pipeline';

export const PANELS: { id: Panel; title: string; blurb: string; when?: (c: DraftConfig) => boolean }[] = [
  { id: 'env', title: 'Environment', blurb: 'The world the agent learns in.' },
  { id: 'policy', title: 'Policy', blurb: 'The network that picks actions, and where it runs.' },
  { id: 'algo', title: 'Algorithm', blurb: 'How rewards become updates. Fields marked live change the running experiment.' },
  { id: 'reward', title: 'Reward', blurb: 'The episode reward is a weighted sum of named terms, each charted in "Reward by term" (reward/<term>/mean). Weights are live. Potential shaping (γΦ(s′) − Φ(s)) keeps the best policy unchanged, but with γ < 1 its sum over an episode is not zero: the reported reward can fall while success rises, so read the outcome term beside it.' },
  { id: 'rollout', title: 'Rollout', blurb: 'How much experience each iteration collects, and how long the run is.' },
  {
    id: 'pipeline',
    title: 'Stages',
    blurb: "This run is a pipeline: its stages run in order, each with the settings above merged with its own (another env, reward or learning rate), each starting from the weights the one before it ended with (with a fresh optimizer). A distill stage trains a new, smaller policy to act like the one trained so far. The charts mark where each stage begins.",
    when: (c) => hasStages(c),
  },
];

export type FieldKind =
  | { kind: 'int'; min?: number; max?: number }
  | { kind: 'number'; min?: number; max?: number; step?: number }
  | { kind: 'select'; options: readonly { value: string; label: string }[] }
  | { kind: 'bool' }
  | { kind: 'intList' }
  | { kind: 'env' };

export interface FieldDef {
  /** Dotted path in the run config ('algo.lr'); 'backend' is the one field outside it. */
  path: string;
  label: string;
  panel: Panel;
  input: FieldKind;
  /** Tooltip: what it does, its units, why you would change it. */
  help: string;
  /** Applied to the running trainer without a restart (the trainer's setHyper: LiveHyper). */
  live?: boolean;
  /** Shown only when this holds for the draft config (e.g. group size only for group algos). */
  when?: (c: DraftConfig) => boolean;
  /** A sub-heading the field sits under (a stage's fields, under the stage's name); fields in a row with one heading share it. */
  groupFor?: (c: DraftConfig) => string;
}

/** The form's working copy: a run config (possibly invalid while being edited) plus the backend. */
export type DraftConfig = Omit<RunConfig, 'algo'> & { algo: RunConfig['algo'] & Record<string, unknown>; backend: 'auto' | 'webgpu' | 'wasm' };

const isGroup = (c: DraftConfig) => isGroupAlgo(c.algo.algo);
/** Whether the draft's algorithm reads `field` (its descriptor lists it). */
const reads = (field: AlgoField) => (c: DraftConfig) => isAlgo(c.algo.algo) && (algoDescriptor(c.algo.algo).fields?.includes(field) ?? false);
/** The algorithm select: group algorithms first, then the rest, each in registry order. */
const ALGO_OPTIONS = [...ALGO_DESCRIPTORS.filter((d) => d.group), ...ALGO_DESCRIPTORS.filter((d) => !d.group)].map((d) => ({ value: d.name, label: d.label }));
const isMlp = (c: DraftConfig) => c.model.kind === 'mlp';
/** Token policies train on tool envs; grid-only and tool-only reward terms follow the policy kind. */
const isTokens = (c: DraftConfig) => c.model.kind === 'transformer';
const hasStages = (c: DraftConfig) => (c.stages?.length ?? 0) > 0;
const stageName = (c: DraftConfig, k: number) => `${k + 1}. ${c.stages?.[k]?.name ?? ''}`;
const isDistill = (c: DraftConfig, k: number) => c.stages?.[k]?.distill !== undefined;

/** The fields of stage k (0-based) of a staged run. */
function stageFields(k: number): FieldDef[] {
  return [
    { path: `stages.${k}.iterations`, label: 'Iterations', groupFor: (c) => stageName(c, k), panel: 'pipeline', input: { kind: 'int', min: 1, max: 1_000_000 }, when: (c) => (c.stages?.length ?? 0) > k, help: "Iterations (rollout + update) in this stage; the run's length is the stages' sum. The next stage starts from the weights this one ends with." },
    { path: `stages.${k}.distill.student.hidden`, label: 'Student sizes', groupFor: (c) => stageName(c, k), panel: 'pipeline', input: { kind: 'intList' }, when: (c) => isDistill(c, k) && isMlp(c), help: "The student MLP's hidden widths, comma-separated (e.g. 16). Smaller than the teacher's (Hidden sizes, above) to be worth distilling: fewer weights, faster steps, the teacher's behaviour." },
    { path: `stages.${k}.distill.klCoef`, label: 'Distill weight', groupFor: (c) => stageName(c, k), panel: 'pipeline', input: { kind: 'number', min: 0, max: 100, step: 0.1 }, when: (c) => isDistill(c, k), help: "Weight of the reverse KL to the teacher (nats). An MLP student earns weight × (log π_teacher(a|s) − log π_student(a|s)) as each step's reward, so actions the teacher would also take are reinforced; a transformer student minimises weight × the exact KL between its next-token distribution and the teacher's at each token it wrote. 1 = the KL's own scale." },
    { path: `stages.${k}.distill.student.nLayers`, label: 'Student layers', groupFor: (c) => stageName(c, k), panel: 'pipeline', input: { kind: 'int', min: 1, max: 12 }, when: (c) => isDistill(c, k) && isTokens(c), help: "The student transformer's blocks: fewer than the teacher's (Layers, above) to be worth distilling." },
    { path: `stages.${k}.distill.student.dModel`, label: 'Student width', groupFor: (c) => stageName(c, k), panel: 'pipeline', input: { kind: 'int', min: 8, max: 1024 }, when: (c) => isDistill(c, k) && isTokens(c), help: "The student's residual width d (its heads must divide it); smaller than the teacher's for fewer weights and faster steps." },
    { path: `stages.${k}.distill.student.nHeads`, label: 'Student heads', groupFor: (c) => stageName(c, k), panel: 'pipeline', input: { kind: 'int', min: 1, max: 16 }, when: (c) => isDistill(c, k) && isTokens(c), help: "The student's attention heads (they divide its width)." },
    { path: `stages.${k}.distill.student.dFF`, label: 'Student MLP width', groupFor: (c) => stageName(c, k), panel: 'pipeline', input: { kind: 'int', min: 8, max: 4096 }, when: (c) => isDistill(c, k) && isTokens(c), help: "Hidden width of each student block's feed-forward MLP (usually 4 × its width d)." },
    { path: `stages.${k}.distill.student.context`, label: 'Student context', groupFor: (c) => stageName(c, k), panel: 'pipeline', input: { kind: 'int', min: 8, max: 1024 }, when: (c) => isDistill(c, k) && isTokens(c), help: "The student's longest context in tokens; at most the teacher's (Context, above), because the teacher scores every position of the student's episodes." },
    { path: `stages.${k}.distill.outcomeWeight`, label: 'Task reward', groupFor: (c) => stageName(c, k), panel: 'pipeline', input: { kind: 'number', min: 0, max: 100, step: 0.1 }, when: (c) => isDistill(c, k) && isMlp(c), help: "Weight of the env's own reward while distilling: 0 = imitate the teacher only; > 0 also rewards solving the task (the student can then outgrow a flawed teacher)." },
  ];
}

export const FIELDS: readonly FieldDef[] = [
  { path: 'env.id', label: 'Environment', panel: 'env', input: { kind: 'env' }, help: 'Which world to train in: grid worlds for the MLP policy (it sees only a 7×7 egocentric view), tool envs for the transformer policy. Every episode starts from a seeded state.' },
  { path: 'seed', label: 'Seed', panel: 'env', input: { kind: 'int', min: 0, max: 2 ** 31 - 1 }, help: 'Master seed: initial weights, env start states and action sampling all derive from it, so the same seed replays the same run.' },

  { path: 'model.hidden', label: 'Hidden sizes', panel: 'policy', input: { kind: 'intList' }, when: isMlp, help: 'Hidden layer widths, input side first, comma-separated (e.g. 64, 64). Wider or deeper = more capacity and slower steps.' },
  {
    path: 'model.activation',
    label: 'Activation',
    panel: 'policy',
    when: isMlp,
    input: { kind: 'select', options: [{ value: 'tanh', label: 'tanh' }, { value: 'relu', label: 'ReLU' }] },
    help: 'Hidden nonlinearity: tanh is smoother for small policy nets (CleanRL\'s choice).',
  },
  {
    path: 'model.agents',
    label: 'Agents',
    panel: 'policy',
    when: isMlp,
    input: { kind: 'select', options: [{ value: 'shared', label: 'one shared network' }, { value: 'separate', label: 'one network per agent' }] },
    help: "Two-agent envs (grid/switch-door) only. 'shared': one network plays both agents; it tells them apart by the acting agent's colour in its own view cell, and what one agent learns about the world helps the other. 'separate': two networks of the sizes above, no shared parameters; each is trained only on its own agent's steps (the other gets exactly zero gradient from them), at twice the parameters. One-agent envs take 'shared'.",
  },
  { path: 'model.dModel', label: 'Model width d', panel: 'policy', input: { kind: 'int', min: 8, max: 1024 }, when: isTokens, help: 'Transformer width d_model (embedding and residual size); must divide by the head count. Wider = more capacity, each token costs ∝ d².' },
  { path: 'model.nLayers', label: 'Layers', panel: 'policy', input: { kind: 'int', min: 1, max: 12 }, when: isTokens, help: 'Transformer blocks (pre-LayerNorm attention + MLP). Each adds one attention pass over the context.' },
  { path: 'model.nHeads', label: 'Attention heads', panel: 'policy', input: { kind: 'int', min: 1, max: 16 }, when: isTokens, help: 'Heads per attention layer; each head attends with d / heads dimensions.' },
  { path: 'model.dFF', label: 'MLP width', panel: 'policy', input: { kind: 'int', min: 8, max: 4096 }, when: isTokens, help: 'Hidden width of each block\'s feed-forward MLP (usually 4 × d).' },
  { path: 'model.context', label: 'Context (tokens)', panel: 'policy', input: { kind: 'int', min: 8, max: 1024 }, when: isTokens, help: 'Longest context in tokens: task, every action and every reply. An episode that fills it stops (truncated). The KV cache and the train graph scale with it.' },
  { path: 'warmStart.steps', label: 'Warm-start steps', panel: 'policy', input: { kind: 'int', min: 1, max: 100_000 }, when: (c) => c.warmStart != null, help: "Imitation warm start: cross-entropy steps on fresh expert episodes before RL. It teaches a token policy the tool-call format, or a grid MLP the expert's moves, and becomes the KL reference." },
  { path: 'warmStart.batch', label: 'Warm-start batch', panel: 'policy', input: { kind: 'int', min: 1, max: 1024 }, when: (c) => c.warmStart != null, help: 'Expert episodes per warm-start step (a grid MLP trains on their steps, up to the learner batch).' },
  { path: 'warmStart.lr', label: 'Warm-start lr', panel: 'policy', input: { kind: 'number', min: 0, max: 1, step: 0.0005 }, when: (c) => c.warmStart != null, help: 'Adam learning rate of the warm start at its first step (decays linearly to 0.1×).' },
  { path: 'warmStart.observationWeight', label: 'Warm-start observation loss', panel: 'policy', input: { kind: 'number', min: 0, max: 100, step: 0.1 }, when: (c) => c.warmStart != null, help: "Weight of an extra next-token loss on the env's observation tokens during the warm start (0 = imitate actions only). Predicting what the env shows next teaches the model to read its context: grid-memory needs it to learn to recall the cue." },
  {
    path: 'backend',
    label: 'Backend',
    panel: 'policy',
    input: { kind: 'select', options: [{ value: 'auto', label: 'Auto (timed)' }, { value: 'webgpu', label: 'WebGPU' }, { value: 'wasm', label: 'WASM (CPU)' }] },
    help: 'Where the ONNX sessions run. Auto times a few train steps of this model on each backend when the run starts (under 1.5 s, remembered per device and model) and keeps the faster; a software WebGPU adapter is never picked. WebGPU keeps weights and Adam state on the GPU; WASM runs on the CPU and is often faster for a network this small.',
  },

  {
    path: 'algo.algo',
    label: 'Algorithm',
    panel: 'algo',
    input: { kind: 'select', options: ALGO_OPTIONS },
    help: `Advantage estimator: ${ALGO_DESCRIPTORS.map((d) => d.help).join('; ')}.`,
  },
  { path: 'algo.groupSize', label: 'Group size', panel: 'algo', input: { kind: 'int', min: 2, max: 64 }, when: isGroup, help: 'Episodes per group, all from one start state; batch = groups × group size. Bigger groups are likelier to contain both a success and a failure, i.e. a usable signal.' },
  { path: 'algo.lr', label: 'Learning rate', panel: 'algo', input: { kind: 'number', min: 0, step: 0.0001 }, live: true, help: 'Adam learning rate (per update step). Too high and the policy jumps (approx KL spikes); too low and nothing moves.' },
  { path: 'algo.entropyCoef', label: 'Entropy coef', panel: 'algo', input: { kind: 'number', min: 0, step: 0.001 }, live: true, help: 'Entropy bonus weight (nats⁻¹ of loss); counters premature collapse of exploration.' },
  { path: 'algo.clipLow', label: 'Clip low ε', panel: 'algo', input: { kind: 'number', min: 0, max: 1, step: 0.01 }, live: true, help: 'ε_low: the probability ratio is clipped below at 1 − ε_low (PPO trust region, down side).' },
  { path: 'algo.clipHigh', label: 'Clip high ε', panel: 'algo', input: { kind: 'number', min: 0, step: 0.01 }, live: true, help: 'ε_high: clipped above at 1 + ε_high; above clip low is DAPO clip-higher (keeps rare actions rising, protects exploration).' },
  { path: 'algo.klCoef', label: 'KL coef β', panel: 'algo', input: { kind: 'number', min: 0, step: 0.001 }, live: true, help: 'β, weight of KL(π‖π_ref) to the initial policy; 0 disables the reference policy entirely (turning it on or off restarts the run; changing a non-zero β is live).' },
  { path: 'algo.dynamicSampling.enabled', label: 'Dynamic sampling', panel: 'algo', input: { kind: 'bool' }, when: isGroup, help: 'DAPO dynamic sampling: drop groups whose rewards are all equal (zero spread, no gradient) and sample fresh ones, up to the round cap.' },
  { path: 'algo.dynamicSampling.maxRounds', label: 'Max sampling rounds', panel: 'algo', input: { kind: 'int', min: 1, max: 16 }, when: (c) => isGroup(c) && c.algo.dynamicSampling.enabled, help: 'Most sampling rounds per iteration, the first included. Each round costs a full rollout.' },
  { path: 'algo.updateEpochs', label: 'Update epochs', panel: 'algo', input: { kind: 'int', min: 1, max: 32 }, help: 'Passes over each batch (PPO typically 4; group methods 1 = on-policy). More passes reuse data but drift further from the behaviour policy.' },
  { path: 'algo.stepAdvantageWeight', label: 'Step advantage ω', panel: 'algo', input: { kind: 'number', min: 0, max: 10, step: 0.1 }, when: reads('stepAdvantageWeight'), help: "GiGPO: weight of the step-level advantage (a step's discounted return against other steps taken from the same state in its group) added to the episode's GRPO advantage; 0 = plain GRPO." },
  { path: 'algo.turnCredit.lambda', label: 'Outcome weight λ (MT-GRPO)', panel: 'algo', input: { kind: 'number', min: 0, max: 10, step: 0.1 }, when: reads('turnCredit'), help: "MT-GRPO: weight λ of the outcome advantage added to each turn before the last (which gets its turn reward's group-normalised advantage too); the last turn gets the outcome advantage alone." },
  {
    path: 'algo.turnCredit.source',
    label: 'Turn reward (MT-GRPO)',
    panel: 'algo',
    input: { kind: 'select', options: [{ value: 'reward+progress', label: 'step reward + env progress' }, { value: 'reward', label: 'step reward' }, { value: 'progress', label: 'env progress (info.progress)' }] },
    when: reads('turnCredit'),
    help: "MT-GRPO: each turn's own reward, compared with the same turn of its group: the turn's shaped reward, the progress the env reports for it (info.progress: kv-lookup's first lookup of a key on the chain, flaky-api's first successful fetch), or both.",
  },
  { path: 'algo.sapo.tauPos', label: 'Gate τ, A > 0 (SAPO)', panel: 'algo', input: { kind: 'number', min: 0.01, max: 100, step: 0.05 }, when: reads('sapo'), help: "SAPO: temperature of the soft gate (4/τ)·σ(τ(r − 1)) for tokens with positive advantage; larger closes the gate faster as the ratio leaves 1 (paper: 1)." },
  { path: 'algo.sapo.tauNeg', label: 'Gate τ, A < 0 (SAPO)', panel: 'algo', input: { kind: 'number', min: 0.01, max: 100, step: 0.05 }, when: reads('sapo'), help: 'SAPO: the gate temperature for tokens with negative advantage (paper: 1.05, above the positive one: negative updates are the less stable).' },
  {
    path: 'algo.covariance.mode',
    label: 'Covariance control',
    panel: 'algo',
    input: { kind: 'select', options: [{ value: 'off', label: 'off' }, { value: 'clip-cov', label: 'Clip-Cov (stop gradient)' }, { value: 'kl-cov', label: 'KL-Cov (KL penalty)' }] },
    help: "Entropy control from each token's covariance (A − Ā)(log π − mean log π): Clip-Cov stops the gradient of a few random tokens with cov in (lb, ub); KL-Cov adds coef·|log π − log π_old| on the tokens of largest cov (veRL clip_cov / kl_cov).",
  },
  { path: 'algo.covariance.klCoef', label: 'KL-Cov coef', panel: 'algo', input: { kind: 'number', min: 0, max: 100, step: 0.1 }, when: (c) => c.algo.covariance?.mode === 'kl-cov', help: 'KL-Cov: coefficient on |log π − log π_old| of the selected tokens (veRL ppo_kl_coef, default 1).' },
  { path: 'algo.overlong.enabled', label: 'Overlong penalty', panel: 'algo', input: { kind: 'bool' }, help: "DAPO's soft overlong punishment: episodes longer than maxLen − buffer positions lose up to 1 reward (a linear ramp), −1 at and beyond maxLen (default the env's limit or the context). On by default for dapo." },
  { path: 'algo.overlong.buffer', label: 'Overlong buffer (positions)', panel: 'algo', input: { kind: 'int', min: 1, max: 100000 }, when: (c) => c.algo.overlong?.enabled === true, help: 'L_c: how many positions before the limit the penalty ramp starts (grid steps, or policy tokens).' },
  { path: 'algo.maskTruncated', label: 'Mask truncated episodes', panel: 'algo', input: { kind: 'bool' }, help: "DAPO's overlong filtering: episodes cut by the time limit or the context carry no loss, and the token normaliser counts only the kept ones. On by default for dapo." },
  { path: 'algo.minibatches', label: 'Minibatches', panel: 'algo', input: { kind: 'int', min: 1, max: 64 }, help: 'Minibatches per pass: the batch is split into this many optimizer steps.' },
  { path: 'algo.gamma', label: 'Discount γ', panel: 'algo', input: { kind: 'number', min: 0, max: 1, step: 0.01 }, when: reads('gamma'), help: 'Discount per step (GAE and potential shaping); 1 = undiscounted episodic return.' },
  { path: 'algo.lambda', label: 'GAE λ', panel: 'algo', input: { kind: 'number', min: 0, max: 1, step: 0.01 }, when: reads('lambda'), help: 'GAE λ: 0 = one-step TD (low variance, biased), 1 = Monte Carlo (unbiased, noisy).' },

  { path: 'shaping.outcome.weight', label: 'Outcome', panel: 'reward', input: { kind: 'number', min: 0, step: 0.1 }, live: true, help: `${SHAPING_TERM_DOCS.outcome} Weight 1 = the env's reward as is.` },
  { path: 'shaping.progress.weight', label: 'Progress', panel: 'reward', input: { kind: 'number', min: 0, step: 0.05 }, live: true, when: isMlp, help: SHAPING_TERM_DOCS.progress },
  { path: 'shaping.potential.weight', label: 'Potential Φ', panel: 'reward', input: { kind: 'number', min: 0, step: 0.01 }, live: true, when: isMlp, help: `${SHAPING_TERM_DOCS.potential} With γ < 1 the reported (undiscounted) sum of F over an episode does not telescope to Φ(end) − Φ(start): each step adds (γ − 1)·Φ(s), which is positive while Φ < 0, so long wandering episodes collect more of it and the reward chart can fall as the agent learns short paths while success rises (the outcome term in "Reward by term" shows the task's own reward). Live while it stays above 0 (turning it on or off restarts: the rollouts must record Φ).` },
  { path: 'shaping.format.weight', label: 'Format penalty', panel: 'reward', input: { kind: 'number', min: 0, step: 0.05 }, live: true, when: isTokens, help: SHAPING_TERM_DOCS.format },
  { path: 'shaping.toolCost.weight', label: 'Tool-call cost', panel: 'reward', input: { kind: 'number', min: 0, step: 0.01 }, live: true, when: isTokens, help: SHAPING_TERM_DOCS.toolCost },
  { path: 'shaping.length.weight', label: 'Length penalty', panel: 'reward', input: { kind: 'number', min: 0, step: 0.001 }, live: true, when: isTokens, help: SHAPING_TERM_DOCS.length },
  { path: 'shaping.length.freeTokens', label: 'Free tokens', panel: 'reward', input: { kind: 'int', min: 0 }, when: (c) => isTokens(c) && c.shaping.length.weight > 0, help: 'Policy tokens per episode that cost nothing under the length penalty.' },
  {
    path: 'algo.rewardAggregation',
    label: 'Multi-term advantage',
    panel: 'reward',
    input: { kind: 'select', options: [{ value: 'sum', label: 'sum, then normalise (GRPO)' }, { value: 'gdpo', label: 'normalise each term, then sum (GDPO)' }] },
    when: (c) => isAlgo(c.algo.algo) && algoDescriptor(c.algo.algo).groupStd && algoDescriptor(c.algo.algo).advantage.kind === 'episode',
    help: "How the reward terms (outcome, shaping, your reward-lab terms) become advantages. 'sum': GRPO normalises the summed reward within each group, so episodes scoring (1, 0) and (0, 1) on two terms get the same advantage, and a wide-spread term drowns a narrow one. 'gdpo' (GDPO; TRL normalize_then_sum): each term is normalised within its group, the results summed and standardised over the batch, so each term counts by its own spread.",
  },
  {
    path: 'reward.onNonFinite',
    label: 'If a term fails',
    panel: 'reward',
    input: { kind: 'select', options: [{ value: 'skip', label: 'count it 0' }, { value: 'stop', label: 'stop the run' }] },
    help: "Your reward code (reward lab): what happens when a term throws or returns NaN or ±Infinity. 'skip' counts that term 0 for the episode and lists the problem under the editor (term, line, episode seed) while training goes on; 'stop' stops the run with the same message, so you can fix the code. Either way a NaN never reaches the advantages.",
  },
  { path: 'reward.callTimeoutMs', label: 'Term time limit, ms', panel: 'reward', input: { kind: 'int', min: 1, max: 10_000 }, help: 'Your reward code (reward lab): most time one call of a term may take, in milliseconds (1 to 10,000), judged over its calls: the term is stopped, with its measured time per call, once most of its calls take longer, and a single call running 10× as long (at least 1 s) is stopped as an infinite loop. Each term is called once per step, so a slow term slows every iteration.' },

  { path: 'rollout.groups', label: 'Groups / iteration', panel: 'rollout', input: { kind: 'int', min: 1, max: 512 }, when: isGroup, help: 'Groups per iteration, each group size episodes from one seed. More groups = smoother gradient, slower iteration.' },
  { path: 'rollout.episodes', label: 'Episodes / iteration', panel: 'rollout', input: { kind: 'int', min: 1, max: 4096 }, when: (c) => !isGroup(c), help: 'Episodes per iteration for REINFORCE and PPO, each from its own seed.' },
  {
    path: 'rollout.mode',
    label: 'Scheduling',
    panel: 'rollout',
    input: { kind: 'select', options: [{ value: 'sync', label: 'synchronous' }, { value: 'async', label: 'asynchronous' }] },
    help: "'sync' = collect a batch, train on it, repeat (staleness 0). 'async' = rollouts overlap training, so some actions were sampled by an older policy version (watch the Shift charts).",
  },
  { path: 'rollout.maxStaleness', label: 'Max staleness', panel: 'rollout', input: { kind: 'int', min: 0, max: 16 }, when: (c) => c.rollout.mode === 'async', help: 'Async only: most policy versions a trained-on step may lag behind the learner. Higher = more overlap, more off-policy drift.' },
  { path: 'algo.tis.enabled', label: 'Truncated IS', panel: 'rollout', input: { kind: 'bool' }, when: (c) => c.rollout.mode === 'async', help: 'Truncated importance sampling: re-weight stale steps by π_old/μ (capped), correcting for the older policy that sampled them.' },
  ...CORRECTION_FIELDS,
  { path: 'rollout.workers', label: 'Rollout workers', panel: 'rollout', input: { kind: 'int', min: 0, max: 16 }, help: 'Web Workers that play episodes in parallel (0 = in the training worker). Tool envs: 0 or 1 (one worker decodes while the learner trains). Helps only with spare CPU cores.' },
  { path: 'rollout.kvRows', label: 'KV cache rows', panel: 'rollout', input: { kind: 'int', min: 0, max: 1024 }, when: (c) => isTokens(c) && isGroup(c), help: "Decoder rows: the KV-cache budget, in episodes' worth of context (0 = one per episode of a batch). Fewer rows than episodes in flight: an episode waiting on a slow tool gives its row up and re-prefills later (watch the KV hit rate)." },
  {
    path: 'rollout.budget.mode',
    label: 'Rollout budget',
    panel: 'rollout',
    input: { kind: 'select', options: [{ value: 'uniform', label: 'uniform' }, { value: 'adaptive', label: 'adaptive (Knapsack RL)' }] },
    when: (c) => isTokens(c) && isGroup(c),
    help: "How an iteration's episodes (groups × group size) are split over prompts. 'uniform' = group size each. 'adaptive' = more to prompts whose outcome is uncertain, few or none to ones always solved or always failed (their groups have no spread, so no gradient); same total. Needs a prompt pool, sync scheduling, no dynamic sampling.",
  },
  { path: 'rollout.budget.pool', label: 'Prompt pool', panel: 'rollout', input: { kind: 'int', min: 0, max: 65536 }, when: (c) => isTokens(c) && isGroup(c), help: 'Prompts (env seeds) training cycles through; each keeps an estimate of its success rate. 0 = a fresh prompt for every group (uniform only).' },
  { path: 'rollout.budget.minPerPrompt', label: 'Min episodes / prompt', panel: 'rollout', input: { kind: 'int', min: 2, max: 1024 }, when: (c) => isTokens(c) && isGroup(c) && c.rollout.budget.mode === 'adaptive', help: 'Adaptive: fewest episodes a chosen prompt gets (≥ 2: a group of one has no spread to learn from).' },
  { path: 'rollout.budget.maxPerPrompt', label: 'Max episodes / prompt', panel: 'rollout', input: { kind: 'int', min: 2, max: 1024 }, when: (c) => isTokens(c) && isGroup(c) && c.rollout.budget.mode === 'adaptive', help: 'Adaptive: most episodes one prompt gets per iteration.' },
  { path: 'rollout.budget.decay', label: 'Estimate decay', panel: 'rollout', input: { kind: 'number', min: 0, max: 1, step: 0.05 }, when: (c) => isTokens(c) && isGroup(c) && c.rollout.budget.mode === 'adaptive', help: "Per-iteration decay of each prompt's success and failure counts (1 = never forget). Lower = estimates follow the changing policy faster, and solved or hopeless prompts are retried sooner." },
  { path: 'rollout.constrained', label: 'Constrained decoding', panel: 'rollout', input: { kind: 'bool' }, when: isTokens, help: "Sample each action token only among those that keep the action a well-formed tool call at the env's current state (its action grammar): every call parses, and the masked distribution is the policy that is trained (same log-probs in rollout and learner; entropy and KL over the allowed tokens). Tool envs only; lets a tiny policy learn from no warm start." },
  { path: 'rollout.tree.enabled', label: 'Tree rollouts', panel: 'rollout', input: { kind: 'bool' }, when: (c) => isTokens(c) && isGroup(c), help: 'Branch extra episodes after a tool reply where the policy is unsure (its first token\'s entropy above the threshold); a shared prefix is trained once, with the mean advantage of its branches. Sync only.' },
  { path: 'rollout.tree.entropyThreshold', label: 'Branch entropy (nats)', panel: 'rollout', input: { kind: 'number', min: 0, max: 20, step: 0.1 }, when: (c) => isTokens(c) && c.rollout.tree?.enabled === true, help: 'A turn after a tool reply is a branch point when the entropy of its first token\'s distribution exceeds this (ln 2 ≈ 0.69 nats = a coin flip).' },
  { path: 'rollout.tree.branches', label: 'Branches per point', panel: 'rollout', input: { kind: 'int', min: 1, max: 16 }, when: (c) => isTokens(c) && c.rollout.tree?.enabled === true, help: 'Extra episodes started from each branch point; each is a leaf with its own outcome.' },
  { path: 'rollout.tree.maxPoints', label: 'Branch points per episode', panel: 'rollout', input: { kind: 'int', min: 1, max: 16 }, when: (c) => isTokens(c) && c.rollout.tree?.enabled === true, help: 'Most branch points per sampled episode (its highest-entropy turns).' },
  { path: 'rollout.maxActionTokens', label: 'Max action tokens', panel: 'rollout', input: { kind: 'int', min: 1, max: 512 }, when: isTokens, help: 'Most tokens in one action (its end-of-action token included); a longer action is cut there (a forced end, usually malformed).' },
  { path: 'rollout.learnerBatch', label: 'Learner batch', panel: 'rollout', input: { kind: 'int', min: 1, max: 8192 }, help: 'Rows (env steps) per train step, the static batch of the ONNX train graph; an iteration runs ⌈steps / batch⌉ train steps per epoch.' },
  ...Array.from({ length: MAX_STAGES }, (_, k) => stageFields(k)).flat(),
  { path: 'heldOut.every', label: 'Held-out eval every', panel: 'rollout', input: { kind: 'int', min: 0, max: 1_000_000 }, help: 'Every this many iterations (0 = never), before that iteration\'s update, play k samples of each held-out question (seeds no run trains on): the pass@1 and pass@k charts. Iteration 1\'s is the policy before RL. Each costs questions × k episodes.' },
  { path: 'heldOut.questions', label: 'Held-out questions', panel: 'rollout', input: { kind: 'int', min: 1, max: 256 }, when: (c) => c.heldOut.every > 0, help: 'Held-out questions (env seeds) per evaluation: more gives a steadier pass@k, at questions × k episodes each time.' },
  { path: 'heldOut.k', label: 'Held-out samples (k)', panel: 'rollout', input: { kind: 'int', min: 1, max: 32 }, when: (c) => c.heldOut.every > 0, help: 'Samples per held-out question at temperature 1: the k of pass@k (a question counts as solved when any of its k samples solves it). pass@1 is their mean success.' },
  { path: 'iterations', label: 'Iterations', panel: 'rollout', input: { kind: 'int', min: 1, max: 1_000_000 }, live: true, when: (c) => !hasStages(c), help: 'Training iterations (one rollout + one update each). Live: a run in progress stops at the new count. Once a run has finished, "Train N more" runs this many more iterations on the same weights and charts.' },
];

export const FIELD_BY_PATH: ReadonlyMap<string, FieldDef> = new Map(FIELDS.map((f) => [f.path, f]));

export function getPath(obj: unknown, path: string): unknown {
  let o = obj as Record<string, unknown> | undefined;
  for (const k of path.split('.')) {
    if (o === null || typeof o !== 'object') return undefined;
    o = o[k] as Record<string, unknown> | undefined;
  }
  return o;
}

/** A copy of `obj` with `path` set to `value` (copies only the objects along the path). */
export function setPath<T>(obj: T, path: string, value: unknown): T {
  const [head, ...rest] = path.split('.');
  if (Array.isArray(obj)) {
    // A stage's field ('stages.1.iterations'): keep the array an array.
    const out = [...obj];
    out[Number(head)] = rest.length ? setPath(obj[Number(head)], rest.join('.'), value) : value;
    return out as T;
  }
  const src = (obj ?? {}) as Record<string, unknown>;
  return { ...src, [head]: rest.length ? setPath(src[head], rest.join('.'), value) : value } as T;
}

export function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
