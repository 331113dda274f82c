/**
 * The fields of a run configuration, as zod schemas with their defaults and one-line docs, and the
 * types they give (`RunConfigInput` as written, `RunConfig` as parsed). parseRunConfig
 * (schema.ts) validates a config against them and against the rules between fields (rules.ts).
 */
import { z } from 'zod';
import { ALGOS, type AlgoConfig } from '../algos/config.ts';
import { ROLLOUT_BUDGET_DEFAULTS as BD } from '../algos/budget.ts';
import { DEFAULT_TREE_ROLLOUT as TD } from '../rollout/treeRollout.ts';
import type { ShapingConfig, ShapingSchedule } from '../reward/shaping.ts';

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
/** A run config as zod parses it, before its algo, shaping and schedule are parsed by their own parsers. */
export type ParsedFields = z.output<typeof runConfigSchema>;

export interface RunConfig extends Omit<ParsedFields, 'algo' | 'shaping' | 'schedule'> {
  algo: AlgoConfig;
  shaping: ShapingConfig;
  schedule: ShapingSchedule | null;
}

export type ParseResult = { ok: true; config: RunConfig } | { ok: false; messages: string[] };
