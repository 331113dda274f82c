/**
 * The dashboard's chart specs, pure data: which metric lines each section draws for a run's
 * config (algorithm, env, model, shaping, budget, stages, agents), in the dashboard's colours,
 * and the key chart a phone shows under the run bar. Dashboard.tsx draws them.
 */
import { algoDescriptor, isAlgo, isGroupAlgo } from '../../core/algos/registry/index.ts';
import { rewardTermKey } from '../../core/metrics/iterationMetrics.ts';
import { familyOfEnvId } from '../../core/envs/families.ts';
import { isMetricKey } from '../../core/metrics/lookup.ts';
import { correctionCharts } from './correctionCharts.ts';
import type { RolloutCorrectionConfig } from '../../core/algos/correction/config.ts';
import { SHAPING_TERMS, type ShapingConfig, type ShapingTerm } from '../../core/reward/shaping.ts';
import type { ChartSpec } from '../ui/MetricChart.tsx';

const C = {
  indigo: '#4f46e5',
  green: '#16803c',
  teal: '#0f766e',
  orange: '#c2410c',
  blue: '#2563eb',
  purple: '#7c3aed',
  grey: '#64748b',
  red: '#c92a2a',
};

/** Percent: whole numbers, with one decimal under 10% (clip fractions live at 0.2–4%, and axis ticks there all read "0%" when rounded). */
const pct = (v: number) => (!Number.isFinite(v) ? '–' : v !== 0 && Math.abs(v) < 0.1 ? `${(v * 100).toFixed(1)}%` : `${Math.round(v * 100)}%`);

function outcome(maxSteps: number, tokens: boolean, shaped: boolean): ChartSpec[] {
  return [
    {
      id: 'reward',
      title: 'Reward',
      help: `Mean total episode reward over the batch (after shaping), with a band of ± one standard deviation across episodes (clipped to the batch's min and max).${shaped ? " The dashed line is the task's own reward (the outcome term, unshaped): what the shaping is meant to serve. If the shaped mean rises while it does not, the shaping is being gamed." : ''}`,
      lines: [{ key: 'reward/mean', label: shaped ? 'shaped' : 'mean', color: C.indigo }, ...(shaped ? [{ key: rewardTermKey('outcome'), label: 'task', color: C.green, dashed: true }] : [])],
      band: ['reward/lo', 'reward/hi'],
    },
    {
      id: 'success',
      title: 'Success rate',
      help: 'Share of the batch\'s episodes that reached the goal. This is what the agent is for.',
      lines: [{ key: 'episode/success_rate', label: 'success', color: C.green }],
      domain: [0, 1],
      format: pct,
    },
    tokens
      ? {
          id: 'length',
          title: 'Episode length',
          help: `Policy tokens per episode (actions only, the env's replies excluded) and turns (tool calls + answer). ${maxSteps} turns is the env's limit (truncation).`,
          lines: [
            { key: 'episode/length_mean', label: 'tokens', color: C.teal },
            { key: 'episode/turns_mean', label: 'turns', color: C.blue, dashed: true },
          ],
          domain: [0, 'auto'],
        }
      : {
          id: 'length',
          title: 'Episode length',
          help: `Steps per episode. Falls toward the shortest path as the policy learns; ${maxSteps} is the time limit (truncation).`,
          lines: [{ key: 'episode/length_mean', label: 'steps', color: C.teal }],
          domain: [0, 'auto'],
          ref: { y: maxSteps, label: 'time limit' },
        },
  ];
}

const TERM_COLORS: Record<ShapingTerm, string> = { outcome: C.green, progress: C.blue, format: C.purple, toolCost: C.orange, length: C.grey, potential: C.teal };

/**
 * Each shaping term's mean contribution per episode (`reward/<term>/mean`): the terms with a
 * non-zero weight in this run (they sum to the reward chart's mean). A term that rises while
 * success does not is the first sign the shaped reward is being gamed.
 */
