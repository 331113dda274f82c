/**
 * A run configuration: everything `npm run train` and the UI need to start a run, as plain JSON.
 * Presets (presets/*.json) are run configurations with an id, a title and a description.
 * Validation names the field and says what is wrong, so a typo in a file never starts a
 * silently different experiment.
 */
import { z } from 'zod';
import { parseAlgoConfig, defaultsFor, ALGOS, GROUP_ALGOS, type Algo, type AlgoConfig } from '../algos/config.ts';
import { correctionRunIssue } from '../algos/correction/config.ts';
import { rewardTermNameIssues } from '../reward/userTerms.ts';
import { algoDescriptor } from '../algos/registry/index.ts';
import { ROLLOUT_BUDGET_DEFAULTS as BD } from '../algos/budget.ts';
import { DEFAULT_TREE_ROLLOUT as TD } from '../rollout/treeRollout.ts';
import { makeEnv, type EnvKwargs } from '../envs/index.ts';
import { familyOf, playOf, type EnvFamily } from '../envs/families.ts';
import { mixSeed } from '../util/rng.ts';
import { DEFAULT_SHAPING, SHAPING_TERMS, parseShapingConfig, parseShapingSchedule, type ShapingConfig, type ShapingSchedule } from '../reward/shaping.ts';

const transformerSchema = z.strictObject({
  kind: z.literal('transformer'),
  dModel: z.int().min(8).max(1024).default(64),
  nLayers: z.int().min(1).max(12).default(2),
  nHeads: z.int().min(1).max(16).default(4),
  dFF: z.int().min(8).max(4096).default(256),
  context: z.int().min(8).max(1024).default(128),
});

const modelSchema = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('mlp'),
    /** Hidden widths, input side first. */
    hidden: z.array(z.int().min(1).max(4096)).min(1).max(8).default([64, 64]),
    activation: z.enum(['tanh', 'relu']).default('tanh'),
    /** Multi-agent envs: one network for every agent ('shared') or one per agent without shared parameters ('separate'). */
    agents: z.enum(['shared', 'separate']).default('shared'),
  }),
  transformerSchema,
]);

/** Imitation warm start on expert episodes before RL (tool envs); it also becomes the KL reference. */
const warmStartSchema = z.strictObject({
  /** Cross-entropy train steps on fresh expert episodes. */
  steps: z.int().min(1).max(100_000),
  /** Expert episodes per step (token policies: sequences; the grid MLP: their steps, up to rollout.learnerBatch rows). */
  batch: z.int().min(1).max(1024).default(16),
  /** Adam learning rate at the first step (decays linearly to 0.1×). */
  lr: z.number().positive().max(1).default(3e-3),
  /** Weight of an auxiliary next-token loss on the observations, relative to the action loss (0 = actions only). */
  observationWeight: z.number().min(0).max(100).default(0),
  /** Env kwargs merged over `env.kwargs` for the expert episodes only ({} = demonstrations from the training env): lets demonstrations lack what RL must discover. */
  envKwargs: z.record(z.string(), z.unknown()).default({}),
});

/** Held-out pass@1 / pass@k during training (trainer/heldOutEval.ts): cheap enough for a tab at the defaults. */
const heldOutSchema = z.strictObject({
  /** Iterations between held-out evaluations, each before that iteration's update (0 = none; iteration 0 is the one before RL). */
  every: z.int().min(0).max(1_000_000).default(0),
  /** Held-out questions (seeds no run trains on) per evaluation. */
  questions: z.int().min(1).max(256).default(16),
  /** Samples per question at temperature 1: the k of pass@k (pass@1 is their mean success). */
  k: z.int().min(1).max(32).default(4),
});

