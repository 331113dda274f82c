/**
 * The rules of a run configuration that zod's field schemas cannot say alone: the env exists and
 * takes its kwargs, the policy fits the env's family, the algorithm runs there, the work of an
 * iteration is bounded, and the rollout budget's and tree rollouts' conditions. Each returns
 * messages naming their field path ([] = fine).
 */
import { GROUP_ALGOS, type Algo, type AlgoConfig } from '../algos/config.ts';
import { correctionRunIssue } from '../algos/correction/config.ts';
import { rewardTermNameIssues } from '../reward/userTerms.ts';
import { algoDescriptor } from '../algos/registry/index.ts';
import { makeEnv, type EnvKwargs } from '../envs/index.ts';
import { familyOf, playOf, type EnvFamily } from '../envs/families.ts';
import { SHAPING_TERMS } from '../reward/shaping.ts';
import type { ParsedFields as Parsed, RunConfig } from './fields.ts';

export const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
/** Most episodes one iteration may sample (groups × group size, or episodes). */
export const MAX_EPISODES_PER_ITERATION = 16_384;
/** Most trainable parameters: 20M float32 is 80 MB per copy, and training keeps several copies. */
export const MAX_PARAMS = 20_000_000;
/** Most tokens in one transformer train step (sequences × context). */
export const MAX_TOKENS_PER_STEP = 131_072;

/** Bounds on the work one iteration asks for, so an oversized config gets a message instead of exhausting memory. */
export function sizes(c: Parsed, algo: AlgoConfig): string[] {
  const out: string[] = [];
  const grouped = GROUP_ALGOS.includes(algo.algo);
  const episodes = grouped ? c.rollout.groups * algo.groupSize : c.rollout.episodes;
  if (episodes > MAX_EPISODES_PER_ITERATION) {
    out.push(`${grouped ? 'rollout.groups × algo.groupSize' : 'rollout.episodes'}: at most ${MAX_EPISODES_PER_ITERATION.toLocaleString('en-US')} episodes per iteration (got ${episodes.toLocaleString('en-US')})`);
  }
  const m = c.model;
  // MLP: hidden layers' weights (the input layer is bounded by the env's view), twice with one network per agent; transformer: 12·L·d² for the blocks, plus embeddings.
  const params = m.kind === 'mlp' ? (m.agents === 'separate' ? 2 : 1) * m.hidden.slice(1).reduce((s, h, i) => s + h * m.hidden[i], 0) : m.nLayers * (4 * m.dModel * m.dModel + 2 * m.dModel * m.dFF) + m.context * m.dModel;
  if (params > MAX_PARAMS) out.push(`model: at most ${MAX_PARAMS.toLocaleString('en-US')} parameters (these sizes make about ${params.toLocaleString('en-US')})`);
  if (m.kind === 'transformer') {
    const perStep = c.rollout.learnerBatch * m.context;
    if (perStep > MAX_TOKENS_PER_STEP) out.push(`rollout.learnerBatch: learnerBatch × model.context must be ≤ ${MAX_TOKENS_PER_STEP.toLocaleString('en-US')} tokens per train step (got ${perStep.toLocaleString('en-US')})`);
    if (c.warmStart && c.warmStart.batch * m.context > MAX_TOKENS_PER_STEP) out.push(`warmStart.batch: warmStart.batch × model.context must be ≤ ${MAX_TOKENS_PER_STEP.toLocaleString('en-US')} tokens per step (got ${(c.warmStart.batch * m.context).toLocaleString('en-US')})`);
  }
  return out;
}

/** rollout.tree: branching replays a token episode's prefix in the lockstep loop, for episode-level group advantages. */
export function treeRules(c: Parsed, algo: AlgoConfig): string[] {
  if (!c.rollout.tree.enabled) return [];
  const out: string[] = [];
  const d = algoDescriptor(algo.algo);
  if (c.model.kind !== 'transformer') out.push('rollout.tree.enabled: tree rollouts branch token episodes: use a transformer policy');
  if (!d.group || d.advantage.kind !== 'episode') out.push(`rollout.tree.enabled: a shared prefix takes the mean of its branches' episode advantages, so it needs a group algorithm with episode-level advantages (${GROUP_ALGOS.filter((a) => algoDescriptor(a).advantage.kind === 'episode').join(', ')}); algo is '${algo.algo}'`);
  if (c.rollout.mode !== 'sync') out.push("rollout.tree.enabled: branches are sampled by the version that sampled their trunk: use rollout.mode 'sync'");
  if (c.rollout.workers > 0) out.push('rollout.tree.enabled: branches decode in the training thread: use rollout.workers 0');
  if (c.rollout.budget.pool > 0) out.push('rollout.tree.enabled: a prompt pool plans every group\'s size before sampling, branches add episodes after: use rollout.budget.pool 0');
  return out;
}