function rewardTerms(shaping: ShapingConfig): ChartSpec {
  const on = SHAPING_TERMS.filter((t) => (shaping?.[t]?.weight ?? 0) !== 0);
  return {
    id: 'reward-terms',
    title: 'Reward by term',
    help: 'reward/<term>/mean: each shaping term\'s mean contribution (weight × raw value) per episode; together they make the mean reward. Terms with weight 0 are left out.',
    lines: (on.length ? on : (['outcome'] as ShapingTerm[])).map((t) => ({ key: rewardTermKey(t), label: t, color: TERM_COLORS[t] })),
  };
}

/**
 * Tool runs: how often calls fail and how often the agent gets past a failure. On flaky-api a
 * rising recovery rate is the retry being learned (the failure share is the service's, ~30%).
 */
const TOOLS: ChartSpec = {
  id: 'tools',
  title: 'Tool failures and recovery',
  help: "tools/failure_frequency: failed tool calls' share of all calls (a service error, a missing key). tools/recovery_rate: share of failure runs (failed calls in a row) that the agent ended with a successful call, e.g. a retry after a 503; no point in an iteration without failures.",
  lines: [
    { key: 'tools/failure_frequency', label: 'failed calls', color: C.red, dashed: true },
    { key: 'tools/recovery_rate', label: 'recovered', color: C.green },
  ],
  domain: [0, 1],
  format: pct,
};

/**
 * Tool calls per episode (`tools/call_frequency`): on the calculator a one-turn run has none and
 * an agentic one about 1 (calc(...), then answer(...)); the lesson on RLVR vs agentic RL reads it.
 */
const TOOL_CALLS: ChartSpec = {
  id: 'tool-calls',
  title: 'Tool calls per episode',
  help: 'tools/call_frequency: tool calls per episode, averaged over the batch (answer(...) is not a tool call). 0 when the policy answers from memory; the calculator\'s expert makes 1.',
  lines: [{ key: 'tools/call_frequency', label: 'calls', color: C.orange }],
  domain: [0, 'auto'],
};

/**
 * Held-out pass@1 and pass@k (heldOut.every > 0): one point every heldOut.every iterations, the
 * first before any RL update. pass@1 climbing toward a flat pass@k is sharpening; pass@k rising
 * is RL solving questions no sample solved before.
 */
const HELD_OUT: ChartSpec = {
  id: 'held-out',
  title: 'Held-out pass@1 and pass@k',
  help: 'eval/pass_at_one: mean success of k sampled answers (temperature 1) per held-out question, questions no run trains on; eval/pass_at_k: share of those questions solved by at least one of their k samples. One point every heldOut.every iterations, the first before RL. pass@1 can rise to pass@k by sharpening alone; pass@k rises only when RL solves what no sample solved.',
  lines: [
    { key: 'eval/pass_at_k', label: 'pass@k', color: C.blue, dashed: true },
    { key: 'eval/pass_at_one', label: 'pass@1', color: C.green },
  ],
  domain: [0, 1],
  format: pct,
  sparse: true,
};

/** The reward badge's chart: what the policy optimises beside what the task pays. */
const PROXY: ChartSpec = {
  id: 'reward-proxy',
  title: 'Shaped vs task reward',
  help: "reward/mean: the shaped return per episode that the policy optimises (the env's reward plus shaping terms and reward-lab terms); reward/outcome/mean: the env's own reward alone, the task. When the first climbs and the second does not, some term pays for something other than the task.",
  lines: [
    { key: 'reward/mean', label: 'shaped', color: C.indigo },
    { key: 'reward/outcome/mean', label: 'task', color: C.green },
  ],
};

/** Whether any term besides the task's outcome has a weight (then shaped and task reward differ). */
function isShaped(shaping: ShapingConfig): boolean {
  return SHAPING_TERMS.some((t) => t !== 'outcome' && (shaping?.[t]?.weight ?? 0) !== 0);
}

/** PPO's critic: how much of the returns' variance its values explain, and its loss. */
const CRITIC: ChartSpec = {
  id: 'critic',
  title: 'Critic',
  help: 'critic/explained_variance: 1 − Var(returns − V) / Var(returns), the share of the returns the value head predicts (1 = perfect, ≤ 0 = no better than a constant); it rises as the critic learns, and GAE\'s advantages sharpen with it. critic/value_loss is in metrics.jsonl (its scale follows the reward\'s).',
  lines: [{ key: 'critic/explained_variance', label: 'explained variance', color: C.indigo }],
  domain: ['auto', 1],
  absentNote: 'Only PPO trains a critic (a value head); group algorithms compare episodes within a group instead.',
};