const rolloutSchema = z.strictObject({
  /** Groups per iteration for group algorithms (each `algo.groupSize` episodes from one seed). */
  groups: z.int().min(1).max(512).default(8),
  /** Episodes per iteration for REINFORCE and PPO. */
  episodes: z.int().min(1).max(4096).default(32),
  /**
   * Rows (MLP) or sequences (transformer) per train step: the static batch of the train graph.
   * Default 512 env steps for grid envs; 16 sequences for tool envs (each is `context` tokens).
   */
  learnerBatch: z.int().min(1).max(8192).default(512),
  /** 'sync' = staleness 0; 'async' = rollouts overlap training, bounded by maxStaleness. */
  mode: z.enum(['sync', 'async']).default('sync'),
  /** Async only: most policy versions a trained-on step may lag behind the learner. */
  maxStaleness: z.int().min(0).max(16).default(2),
  /** Rollout workers (0 = in the training thread). Tool envs: 0 or 1 (one worker holds the KV cache). */
  workers: z.int().min(0).max(16).default(0),
  /** Token policies: most tokens per action (end-of-action included) before a forced end. */
  maxActionTokens: z.int().min(1).max(512).default(32),
  /** Token policies on tool envs: sample (and train) the policy masked to the env's action grammar, so every call is well-formed. */
  constrained: z.boolean().default(false),
  /**
   * Async token policies: decoder rows, i.e. the KV-cache budget in episodes' worth of context.
   * Fewer rows than episodes in flight evicts parked episodes (they re-prefill). 0 = one per
   * episode of a batch.
   */
  kvRows: z.int().min(0).max(1024).default(0),
  /**
   * How an iteration's episodes are split over prompts (algos/budget.ts). Sync tool runs with a
   * group algorithm: 'adaptive' gives more episodes to prompts of uncertain outcome, fewer to
   * solved or hopeless ones, at the same total (rollout.groups × algo.groupSize).
   */
  budget: z
    .strictObject({
      /** 'uniform' = every prompt gets algo.groupSize episodes; 'adaptive' = episodes go where the outcome is uncertain. */
      mode: z.enum(['uniform', 'adaptive']).default(BD.mode),
      /** Prompts in the training pool (env seeds cycled through); 0 = a fresh prompt for every group. */
      pool: z.int().min(0).max(65_536).default(BD.pool),
      /** Adaptive: fewest episodes a chosen prompt gets (a group of one has no spread). */
      minPerPrompt: z.int().min(2, 'must be ≥ 2 (a group of one has no spread)').max(1024).default(BD.minPerPrompt),
      /** Adaptive: most episodes one prompt gets per iteration. */
      maxPerPrompt: z.int().min(2).max(1024).default(BD.maxPerPrompt),
      /** Per-iteration decay of each prompt's success/failure counts (1 = never forget). */
      decay: z.number().min(0).max(1).default(BD.decay),
    })
    .default({ ...BD }),
  /**
   * Tree rollouts (rollout/treeRollout.ts): after a tool reply where the policy's next-token
   * entropy exceeds the threshold, extra episodes branch from that prefix; a shared prefix is
   * trained once, with the mean advantage of its branches. Sync token runs of a group algorithm.
   */
  tree: z
    .strictObject({
      /** Off by default: every episode is sampled whole. */
      enabled: z.boolean().default(TD.enabled),
      /** Entropy (nats) of the first token's distribution after a tool reply above which a turn is a branch point. */
      entropyThreshold: z.number().min(0).max(20).default(TD.entropyThreshold),
      /** Extra episodes per branch point. */
      branches: z.int().min(1).max(16).default(TD.branches),
      /** Most branch points per sampled episode (its highest-entropy ones). */
      maxPoints: z.int().min(1).max(16).default(TD.maxPoints),
    })
    .default({ ...TD }),
});

/** Longest reward module accepted, characters: a hand-written file of terms is a few KB; the config travels in links and storage. */
export const MAX_REWARD_CODE_CHARS = 64 * 1024;

/** A reward term's name: a shaping term or an export of the reward code (a JavaScript identifier). */
const termName = z.string().regex(/^[A-Za-z_$][\w$]*$/, 'must be a term name (a JavaScript identifier, e.g. stepCost)');

