/**
 * A run configuration: everything `npm run train` and the UI need to start a run, as plain JSON.
 * Presets (presets/*.json) are run configurations with an id, a title and a description.
 * Validation names the field and says what is wrong, so a typo in a file never starts a
 * silently different experiment.
 */
import { parseAlgoConfig, defaultsFor, ALGOS, type Algo } from '../algos/config.ts';
import { algoDescriptor } from '../algos/registry/index.ts';
import { makeEnv } from '../envs/index.ts';
import { familyOf, type EnvFamily } from '../envs/families.ts';
import { mixSeed } from '../util/rng.ts';
import { DEFAULT_SHAPING, parseShapingConfig, parseShapingSchedule } from '../reward/shaping.ts';
import { runConfigSchema, type ParseResult, type RunConfig, type RunConfigInput, type Stage } from './fields.ts';
import { budgetRules, envProblems, isObject, runnable, sizes, treeRules } from './rules.ts';

export { MAX_REWARD_CODE_CHARS, MAX_STAGES, runConfigSchema, type RunConfig, type RunConfigInput, type Stage, type StageInput, type ParseResult } from './fields.ts';
export { MAX_EPISODES_PER_ITERATION, MAX_PARAMS, MAX_TOKENS_PER_STEP, warmStartEnv } from './rules.ts';

function deepMerge<T>(base: T, over: unknown): T {
  if (over === undefined) return base;
  if (typeof base !== 'object' || base === null || Array.isArray(base) || typeof over !== 'object' || over === null || Array.isArray(over)) {
    return over as T;
  }
  const out: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  for (const [k, v] of Object.entries(over)) out[k] = deepMerge(out[k], v);
  return out as T;
}

/** Keys that reach into an object's prototype when merged: never meaningful in a config. */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** Paths of forbidden keys anywhere in `v` (JSON.parse makes `__proto__` an ordinary own key). */
export function forbiddenKeys(v: unknown, path: string[] = [], out: string[] = []): string[] {
  if (v === null || typeof v !== 'object' || path.length > 64) return out;
  for (const k of Object.keys(v)) {
    const at = [...path, k];
    if (FORBIDDEN_KEYS.has(k)) out.push(`${at.join('.')}: the key '${k}' is not allowed in a config`);
    else forbiddenKeys((v as Record<string, unknown>)[k], at, out);
  }
  return out;
}


/** Validates a run configuration; every message names its field path, and all are reported at once. */
export function parseRunConfig(input: unknown): ParseResult {
  const r = parseRunStages(input);
  return r.ok ? { ok: true, config: r.config } : r;
}

/** A parsed run and its stages, each resolved (merged over the run and parsed) once, in order; [] without stages. */
export type ParsedRun = { ok: true; config: RunConfig; stages: RunConfig[] } | { ok: false; messages: string[] };

/**
 * parseRunConfig, keeping what validating a staged run resolves anyway: each stage's own run
 * config (`stageConfig`), parsed once here, so nothing after it parses a stage again.
 */