function exploration(numActions: number): ChartSpec[] {
  const uniform = numActions > 1 ? Math.log(numActions) : undefined;
  return [
    {
      id: 'entropy',
      title: 'Policy entropy',
      help: `Mean entropy of the action distribution, in nats (information measured with the natural log: 0 = always the same action).${uniform ? ` ln ${numActions} = ${uniform.toFixed(2)} is uniform random;` : ''} Near 0 the policy always does the same thing. A fall before success rises is collapse.`,
      lines: [
        { key: 'actor/rollout_entropy', label: 'rollout', color: C.purple },
        { key: 'actor/entropy', label: 'learner', color: C.blue, dashed: true },
      ],
      domain: [0, 'auto'],
      ref: uniform ? { y: uniform, label: 'uniform' } : undefined,
    },
    {
      id: 'distinct',
      title: 'Distinct trajectories',
      help: 'Share of the batch\'s episodes whose action sequences are all different. Near 0 = the policy replays one path.',
      lines: [{ key: 'episode/distinct_ratio', label: 'distinct', color: C.purple }],
      domain: [0, 1],
      format: pct,
    },
  ];
}

function signal(grouped: boolean, ppo: boolean): ChartSpec[] {
  return [
    ...(ppo ? [CRITIC] : []),
    {
      id: 'adv',
      title: 'Advantage spread',
      help: 'Std and mean |A| of the advantages over the batch\'s steps. Near 0 means the update has no direction.',
      lines: [
        { key: 'adv/std', label: 'std', color: C.orange },
        { key: 'adv/abs_mean', label: 'mean |A|', color: C.grey, dashed: true },
      ],
      domain: [0, 'auto'],
    },
    {
      id: 'zero-std',
      title: 'Zero-spread groups',
      help: 'groups/frac_zero_std: share of groups whose episodes all got the same reward. Their advantages are all 0, so they teach nothing.',
      lines: [{ key: 'groups/frac_zero_std', label: 'zero spread', color: C.red }],
      domain: [0, 1],
      format: pct,
      absentNote: grouped ? undefined : 'REINFORCE and PPO do not sample in groups: see the advantage spread instead.',
    },
    {
      id: 'group-std',
      title: 'In-group reward std',
      help: 'groups/reward_std_mean: mean spread of rewards within a group, the raw material of group-relative advantages.',
      lines: [{ key: 'groups/reward_std_mean', label: 'std', color: C.orange }],
      domain: [0, 'auto'],
      absentNote: grouped ? undefined : 'Only group algorithms (GRPO, Dr. GRPO, RLOO) have groups.',
    },
    {
      id: 'groups-dropped',
      title: 'Groups dropped',
      help: 'groups/dropped: groups whose rewards were all equal, dropped by dynamic sampling and replaced by fresh ones (groups/sampling_rounds: sampling rounds it took to fill the batch). Rising = the task gives fewer usable comparisons.',
      lines: [
        { key: 'groups/dropped', label: 'dropped', color: C.red },
        { key: 'groups/sampling_rounds', label: 'rounds', color: C.grey, dashed: true },
      ],
      domain: [0, 'auto'],
      absentNote: grouped ? 'Only with dynamic sampling on (Algorithm → dynamic sampling): groups with no reward spread are dropped and resampled.' : 'Only group algorithms with dynamic sampling drop groups.',
    },
  ];
}