/** User-written reward terms (the reward lab; ARCHITECTURE.md 'Reward lab'), run in a sandbox. */
const rewardSchema = z.strictObject({
  /**
   * The reward module's source: an ES module whose named exports are functions (step) => number,
   * each a term named after its export ('' = no user terms). Kept in the config so a run is
   * self-contained: the config alone re-creates its reward.
   */
  code: z.string().max(MAX_REWARD_CODE_CHARS, `must be at most ${MAX_REWARD_CODE_CHARS.toLocaleString('en-US')} characters`).default(''),
  /** A term value that is not a finite number: 'skip' counts the term 0 for that episode and reports it; 'stop' stops the run. */
  onNonFinite: z.enum(['skip', 'stop'], { error: "must be 'skip' (count the term 0 for that episode) or 'stop' (stop the run)" }).default('skip'),
  /** Most wall time a term's call may take, ms, judged over its calls (most of them over it stops the run); one call past max(1 s, 10×) is stopped as a loop. */
  callTimeoutMs: z
    .int({ error: 'must be a whole number of milliseconds' })
    .min(1, 'must be at least 1 ms')
    .max(10_000, 'must be at most 10,000 ms (10 s): a term that slow would stall every iteration')
    .default(100),
  /** Reward-lab terms scored and logged (reward/<term>/*) but not trained on: their values stay out of the reward the advantages see. */
  logOnly: z.array(termName, { error: 'must be a list of term names' }).max(64).default([]),
  /** The eval reward, logged each iteration as eval/reward_mean: the sum of these terms (the shaping terms' names or the code's exports, log-only ones included); [] = none. */
  evalTerms: z.array(termName, { error: 'must be a list of term names' }).max(64).default([]),
});

const envSchema = z.strictObject({ id: z.string().min(1), kwargs: z.record(z.string(), z.unknown()).default({}) });

/**
 * One stage of a staged pipeline (ARCHITECTURE.md, 'Staged pipelines'): its fields are merged
 * over the run's, and it starts from the weights the stage before it ended with.
 */
const stageSchema = z.strictObject({
  /** Shown on the charts' stage markers, the stage strip and the CLI log. */
  name: z.string().trim().min(1, 'must name the stage').max(40, 'must be at most 40 characters (it labels the charts)'),
  /** Iterations (rollout + update) in this stage. */
  iterations: z.int().min(1).max(1_000_000),
  /** Another env for this stage (a harder layout, another task of the same family); default: the run's. */
  env: envSchema.optional(),
  /** Shaping fields merged over the run's for this stage (e.g. `{ "progress": { "weight": 0 } }`). */
  shaping: z.record(z.string(), z.unknown()).optional(),
  /** Algorithm fields merged over the run's for this stage (lr, entropyCoef, …); the algorithm itself stays the run's. */
  algo: z.record(z.string(), z.unknown()).optional(),
  /**
   * Distillation: this stage trains a new, smaller `student` policy to act like the policy the
   * stages before it trained (the teacher), on the student's own episodes (on-policy
   * distillation). An mlp student gets each step's reward klCoef × (log π_teacher(a|s) −
   * log π_student(a|s)), the per-step reverse KL, plus outcomeWeight × the env's reward; a
   * transformer student minimises klCoef × the exact reverse KL to the teacher's next-token
   * distribution at each of its policy tokens (trainer/tokenDistill.ts).
   */
  distill: z
    .strictObject({
      /** The student (the run's model kind): smaller than the teacher to be worth distilling. */
      student: z.discriminatedUnion('kind', [
        z.strictObject({
          kind: z.literal('mlp'),
          hidden: z.array(z.int().min(1).max(4096)).min(1).max(8),
          activation: z.enum(['tanh', 'relu']).default('tanh'),
          /** Two-agent envs: one network for both agents or one each (as the run's model.agents). */
          agents: z.enum(['shared', 'separate']).default('shared'),
        }),
        transformerSchema,
      ]),
      /** Weight of the reverse KL (nats per step or token): 1 = pure distillation's scale. */
      klCoef: z.number().positive().max(100).default(1),
      /** Weight of the env's own reward during distillation (0 = imitate the teacher only; mlp students only). */
      outcomeWeight: z.number().min(0).max(100).default(0),
    })
    .optional(),
});

export type StageInput = z.input<typeof stageSchema>;
export type Stage = z.output<typeof stageSchema>;

/** Most stages one pipeline holds. */
export const MAX_STAGES = 8;

