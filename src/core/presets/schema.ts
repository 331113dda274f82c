/**
 * A run configuration: everything `npm run train` and the UI need to start a run, as plain JSON.
 * Presets (presets/*.json) are run configurations with an id, a title and a description.
 * Validation names the field and says what is wrong, so a typo in a file never starts a
 * silently different experiment.
 */
import { z } from 'zod';
import { parseAlgoConfig, defaultsFor, ALGOS, GROUP_ALGOS, type Algo, type AlgoConfig } from '../algos/config.ts';
import { makeEnv } from '../envs/index.ts';
import { DEFAULT_SHAPING, parseShapingConfig, parseShapingSchedule, type ShapingConfig, type ShapingSchedule } from '../reward/shaping.ts';

const modelSchema = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('mlp'),
    /** Hidden widths, input side first. */
    hidden: z.array(z.int().min(1).max(4096)).min(1).max(8).default([64, 64]),
    activation: z.enum(['tanh', 'relu']).default('tanh'),
  }),
  z.strictObject({
    kind: z.literal('transformer'),
    dModel: z.int().min(8).max(1024).default(64),
    nLayers: z.int().min(1).max(12).default(2),
    nHeads: z.int().min(1).max(16).default(4),
    dFF: z.int().min(8).max(4096).default(256),
    context: z.int().min(8).max(1024).default(128),
  }),
]);

/** Imitation warm start on expert episodes before RL (tool envs); it also becomes the KL reference. */
const warmStartSchema = z.strictObject({
  /** Cross-entropy train steps on fresh expert episodes. */
  steps: z.int().min(1).max(100_000),
  /** Expert sequences per step. */
  batch: z.int().min(1).max(1024).default(16),
  /** Adam learning rate at the first step (decays linearly to 0.1×). */
  lr: z.number().positive().max(1).default(3e-3),
  /** Weight of an auxiliary next-token loss on the observations, relative to the action loss (0 = actions only). */
  observationWeight: z.number().min(0).max(100).default(0),
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
  /**
   * Async token policies: decoder rows, i.e. the KV-cache budget in episodes' worth of context.
   * Fewer rows than episodes in flight evicts parked episodes (they re-prefill). 0 = one per
   * episode of a batch.
   */
  kvRows: z.int().min(0).max(1024).default(0),
});

export const runConfigSchema = z.strictObject({
  /** Preset id (kebab-case); free-form for ad-hoc files. */
  id: z.string().min(1).default('custom'),
  title: z.string().default(''),
  description: z.string().default(''),
  env: z.strictObject({ id: z.string().min(1), kwargs: z.record(z.string(), z.unknown()).default({}) }),
  model: modelSchema,
  /** Algorithm config; unspecified fields take the chosen algorithm's defaults. */
  algo: z.looseObject({ algo: z.enum(ALGOS as unknown as [string, ...string[]]) }),
  shaping: z.record(z.string(), z.unknown()).default({}),
  /** Progressive shaping stages (seed 002); null = the shaping weights stay fixed. */
  schedule: z.unknown().default(null),
  rollout: rolloutSchema.default(rolloutSchema.parse({})),
  warmStart: warmStartSchema.nullable().default(null),
  /** Training iterations (rollout + update). */
  iterations: z.int().min(1).max(1_000_000).default(100),
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

/** Validates a run configuration; every message names its field path. */
export function parseRunConfig(input: unknown): ParseResult {
  const r = runConfigSchema.safeParse(input);
  if (!r.success) {
    return { ok: false, messages: r.error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(top level)'}: ${i.message}`) };
  }
  const algoIn = r.data.algo as Record<string, unknown> & { algo: AlgoConfig['algo'] };
  const algo = parseAlgoConfig(deepMerge(defaultsFor(algoIn.algo), algoIn));
  const shaping = parseShapingConfig(deepMerge(DEFAULT_SHAPING, r.data.shaping));
  const schedule = r.data.schedule === null ? null : parseShapingSchedule(r.data.schedule);
  if (algo.ok && shaping.ok && algo.config.algo === 'ppo') {
    const usesPotential = shaping.config.potential.weight !== 0 || (schedule?.ok && schedule.schedule.stages.some((st) => (st.weights.potential ?? 0) !== 0));
    if (usesPotential && shaping.config.potential.gamma !== algo.config.gamma) {
      // F = γΦ(s′) − Φ(s) telescopes (and so keeps the optimal policy) only with the learner's γ.
      return { ok: false, messages: [`shaping.potential.gamma: must equal algo.gamma (${algo.config.gamma}) for PPO, or the shaping changes which policy is optimal (got ${shaping.config.potential.gamma})`] };
    }
  }
  const messages = [
    ...(algo.ok ? [] : algo.messages.map((m) => `algo.${m}`)),
    ...(shaping.ok ? [] : shaping.messages.map((m) => `shaping.${m}`)),
    ...(schedule && !schedule.ok ? schedule.messages.map((m) => `schedule.${m}`) : []),
  ];
  messages.push(...runnable(r.data));
  const rawRollout = (input as { rollout?: { learnerBatch?: unknown } }).rollout;
  if (rawRollout?.learnerBatch === undefined && r.data.model.kind === 'transformer') r.data.rollout.learnerBatch = 16;
  if (messages.length > 0 || !algo.ok || !shaping.ok || (schedule && !schedule.ok)) return { ok: false, messages };
  return { ok: true, config: { ...r.data, algo: algo.config, shaping: shaping.config, schedule: schedule ? schedule.schedule : null } };
}

/** Rules that need the env itself: it exists, takes these kwargs, and pairs with the policy. */
function runnable(c: Parsed): string[] {
  let family: string;
  try {
    family = makeEnv(c.env.id, c.env.kwargs).spec.family;
  } catch (e) {
    return [`env: ${(e as Error).message}`];
  }
  const out: string[] = [];
  if (family === 'grid' && c.model.kind === 'transformer') {
    // Played as text by the synchronous token trainer (envs/grid/textAdapter.ts).
    if (c.rollout.mode === 'async') out.push("rollout.mode: grid envs played as text (transformer) train synchronously; use 'sync'");
    if (c.rollout.workers > 0) out.push('rollout.workers: grid envs played as text decode in the training thread; use 0');
    if (c.schedule !== null) out.push('schedule: progressive shaping runs with the mlp policy only for now');
  }
  if (family === 'tool') {
    if (c.model.kind !== 'transformer') out.push(`model.kind: tool envs train a 'transformer' over tokens (got '${c.model.kind}')`);
    if (c.schedule !== null) out.push('schedule: progressive shaping runs on grid envs only for now');
    if (c.rollout.workers > 1) out.push('rollout.workers: tool envs decode in the training thread (0) or in one rollout worker (1) over one KV cache; use 0 or 1');
    if (c.rollout.workers === 1 && !GROUP_ALGOS.includes(c.algo.algo as Algo)) out.push(`rollout.workers: a token rollout worker serves group algorithms (grpo, drgrpo, rloo); got '${c.algo.algo}', use 0`);
    if (c.rollout.mode === 'async' && !GROUP_ALGOS.includes(c.algo.algo as Algo)) out.push(`rollout.mode: async token training takes a group algorithm (grpo, drgrpo, rloo); got '${c.algo.algo}'`);
  }
  if (family === 'grid' && c.model.kind === 'mlp' && c.warmStart !== null) out.push("warmStart: imitation warm start is for token policies (transformer); mlp grid runs train from scratch");
  return out;
}