export function parseRunStages(input: unknown): ParsedRun {
  const forbidden = forbiddenKeys(input);
  if (forbidden.length > 0) return { ok: false, messages: forbidden };
  const r = runConfigSchema.safeParse(input);
  const messages = r.success ? [] : r.error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(top level)'}: ${i.message}`);
  // The sub-configs are checked even when the top level failed, so one pass reports everything.
  const raw = isObject(input) ? input : {};
  const algoIn = r.success ? (r.data.algo as Record<string, unknown>) : isObject(raw.algo) && (ALGOS as readonly unknown[]).includes(raw.algo.algo) ? raw.algo : null;
  const algo = algoIn ? parseAlgoConfig(deepMerge(defaultsFor(algoIn.algo as Algo), algoIn)) : null;
  const shapingIn = r.success ? r.data.shaping : isObject(raw.shaping) ? raw.shaping : raw.shaping === undefined ? {} : null;
  const shaping = shapingIn ? parseShapingConfig(deepMerge(DEFAULT_SHAPING, shapingIn)) : null;
  const scheduleIn = r.success ? r.data.schedule : (raw.schedule ?? null);
  const schedule = scheduleIn === null ? null : parseShapingSchedule(scheduleIn);
  if (algo && !algo.ok) messages.push(...algo.messages.map((m) => `algo.${m}`));
  if (shaping && !shaping.ok) messages.push(...shaping.messages.map((m) => `shaping.${m}`));
  if (schedule && !schedule.ok) messages.push(...schedule.messages.map((m) => `schedule.${m}`));
  if (!r.success || !algo?.ok || !shaping?.ok || (schedule && !schedule.ok)) {
    // The env and its kwargs are checked too (runnable() does it when everything else parsed), so a
    // misspelt field elsewhere does not hide an out-of-range kwarg until the next try.
    if (!messages.some((m) => m === 'env' || m.startsWith('env.') || m.startsWith('env:'))) messages.push(...envProblems(raw.env));
    return { ok: false, messages };
  }
  if (algoDescriptor(algo.config.algo).advantage.kind === 'gae') {
    const usesPotential = shaping.config.potential.weight !== 0 || (schedule?.ok && schedule.schedule.stages.some((st) => (st.weights.potential ?? 0) !== 0));
    if (usesPotential && shaping.config.potential.gamma !== algo.config.gamma) {
      // F = γΦ(s′) − Φ(s) telescopes (and so keeps the optimal policy) only with the learner's γ.
      messages.push(`shaping.potential.gamma: must equal algo.gamma (${algo.config.gamma}) for PPO, or the shaping changes which policy is optimal (got ${shaping.config.potential.gamma})`);
    }
  }
  // Token episodes record no potentials Φ (the grid's goal distance is not in a transcript).
  if (r.data.model.kind === 'transformer') {
    if (shaping.config.potential.weight !== 0) messages.push('shaping.potential.weight: potential-based shaping reads the grid goal distance Φ, which token episodes do not record; use 0 (or the mlp policy on a grid env)');
    const stages = schedule?.ok ? schedule.schedule.stages : [];
    stages.forEach((st, i) => {
      if ((st.weights.potential ?? 0) !== 0) messages.push(`schedule.stages.${i}.weights.potential: potential-based shaping reads the grid goal distance Φ, which token episodes do not record; use 0`);
    });
  }
  const rawRollout = (input as { rollout?: { learnerBatch?: unknown } }).rollout;
  if (rawRollout?.learnerBatch === undefined && r.data.model.kind === 'transformer') r.data.rollout.learnerBatch = 16;
  messages.push(...runnable(r.data, algo.config), ...sizes(r.data, algo.config), ...budgetRules(r.data, algo.config), ...treeRules(r.data, algo.config));
  if (messages.length > 0) return { ok: false, messages };
  const config: RunConfig = { ...r.data, algo: algo.config, shaping: shaping.config, schedule: schedule ? schedule.schedule : null };
  const stages: RunConfig[] = [];
  if (config.stages.length > 0) {
    messages.push(...stageRules(config, raw.iterations, stages));
    if (messages.length > 0) return { ok: false, messages };
    config.iterations = config.stages.reduce((n, st) => n + st.iterations, 0);
  }
  return { ok: true, config, stages };
}

/**
 * Stage `k` of a staged run as a run config of its own: the stage's fields merged over the run's.
 * Stage 1 keeps the run's warm start and seed; later stages get a seed of their own (fresh
 * episodes), and a distill stage the student model with the reverse-KL reward (ARCHITECTURE.md,
 * 'Staged pipelines'). The result has no stages; parseRunConfig has validated it.
 */
export function stageInput(c: RunConfig, k: number): RunConfigInput {
  const st = c.stages[k];
  if (!st) throw new RangeError(`stageInput: the run has ${c.stages.length} stages, no stage ${k + 1}`);
  const d = st.distill;
  const shaping = deepMerge(deepMerge(c.shaping as unknown, st.shaping ?? {}), d ? { outcome: { weight: d.outcomeWeight } } : {});
  const algo = deepMerge(deepMerge(c.algo as unknown, st.algo ?? {}), d ? { klCoef: d.klCoef, klMode: 'reward', klEstimator: 'k1' } : {});
  return {
    ...c,
    id: `${c.id}/${k + 1}`,
    title: `${c.title || c.id} · ${st.name}`,
    env: st.env ?? c.env,
    model: d ? d.student : c.model,
    algo: algo as RunConfigInput['algo'],
    shaping: shaping as Record<string, unknown>,
    schedule: null,
    warmStart: k === 0 ? c.warmStart : null,
    iterations: st.iterations,
    stopAtSuccess: null,
    stages: [],
    seed: k === 0 ? c.seed : mixSeed(c.seed, 0x57a6e, k) % 2 ** 31,
  };
}

/** Stage `k` of a validated staged run, parsed (throws only on a config parseRunConfig refused). */
export function stageConfig(c: RunConfig, k: number): RunConfig {
  const r = parseRunConfig(stageInput(c, k));
  if (!r.ok) throw new Error(`stage ${k + 1} (${c.stages[k].name}): ${r.messages.join('; ')}`);
  return r.config;
}