const SHIFT: ChartSpec[] = [
  {
    id: 'approx-kl',
    title: 'Update size (approx KL)',
    help: 'actor/approx_kl: k3 estimate of KL(behaviour ‖ updated policy) per iteration, nats. Large values mean each update moves the policy far from the one that collected the data.',
    lines: [{ key: 'actor/approx_kl', label: 'approx KL', color: C.blue }],
    domain: [0, 'auto'],
  },
  {
    id: 'clipfrac',
    title: 'Clipped ratios',
    help: 'Share of steps whose probability ratio hit the clip (below 1 − ε_low / above 1 + ε_high): the trust region cutting updates off.',
    lines: [
      { key: 'actor/clipfrac_low', label: 'low', color: C.orange },
      { key: 'actor/clipfrac_high', label: 'high', color: C.purple },
    ],
    domain: [0, 'auto'],
    format: pct,
  },
  {
    id: 'kl-ref',
    title: 'KL to reference',
    help: "actor/kl_ref: KL(π‖π_ref) in nats per step (k3 estimate): to the initial policy (the warm start's result, or where the stage began) when a KL penalty (β > 0) anchors the run; in a distill stage, to the teacher, which distillation drives down.",
    lines: [{ key: 'actor/kl_ref', label: 'KL ref', color: C.teal }],
    domain: [0, 'auto'],
    absentNote: 'No reference policy in this run (KL coef β = 0).',
  },
  {
    id: 'staleness',
    title: 'Staleness',
    help: 'async/staleness_*: how many policy versions behind the learner the trained-on actions were sampled.',
    lines: [
      { key: 'async/staleness_mean', label: 'mean', color: C.grey },
      { key: 'async/staleness_max', label: 'max', color: C.red, dashed: true },
    ],
    domain: [0, 'auto'],
  },
  {
    id: 'is-ratio',
    title: 'Importance ratio',
    help: 'async/is_ratio_*: π_old / μ weights that correct for stale rollouts.',
    lines: [
      { key: 'async/is_ratio_mean', label: 'mean', color: C.blue },
      { key: 'async/is_ratio_max', label: 'max', color: C.red, dashed: true },
    ],
    absentNote: 'Synchronous run: every action was sampled by the policy being trained, so every importance ratio is exactly 1.',
  },
  {
    id: 'mismatch',
    title: 'Rollout vs trainer',
    help: 'mismatch/logprob_abs_diff_*: |log π| difference between the rollout session and the learner on the same weights and actions, nats. Should be float noise (~1e-7).',
    lines: [
      { key: 'mismatch/logprob_abs_diff_max', label: 'max', color: C.red },
      { key: 'mismatch/logprob_abs_diff_mean', label: 'mean', color: C.grey, dashed: true },
    ],
    domain: [0, 'auto'],
  },
];

/**
 * Token policies reuse the keys and values of earlier turns (and of the tokens already written)
 * instead of recomputing them: the share of context tokens served from the KV cache.
 */
const KV_CACHE: ChartSpec = {
  id: 'kv-cache',
  title: 'KV-cache hit rate',
  help: 'perf/kv_cache_hit_rate: share of context tokens whose keys and values came from the KV cache instead of being recomputed. In a multi-turn episode the second turn reuses the first turn\'s cache, so the share rises with the number of turns.',
  lines: [{ key: 'perf/kv_cache_hit_rate', label: 'hit rate', color: C.teal }],
  domain: [0, 1],
  format: pct,
};

/** Remote envs: what the network costs each step. */
const ENV_WIRE: ChartSpec = {
  id: 'env-wire',
  title: 'Env latency (network)',
  help: 'perf/env_wire_ms: real milliseconds one env step took over the network, request to reply, mean over the batch (remote envs).',
  lines: [{ key: 'perf/env_wire_ms', label: 'ms / step', color: C.teal }],
  domain: [0, 'auto'],
};

const SPEED: ChartSpec[] = [
  {
    id: 'env-steps',
    title: 'Env steps / s',
    help: 'perf/env_steps_per_s: environment steps per second of rollout time (for grids one step = one policy token, so tokens/s is the same).',
    lines: [
      { key: 'perf/env_steps_per_s', label: 'steps/s', color: C.teal },
      { key: 'perf/tokens_per_s', label: 'tokens/s', color: C.blue, dashed: true },
    ],
    domain: [0, 'auto'],
  },
  {
    id: 'iteration-s',
    title: 'Time per iteration',
    help: 'Seconds spent on rollout and on training per iteration, inside the worker.',
    lines: [
      { key: 'perf/rollout_s', label: 'rollout', color: C.teal },
      { key: 'perf/train_s', label: 'train', color: C.indigo },
    ],
    domain: [0, 'auto'],
  },
  {
    id: 'idle',
    title: 'Idle ratios',
    help: 'perf/*_idle_ratio: in a synchronous run the learner waits while rollouts run and vice versa; asynchronous training overlaps them.',
    lines: [
      { key: 'perf/learner_idle_ratio', label: 'learner', color: C.indigo },
      { key: 'perf/rollout_idle_ratio', label: 'rollout', color: C.teal, dashed: true },
    ],
    domain: [0, 1],
    format: pct,
  },
];