export const runConfigSchema = z.strictObject({
  /** Preset id (kebab-case); free-form for ad-hoc files. */
  id: z.string().min(1).default('custom'),
  title: z.string().default(''),
  description: z.string().default(''),
  env: envSchema,
  model: modelSchema,
  /** Algorithm config; unspecified fields take the chosen algorithm's defaults. */
  algo: z.looseObject({ algo: z.enum(ALGOS as unknown as [string, ...string[]]) }),
  shaping: z.record(z.string(), z.unknown()).default({}),
  /** Progressive shaping stages (dense shaping early, outcome late); null = the shaping weights stay fixed. */
  schedule: z.unknown().default(null),
  rollout: rolloutSchema.default(rolloutSchema.parse({})),
  reward: rewardSchema.default(rewardSchema.parse({})),
  warmStart: warmStartSchema.nullable().default(null),
  heldOut: heldOutSchema.default(heldOutSchema.parse({})),
  /** Training iterations (rollout + update). With `stages`, their sum (leave it out to have it computed). */
  iterations: z.int().min(1).max(1_000_000).default(100),
  /**
   * A staged pipeline: after the warm start (if any), these stages run in order, each merged over
   * this config and starting from the weights the previous one ended with; [] = one stage, this config.
   */
  stages: z.array(stageSchema).max(MAX_STAGES, `at most ${MAX_STAGES} stages`).default([]),
  /** Stop early once the success rate (mean over the last 3 iterations) reaches this. null = never. */
  stopAtSuccess: z.number().min(0).max(1).nullable().default(null),
  seed: z.int().min(0).max(2 ** 31 - 1).default(0),
});

export type RunConfigInput = z.input<typeof runConfigSchema>;
type Parsed = z.output<typeof runConfigSchema>;

export interface RunConfig extends Omit<Parsed, 'algo' | 'shaping' | 'schedule'> {
  algo: AlgoConfig;
  shaping: ShapingConfig;
  schedule: ShapingSchedule | null;
}

export type ParseResult = { ok: true; config: RunConfig } | { ok: false; messages: string[] };

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

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Validates a run configuration; every message names its field path, and all are reported at once. */
export function parseRunConfig(input: unknown): ParseResult {
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
  if (config.stages.length > 0) {
    messages.push(...stageRules(config, raw.iterations));
    if (messages.length > 0) return { ok: false, messages };
    config.iterations = config.stages.reduce((n, st) => n + st.iterations, 0);
  }
  return { ok: true, config };
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

/** A staged run's rules: each stage is a valid run, they chain (same shapes), and the run's totals agree. */
function stageRules(c: RunConfig, rawIterations: unknown): string[] {
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
    if (!r.ok) out.push(...r.messages.map((m) => `${at} (${st.name}): ${m}`));
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

/** Most episodes one iteration may sample (groups × group size, or episodes). */
export const MAX_EPISODES_PER_ITERATION = 16_384;
/** Most trainable parameters: 20M float32 is 80 MB per copy, and training keeps several copies. */
export const MAX_PARAMS = 20_000_000;
/** Most tokens in one transformer train step (sequences × context). */
export const MAX_TOKENS_PER_STEP = 131_072;

/** Bounds on the work one iteration asks for, so an oversized config gets a message instead of exhausting memory. */
function sizes(c: Parsed, algo: AlgoConfig): string[] {
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
function treeRules(c: Parsed, algo: AlgoConfig): string[] {
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
function budgetRules(c: Parsed, algo: AlgoConfig): string[] {
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
function envProblems(env: unknown): string[] {
  if (!isObject(env) || typeof env.id !== 'string') return [];
  const kwargs = env.kwargs === undefined ? {} : env.kwargs;
  if (!isObject(kwargs)) return [];
  return envErrors(env.id, kwargs as EnvKwargs);
}

/**
 * Why `makeEnv(id, kwargs)` fails, every kwarg at once (the env names only the first it meets):
 * each kwarg alone, then together (for rules between kwargs); [] when it succeeds.
 */
function envErrors(id: string, kwargs: EnvKwargs): string[] {
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
function runnable(c: Parsed, algo: AlgoConfig): string[] {
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