/** The iteration (1-based, as the charts count) at which each stage begins. */
export function stageStarts(stages: readonly Pick<Stage, 'iterations'>[]): number[] {
  const out: number[] = [];
  let it = 1;
  for (const st of stages) {
    out.push(it);
    it += st.iterations;
  }
  return out;
}

/** What a policy sees and chooses among in an env: stages that change the env must keep both. */
function shapeOf(env: { id: string; kwargs: Record<string, unknown> }): { fam: EnvFamily; obs: number; actions: number } {
  const e = makeEnv(env.id, env.kwargs);
  const fam = familyOf(e.spec);
  const obs = fam.observation === 'grid' ? ((e.reset({ seed: 0 }).obs as { image: ArrayLike<number> }).image.length) : 0;
  return { fam, obs, actions: e.spec.actionSpace.kind === 'discrete' ? e.spec.actionSpace.n : 0 };
}

/**
 * A staged run's rules: each stage is a valid run, they chain (same shapes), and the run's totals
 * agree. Each stage's parsed config goes to `resolved`, in order (all of them when none failed).
 */
function stageRules(c: RunConfig, rawIterations: unknown, resolved: RunConfig[]): string[] {
  const out: string[] = [];
  const sum = c.stages.reduce((n, st) => n + st.iterations, 0);
  if (rawIterations !== undefined && rawIterations !== sum) out.push(`iterations: a staged run lasts its stages' iterations (${c.stages.map((st) => st.iterations).join(' + ')} = ${sum}); set ${sum} or leave it out (got ${JSON.stringify(rawIterations)})`);
  if (c.stopAtSuccess !== null) out.push('stopAtSuccess: a staged run runs every stage; stopping on success would end it in its first stage (use null)');
  if (c.schedule !== null) out.push('schedule: a progressive reward schedule and stages both change the reward over a run; use one (a stage may set its own shaping)');
  const base = shapeOf(c.env);
  c.stages.forEach((st, k) => {
    const at = `stages.${k}`;
    if (st.algo && 'algo' in st.algo && st.algo.algo !== c.algo.algo) out.push(`${at}.algo.algo: a stage keeps the run's algorithm ('${c.algo.algo}'; the learner's graph and weights are built for it); got ${JSON.stringify(st.algo.algo)}`);
    if (st.distill) {
      if (k === 0) out.push(`${at}.distill: distillation needs a teacher, so it cannot be the first stage`);
      if (k !== c.stages.length - 1) out.push(`${at}.distill: distillation ends a pipeline (the stages after it would train the student, whose shape differs from the run's model); make it the last stage`);
      out.push(...distillRules(c, st.distill, at, base.fam));
    }
    if (st.env) {
      let shape: ReturnType<typeof shapeOf> | null = null;
      try {
        shape = shapeOf(st.env);
      } catch (e) {
        out.push(`${at}.env: ${(e as Error).message}`);
      }
      if (shape && shape.fam !== base.fam) out.push(`${at}.env: a ${shape.fam.name} env, but the run trains on ${base.fam.name} envs (the policy carries over from stage to stage)`);
      else if (shape && (shape.obs !== base.obs || shape.actions !== base.actions)) out.push(`${at}.env: its observations (${shape.obs} values) or actions (${shape.actions}) differ from the run's env (${base.obs}, ${base.actions}); keep the view size so the policy carries over`);
    }
    if (out.length > 0) return;
    const r = parseRunConfig(stageInput(c, k));
    if (r.ok) resolved.push(r.config);
    else out.push(...r.messages.map((m) => `${at} (${st.name}): ${m}`));
  });
  return out;
}

/** A distill stage's student against the run's model: the same kind, and what each kind supports. */
function distillRules(c: RunConfig, d: NonNullable<Stage['distill']>, at: string, fam: EnvFamily): string[] {
  const s = d.student;
  if (s.kind !== c.model.kind) return [`${at}.distill.student.kind: the student must be the run's kind of policy ('${c.model.kind}'), got '${s.kind}'`];
  if (s.kind === 'mlp') return fam.plays.mlp ? [] : [`${at}.distill: an mlp student needs a grid env`];
  const out: string[] = [];
  const teacher = c.model as Extract<RunConfig['model'], { kind: 'transformer' }>;
  if (s.context > teacher.context) out.push(`${at}.distill.student.context: at most the teacher's context (${teacher.context}), which scores every position of the student's episodes (got ${s.context})`);
  if (d.outcomeWeight !== 0) out.push(`${at}.distill.outcomeWeight: a transformer student trains on the KL to the teacher alone (the loss has no reward term); use 0`);
  return out;
}
