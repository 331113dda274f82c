/**
 * The run file's shape as zod schemas (what runs/format.ts validates imports against): the file
 * itself, its metric rows and trajectory lines (the CLI's jsonl lines too), and the reward-code
 * versions a run file's `rewardCode` and a CLI folder's reward-versions.json hold.
 */
import { z } from 'zod';
import { MAX_REWARD_CODE_CHARS } from '../presets/schema.ts';

/** The `format` field of a run file. */
export const RUN_FILE_FORMAT = 'agentic-rl-playground/run';
/** The run-file version this code writes and reads. */
export const RUN_FILE_VERSION = 1;

/** Where a run stands. 'interrupted': the tab closed or reloaded mid-run; 'stopped': the person reset or restarted it. */
export type RunStatus = 'running' | 'finished' | 'interrupted' | 'stopped' | 'error';
export const RUN_STATUSES = ['running', 'finished', 'interrupted', 'stopped', 'error'] as const satisfies readonly RunStatus[];

export const numberOrNull = z.union([z.number(), z.null()], { error: 'expected a number (or null)' });

export const metricRowSchema = z
  .object({
    /** 0-based iteration. */
    iteration: z.int().min(0),
    /** Training seconds so far; absent in some files. */
    wall_s: numberOrNull.optional(),
  })
  .catchall(numberOrNull);

export const trajectorySchema = z.looseObject({
  iteration: z.int().min(0),
  env: z.string(),
  seed: z.int(),
  group: z.int().default(0),
  reward: numberOrNull,
  advantage: numberOrNull.default(null),
  env_rewards: z.array(numberOrNull).default([]),
  terminated: z.boolean(),
  truncated: z.boolean(),
  success: z.boolean(),
  actions: z.array(z.union([z.number(), z.string()])),
  logprobs: z.array(numberOrNull).default([]),
  versions: z.array(z.number()).default([]),
});

const isoDate = z.iso.datetime({ offset: true });

export const runFileSchema = z.strictObject({
  /** Always RUN_FILE_FORMAT. */
  format: z.literal(RUN_FILE_FORMAT),
  /** RUN_FILE_VERSION at most. */
  version: z.int().min(1).max(RUN_FILE_VERSION),
  run: z.strictObject({
    name: z.string().max(200),
    tags: z.array(z.string().max(60)).max(50).default([]),
    note: z.string().max(20_000).default(''),
    createdAt: isoDate,
    updatedAt: isoDate.optional(),
    status: z.enum(RUN_STATUSES),
    error: z.string().nullable().default(null),
    /** A reward-code live edit (a version of the run's reward code, core/reward/versions.ts) must carry the code as text. */
    liveEdits: z
      .array(
        z.strictObject({ iteration: z.int().min(0), path: z.string(), value: z.unknown() }).refine((e) => e.path !== 'reward.code' || (typeof e.value === 'string' && e.value.length <= MAX_REWARD_CODE_CHARS), {
          message: `a reward.code edit's value must be the reward module's text (at most ${MAX_REWARD_CODE_CHARS.toLocaleString('en-US')} characters)`,
          path: ['value'],
        }),
      )
      .default([]),
    source: z.enum(['browser', 'import']).default('import'),
  }),
  /** Checked by parseRunConfig (messages under `config.`). */
  config: z.unknown(),
  metrics: z.array(z.unknown()),
  trajectories: z.array(z.unknown()).default([]),
  /** The last checkpoint (weights, Adam moments, RNG states, …; checked by checkpointFromJson), or null. */
  checkpoint: z.unknown().default(null),
  /** The run's reward-code versions (core/reward/versions.ts), null for none; older files wrote null and keep the versions in run.liveEdits only. */
  rewardCode: z.lazy(() => codeVersionsSchema).nullable().default(null),
});

/** Reward-code versions as a run file's `rewardCode` and a CLI folder's reward-versions.json hold them. */
export const codeVersionsSchema = z
  .array(
    z.strictObject({
      /** 1, 2, …: the order they were applied in. */
      version: z.int().min(1),
      /** First iteration (0-based) the version scored. */
      iteration: z.int().min(0),
      code: z.string().max(MAX_REWARD_CODE_CHARS, `must be at most ${MAX_REWARD_CODE_CHARS.toLocaleString('en-US')} characters`),
    }),
  )
  .max(10_000);