/** rollout.budget: a prompt pool is for sync tool runs of a group algorithm without dynamic sampling. */
export function budgetRules(c: Parsed, algo: AlgoConfig): string[] {
  const b = c.rollout.budget;
  const out: string[] = [];
  if (b.mode === 'adaptive' && b.pool === 0) out.push('rollout.budget.pool: adaptive allocation keeps an estimate per prompt, so it needs a finite pool of prompts (≥ 1)');
  if (b.minPerPrompt > b.maxPerPrompt) out.push(`rollout.budget.maxPerPrompt: must be ≥ minPerPrompt (${b.minPerPrompt}); got ${b.maxPerPrompt}`);
  if (b.pool === 0) return out;
  let fam: EnvFamily;
  try {
    fam = familyOf(makeEnv(c.env.id, c.env.kwargs).spec);
  } catch {
    return out; // runnable() reports the env
  }
  if (!fam.plays[c.model.kind]?.promptPool || !GROUP_ALGOS.includes(algo.algo)) out.push(`rollout.budget.pool: a prompt pool runs on tool envs with a group algorithm (${GROUP_ALGOS.join(', ')}); use 0`);
  if (c.rollout.mode !== 'sync') out.push("rollout.budget.pool: a prompt pool is allocated once per iteration, before it is sampled: use rollout.mode 'sync'");
  if (algo.dynamicSampling.enabled) out.push('algo.dynamicSampling.enabled: a prompt pool fixes the episodes per iteration (the budget), so it does not resample; turn dynamic sampling off');
  // GiGPO compares a group's episodes turn by turn in groups of algo.groupSize; adaptive groups differ in size.
  if (b.mode === 'adaptive' && algoDescriptor(algo.algo).advantage.kind === 'step-groups') out.push(`rollout.budget.mode: ${algo.algo} compares each group's episodes step by step in groups of algo.groupSize; adaptive allocation gives groups of unequal size: use 'uniform'`);
  const total = c.rollout.groups * algo.groupSize;
  if (b.mode === 'adaptive' && b.pool * b.maxPerPrompt < total) out.push(`rollout.budget.pool: pool × maxPerPrompt (${b.pool * b.maxPerPrompt}) must hold the ${total} episodes of an iteration (rollout.groups × algo.groupSize)`);
  return out;
}

/** `env` of a config whose other fields did not all parse: the env exists and takes its kwargs (shapes zod checks are left to zod's messages). */
export function envProblems(env: unknown): string[] {
  if (!isObject(env) || typeof env.id !== 'string') return [];
  const kwargs = env.kwargs === undefined ? {} : env.kwargs;
  if (!isObject(kwargs)) return [];
  return envErrors(env.id, kwargs as EnvKwargs);
}

/**
 * Why `makeEnv(id, kwargs)` fails, every kwarg at once (the env names only the first it meets):
 * each kwarg alone, then together (for rules between kwargs); [] when it succeeds.
 */
export function envErrors(id: string, kwargs: EnvKwargs): string[] {
  const tryMake = (kw: EnvKwargs): string | null => {
    try {
      makeEnv(id, kw);
      return null;
    } catch (e) {
      return (e as Error).message;
    }
  };
  const all = tryMake(kwargs);
  if (all === null) return [];
  const each = Object.keys(kwargs).map((k) => tryMake({ [k]: kwargs[k] } as EnvKwargs));
  const found = [...new Set(each.filter((m): m is string => m !== null))];
  return (found.length > 0 ? found : [all]).map((m) => `env: ${m}`);
}

/** Why constrained decoding cannot run for this config, or null: it masks a token policy to a tool env's action grammar. */
function constrainedError(c: Parsed, family: string): string | null {
  if (c.model.kind !== 'transformer') return `constrained decoding masks a token policy; this run's model is '${c.model.kind}': use false`;
  const env = makeEnv(c.env.id, c.env.kwargs) as { actionGrammar?: unknown };
  if (typeof env.actionGrammar !== 'function') return `${c.env.id} (a ${family} env) has no action grammar to constrain decoding to; use false, or a tool env (tools/calculator, tools/kv-lookup, tools/flaky-api, tools/memory)`;
  return null;
}