export const WARM: ChartSpec[] = [
  {
    id: 'warm-ce',
    title: 'Imitation loss',
    help: "Cross-entropy of the expert's tokens per policy token, nats, at each warm-start step: how surprised the model is by what the expert does. It falls as the model learns the tool-call format.",
    lines: [{ key: 'imitation/ce_loss', label: 'cross-entropy', color: C.indigo }],
    domain: [0, 'auto'],
  },
  {
    id: 'warm-prob',
    title: 'Expert-token probability',
    help: "Mean probability the model gives the expert's next token. A plateau and then a jump is a skill forming (e.g. copying digits: an induction head).",
    lines: [{ key: 'imitation/target_prob_mean', label: 'p(expert token)', color: C.green }],
    domain: [0, 1],
    format: pct,
  },
];

/** The algorithm's own charts (its descriptor's), in the dashboard's colours. */
function algoCharts(name: string): ChartSpec[] {
  if (!isAlgo(name)) return [];
  return (algoDescriptor(name).charts ?? []).map((ch) => ({
    id: ch.id,
    title: ch.title,
    help: ch.help,
    // Every descriptor's keys are declared (metrics/algoKeys.test.ts); the guard narrows the type.
    lines: ch.lines.flatMap((l) => (isMetricKey(l.key) ? [{ key: l.key, label: l.label, color: l.tone === 'primary' ? C.indigo : C.orange }] : [])),
    ...(ch.domain ? { domain: [ch.domain[0], ch.domain[1]] as [number | 'auto', number | 'auto'] } : {}),
  }));
}

/** The rollout budget with a prompt pool: episodes spent without gradient, and how unevenly prompts were served. */
const BUDGET: ChartSpec = {
  id: 'budget',
  title: 'Rollout budget',
  help: "budget/zero_std_episode_share: share of the iteration's episodes in groups whose rewards were all equal (spent without gradient); budget/uncertain_share: share given to prompts whose success estimate was between 0.2 and 0.8. The adaptive budget moves episodes from solved and hopeless prompts to uncertain ones at the same total; the uniform one gives every prompt group size episodes.",
  lines: [
    { key: 'budget/zero_std_episode_share', label: 'no-gradient episodes', color: C.red },
    { key: 'budget/uncertain_share', label: 'to uncertain prompts', color: C.teal },
  ],
  domain: [0, 1],
  format: pct,
};

/** A distill stage: how closely the student acts like its teacher. */
const DISTILL: ChartSpec = {
  id: 'distill',
  title: 'Distillation: agreement with the teacher',
  help: "distill/teacher_prob: the teacher's mean probability of the action (or token) the student took (1 = the teacher would always have chosen the same; a new student starts near 1/7 on a grid, near 1/V for tokens). An MLP student's reward is the per-step reverse KL; a transformer student's loss is the exact reverse KL per token (distill/kl in the run's metrics). Either way this rises while 'KL to reference' (the KL to the teacher, in the Shift section) falls. Drawn in the distill stage only.",
  lines: [{ key: 'distill/teacher_prob', label: 'p(teacher)', color: C.orange }],
  domain: [0, 1],
  format: pct,
  absentNote: 'Filled in by the distill stage.',
};

/** Every chart the dashboard draws for a run of `config` on an env with `maxSteps` and `numActions` (0 = tokens). */
/** Per-agent colours on the charts: the grid's agent colours (A red, B blue), then others. */
const AGENT_CHART_COLORS = [C.red, C.blue, C.teal, C.orange];

/**
 * Multi-agent envs (EnvSpec.agents): who reached their subgoal, how the learning signal is split
 * between the agents, and each agent's entropy (the `agents/<name>/…` keys, algos/agentCredit.ts).
 */
export function agentCharts(agents: readonly string[]): ChartSpec[] {
  if (agents.length < 2) return [];
  const line = (metric: 'subgoal_rate' | 'adv_abs_mean' | 'entropy', suffix = '') => agents.map((n, i) => ({ key: `agents/${n}/${metric}` as const, label: `${n.toUpperCase()}${suffix}`, color: AGENT_CHART_COLORS[i % AGENT_CHART_COLORS.length] }));
  return [
    {
      id: 'agents-subgoals',
      title: 'Subgoals',
      help: "agents/<name>/subgoal_rate: share of sampled episodes in which that agent reached its own subgoal (grid/switch-door: A stood on the switch, B passed the door); episode/success_rate: the shared outcome. The agent that must act first usually learns its part first; the team succeeds only once the later one's line follows.",
      lines: [...line('subgoal_rate'), { key: 'episode/success_rate', label: 'team', color: C.green }],
      domain: [0, 1],
      format: pct,
    },
    {
      id: 'agents-credit',
      title: 'Credit (|adv|)',
      help: "agents/<name>/adv_abs_mean: mean |advantage| over that agent's steps, the size of the learning signal its own actions get from the shared reward (a share of it per agent is agents/<name>/adv_share in metrics.jsonl). A line near 0 while the other's is large means that agent's actions are not being told apart. On grid/switch-door both stayed near 0.7 in the measured runs: the agents got signal of the same size, and the difference between them was in how fast each one's policy used it (the subgoal and entropy charts).",
      lines: line('adv_abs_mean'),
      domain: [0, 'auto'],
    },
    {
      id: 'agents-entropy',
      title: 'Entropy',
      help: "agents/<name>/entropy: the rollout policy's entropy over that agent's steps (nats; ln 7 ≈ 1.95 is uniform over the 7 actions). With separate networks each falls on its own schedule; with one shared network the agent whose role is easier to learn usually commits first.",
      lines: line('entropy'),
      domain: [0, 'auto'],
    },
  ];
}

export function dashboardCharts(config: { env?: { id: string }; model: { kind: string }; algo: { algo: string; rolloutCorrection?: RolloutCorrectionConfig }; shaping: unknown; rollout?: { budget?: { pool: number } }; stages?: readonly { distill?: unknown }[]; heldOut?: { every: number } }, maxSteps: number, numActions: number, agents: readonly string[] = []): Record<'outcome' | 'exploration' | 'signal' | 'shift' | 'reward' | 'speed' | 'agents', ChartSpec[]> {
  const tokens = config.model.kind === 'transformer';
  const family = config.env ? familyOfEnvId(config.env.id) : null;
  const toolEnv = family?.toolCharts === true;
  const heldOut = (config.heldOut?.every ?? 0) > 0 ? [HELD_OUT] : [];
  return {
    outcome: [...outcome(maxSteps, tokens, isShaped(config.shaping as ShapingConfig)), ...heldOut, rewardTerms(config.shaping as ShapingConfig), ...(toolEnv ? [TOOL_CALLS, TOOLS] : [])],
    exploration: exploration(numActions),
    signal: [...signal(isGroupAlgo(config.algo.algo), isAlgo(config.algo.algo) && algoDescriptor(config.algo.algo).critic), ...algoCharts(config.algo.algo), ...((config.rollout?.budget?.pool ?? 0) > 0 ? [BUDGET] : []), ...(config.stages?.some((st) => st.distill) ? [DISTILL] : [])],
    shift: [...SHIFT, ...correctionCharts(config.algo.rolloutCorrection)],
    reward: [PROXY],
    speed: [...SPEED, ...(tokens ? [KV_CACHE] : []), ...(family?.overNetwork ? [ENV_WIRE] : [])],
    agents: agentCharts(agents),
  };
}

/**
 * The one chart a phone shows right under Start while a run trains (the dashboard itself starts
 * below the fold there): a lesson step's first checked metric that a chart draws, else the success
 * rate. `check` is the armed step's metric keys, in the check's order.
 */
export function keyChart(specs: Record<string, ChartSpec[]>, checked: readonly string[] = []): ChartSpec | undefined {
  const all = Object.values(specs).flat();
  for (const key of checked) {
    const c = all.find((x) => x.lines.some((l) => l.key === key));
    if (c) return c;
  }
  return all.find((x) => x.id === 'success');
}