/** The env the warm start's expert plays: the run's env with `warmStart.envKwargs` merged over its kwargs. */
export function warmStartEnv(c: Pick<RunConfig, 'env' | 'warmStart'>): { id: string; kwargs: EnvKwargs } {
  return { id: c.env.id, kwargs: { ...(c.env.kwargs as EnvKwargs), ...((c.warmStart?.envKwargs ?? {}) as EnvKwargs) } };
}

/** Rules that need the env itself: it exists, takes these kwargs, and pairs with the policy. */
export function runnable(c: Parsed, algo: AlgoConfig): string[] {
  let fam: EnvFamily;
  let agentCount: number;
  let maxSteps: number;
  try {
    const spec = makeEnv(c.env.id, c.env.kwargs).spec;
    fam = familyOf(spec);
    agentCount = spec.agents?.length ?? 1;
    maxSteps = spec.maxSteps;
  } catch {
    return envErrors(c.env.id, c.env.kwargs);
  }
  const out: string[] = [];
  // The family's rules for this policy (a policy that does not fit is judged by the family's own).
  const play = playOf(fam, c.model.kind);
  if (!fam.plays[c.model.kind]) out.push(`model.kind: ${fam.modelKindRule} (got '${c.model.kind}')`);
  if (play.syncOnly !== null && c.rollout.mode === 'async') out.push(`rollout.mode: ${play.syncOnly}; use 'sync'`);
  if (c.rollout.workers > play.workers.max) out.push(`rollout.workers: ${play.workers.why}`);
  if (play.workerNeedsGroupAlgo && c.rollout.workers === 1 && !GROUP_ALGOS.includes(c.algo.algo as Algo)) out.push(`rollout.workers: a token rollout worker serves group algorithms (${GROUP_ALGOS.join(', ')}); got '${c.algo.algo}', use 0`);
  if (play.asyncNeedsGroupAlgo && c.rollout.mode === 'async' && !GROUP_ALGOS.includes(c.algo.algo as Algo)) out.push(`rollout.mode: async token training takes a group algorithm (${GROUP_ALGOS.join(', ')}); got '${c.algo.algo}'`);
  if (c.rollout.constrained) {
    const why = constrainedError(c, fam.name);
    if (why) out.push(`rollout.constrained: ${why}`);
  }
  // Where the algorithm itself does not run: its descriptor's reasons.
  const d = algoDescriptor(c.algo.algo);
  const target = play.target;
  const refusedTarget = d.refuses?.[target];
  if (refusedTarget) out.push(`algo.algo: ${refusedTarget}`);
  if (c.rollout.mode === 'async' && d.refuses?.async) out.push(`rollout.mode: ${d.refuses.async}`);
  if (c.model.kind === 'mlp' && c.model.agents === 'separate' && agentCount !== 2) {
    out.push(`model.agents: 'separate' gives each agent of a two-agent env (e.g. grid/switch-door) its own network; ${c.env.id} has ${agentCount === 1 ? 'one agent' : `${agentCount} agents`}, use 'shared'`);
  }
  if (d.runCheck) out.push(...d.runCheck({ target, envId: c.env.id, maxSteps, learnerBatch: c.rollout.learnerBatch }));
  const corr = correctionRunIssue(algo.rolloutCorrection, target);
  if (corr) out.push(corr);
  out.push(...rewardTermNameIssues(c.reward, null, SHAPING_TERMS));
  if (c.warmStart && Object.keys(c.warmStart.envKwargs).length > 0) {
    // The demonstrations' env is built here, so a bad kwarg is named before any training starts.
    out.push(...envErrors(c.env.id, warmStartEnv(c).kwargs as EnvKwargs).map((m) => `warmStart.envKwargs: ${m.replace(/^env: /, '')}`));
  }
  if (fam.plays[c.model.kind]?.data === 'steps' && c.warmStart !== null) {
    // Behaviour cloning of the env's expert (trainer/gridImitation.ts): one agent, and no auxiliary observation loss (an MLP predicts no tokens).
    if (agentCount > 1) out.push(`warmStart: the grid warm start imitates one expert; ${c.env.id} has ${agentCount} agents`);
    if (c.warmStart.observationWeight !== 0) out.push('warmStart.observationWeight: an mlp policy predicts actions, not the observation tokens; use 0');
  }
  return out;
}
