/**
 * A trainer's full state after some iteration, so a run can stop (pause, a closed tab, Ctrl-C, a
 * crash after the last save) and continue exactly where it was (ARCHITECTURE.md, 'Checkpoints
 * and resume'). In memory tensors are typed arrays (a training worker hands them to the page as
 * transferables); in files they are base64 of little-endian float32 bytes inside JSON, which is
 * bit-exact, so a resumed run computes what an uninterrupted one would have.
 *
 * What is in one, and why each part is needed for an exact resume:
 *   learner   parameters, Adam moments m and v, Adam's step count (bias correction): the update
 *   iteration the next batch's seeds are a function of (seed, iteration), so this picks the episodes
 *   version   the policy version rollouts record and staleness is measured against
 *   rng       the minibatch-shuffle stream (sampling randomness is reseeded per batch from the config)
 *   ema       REINFORCE's EMA baseline
 *   schedule  the progressive reward schedule's stage, iterations in stage and success streak
 *   hyper     live hyperparameters (lr, clip, coefficients) as edited during the run
 *   rewardWeights  the shaping weights after live edits (the schedule's stage overrides apply on top)
 * and, for the token trainers only (optional fields, absent in grid checkpoints and in files
 * written before token runs kept checkpoints):
 *   reference  the KL reference policy's weights (with a warm start they are the imitation
 *              result, which a resume would otherwise have to train again); only when klCoef > 0
 *   groups     the continuous trainer's group counter and the groups admitted but not trained
 *              (their episodes in flight are not saved: a resumed run samples them again)
 * The token trainers' decoder needs no state of its own: it holds the learner's weights at
 * `policyVersion` (restore loads them) and its KV cache is reset per episode.
 * Pure: no DOM, no Node built-ins.
 */
import { z } from 'zod';
import type { LearnerState } from '../engine/types.ts';
import type { EmaBaselineState } from '../algos/advantages.ts';
import { SHAPING_TERMS, type ScheduleState, type ShapingWeights } from '../reward/shaping.ts';
import { base64ToFloat32, float32ToBase64 } from '../util/base64.ts';
import type { CodeVersion } from '../reward/versions.ts';

/** The `format` field of a checkpoint. */
export const CHECKPOINT_FORMAT = 'agentic-rl-playground/checkpoint';
/** The checkpoint version this code writes and reads. */
export const CHECKPOINT_VERSION = 1;

/**
 * Which trainer wrote a checkpoint; only that trainer restores it: 'step' the Trainer over the
 * grid step pool, 'token' over the lockstep token loop, 'async-token' over the continuous one,
 * 'token-distill' over a distill stage's transformer student.
 */
export type CheckpointTrainer = 'step' | 'token' | 'async-token' | 'token-distill';

/** The trainers that write checkpoints (a file naming another is refused). */
export const CHECKPOINT_TRAINERS: readonly CheckpointTrainer[] = ['step', 'token', 'async-token', 'token-distill'];

/** The continuous token trainer's group bookkeeping (the continuous token loop's). */
export interface CheckpointGroups {
  /** Id of the next group to admit (group g plays env seed mixSeed(seed, 0x9e, g)). */
  next: number;
  /** Ids of groups admitted but not yet trained or dropped, ascending: a resumed run admits these first. */
  pending: number[];
}

/** A trainer's state after `iteration` iterations (typed arrays in memory). */
export interface Checkpoint {
  format: typeof CHECKPOINT_FORMAT;
  version: typeof CHECKPOINT_VERSION;
  trainer: CheckpointTrainer;
  /** Iterations trained: the resumed trainer's next iteration is this one. */
  iteration: number;
  /** The learner's policy version (updates synced to the rollouts). */
  policyVersion: number;
  /** Parameters, Adam moments and step (float32, by train-step state input name) and applied updates. */
  learner: LearnerState;
  /** Live scalar hyperparameters by train-step input name (lr, clip_low, …). */
  hyper: Record<string, number>;
  /** RNG streams by name, each sfc32's four uint32 words (Rng.getState). */
  rng: Record<string, [number, number, number, number]>;
  /** REINFORCE's EMA baseline. */
  ema: EmaBaselineState;
  /** The progressive reward schedule's state; null without a schedule. */
  schedule: ScheduleState | null;
  /** Base shaping weights after live edits. */
  rewardWeights: ShapingWeights;
  /** Token trainers with klCoef > 0: the KL reference policy's parameters (float32, by name). */
  reference?: Record<string, Float32Array>;
  /** The continuous token loop only: which groups come next. */
  groups?: CheckpointGroups;
  /** A run whose scheduler has a prompt pool (rollout.budget.pool): each prompt's decayed success and failure counts, [pool] each. */
  prompts?: { successes: number[]; failures: number[] };
  /**
   * Staged runs (trainer/stagedTrainer.ts): the running stage (0-based) and the iterations and
   * policy versions of the stages before it. `iteration` is then the run's, and `reference`
   * holds the weights the stage started from when it needs them (a distill stage's teacher).
   */
  pipeline?: CheckpointPipeline;
  /**
   * Every reward-code version in force up to this checkpoint, oldest first, each with the first
   * iteration it scored (core/reward/versions.ts): a CLI folder that lost its config's code or
   * reward-versions.json still resumes with the right code. Absent for runs without user terms
   * (and in checkpoints written before it was kept).
   */
  rewardCode?: CodeVersion[];
}

export interface CheckpointPipeline {
  stage: number;
  offset: number;
  versionOffset: number;
}

/** Float values a checkpoint holds (parameters + moments + step): its size is about 4 bytes each. */
export function checkpointFloats(cp: Checkpoint): number {
  return [...Object.values(cp.learner.tensors), ...Object.values(cp.reference ?? {})].reduce((n, t) => n + t.length, 0);
}

/** The typed arrays of a checkpoint: pass them as the transfer list of a postMessage (no copy). */
export function checkpointTransferables(cp: Checkpoint): ArrayBuffer[] {
  // Distinct buffers only: a postMessage transfer list must not name one twice.
  return [...new Set([...Object.values(cp.learner.tensors), ...Object.values(cp.reference ?? {})].map((t) => t.buffer as ArrayBuffer))];
}

// ---------------------------------------------------------------- JSON form

const uint32 = z.int().min(0).max(0xffffffff);
const finite = z.number().refine(Number.isFinite, { message: 'expected a finite number' });

/** A float32 tensor in a file: its length and base64 of its little-endian bytes. */
const tensorJsonSchema = z.strictObject({
  dtype: z.literal('float32'),
  length: z.int().min(0),
  base64: z.string(),
});

const checkpointJsonSchema = z.strictObject({
  format: z.literal(CHECKPOINT_FORMAT),
  version: z.literal(CHECKPOINT_VERSION, { error: `expected ${CHECKPOINT_VERSION} (this playground reads checkpoint version ${CHECKPOINT_VERSION})` }),
  trainer: z.enum(CHECKPOINT_TRAINERS as [CheckpointTrainer, ...CheckpointTrainer[]], { error: `expected one of ${CHECKPOINT_TRAINERS.map((t) => `"${t}"`).join(', ')}` }),
  iteration: z.int().min(0),
  policyVersion: z.int().min(0),
  learner: z.strictObject({
    updates: z.int().min(0),
    tensors: z.record(z.string(), tensorJsonSchema),
  }),
  hyper: z.record(z.string(), finite),
  rng: z.record(z.string(), z.tuple([uint32, uint32, uint32, uint32])),
  ema: z.strictObject({ value: finite, initialized: z.boolean() }),
  schedule: z.strictObject({ stage: z.int().min(0), iterationsInStage: z.int().min(0), streak: z.int().min(0) }).nullable(),
  rewardWeights: z.strictObject(Object.fromEntries(SHAPING_TERMS.map((k) => [k, finite.refine((v) => v >= 0, { message: 'must be ≥ 0' })])) as Record<keyof ShapingWeights, typeof finite>),
  reference: z.record(z.string(), tensorJsonSchema).optional(),
  groups: z
    .strictObject({
      next: z.int().min(0),
      pending: z.array(z.int().min(0)),
    })
    .refine((g) => g.pending.every((id, i) => id < g.next && (i === 0 || id > g.pending[i - 1])), { message: 'pending must be ascending group ids below next' })
    .optional(),
  prompts: z
    .strictObject({ successes: z.array(finite), failures: z.array(finite) })
    .refine((p) => p.successes.length === p.failures.length, { message: 'successes and failures must have one count per prompt each' })
    .optional(),
  pipeline: z.strictObject({ stage: z.int().min(0), offset: z.int().min(0), versionOffset: z.int().min(0) }).optional(),
  rewardCode: z
    .array(z.strictObject({ version: z.int().min(1), iteration: z.int().min(0), code: z.string() }))
    .refine((vs) => vs.every((v, i) => v.version === i + 1 && (i === 0 || v.iteration >= vs[i - 1].iteration)), { message: 'versions must be numbered 1, 2, … in the order of the iterations they took effect' })
    .optional(),
});

/** What a checkpoint looks like inside a JSON file (run file, CLI checkpoint.json). */
export type CheckpointJson = z.input<typeof checkpointJsonSchema>;

/** The JSON form: every tensor as base64 (bit-exact), everything else as is. */
export function checkpointToJson(cp: Checkpoint): CheckpointJson {
  const encode = (ts: Record<string, Float32Array>) => {
    const out: Record<string, z.input<typeof tensorJsonSchema>> = {};
    for (const [name, t] of Object.entries(ts)) out[name] = { dtype: 'float32', length: t.length, base64: float32ToBase64(t) };
    return out;
  };
  const tensors = encode(cp.learner.tensors);
  return {
    format: cp.format,
    version: cp.version,
    trainer: cp.trainer,
    iteration: cp.iteration,
    policyVersion: cp.policyVersion,
    learner: { updates: cp.learner.updates, tensors },
    hyper: { ...cp.hyper },
    rng: Object.fromEntries(Object.entries(cp.rng).map(([k, v]) => [k, [...v]])),
    ema: { ...cp.ema },
    schedule: cp.schedule && { ...cp.schedule },
    rewardWeights: { ...cp.rewardWeights },
    // Absent, not undefined, when unused: a grid checkpoint's JSON is what it always was.
    ...(cp.reference ? { reference: encode(cp.reference) } : {}),
    ...(cp.groups ? { groups: { next: cp.groups.next, pending: [...cp.groups.pending] } } : {}),
    ...(cp.prompts ? { prompts: { successes: [...cp.prompts.successes], failures: [...cp.prompts.failures] } } : {}),
    ...(cp.pipeline ? { pipeline: { ...cp.pipeline } } : {}),
    ...(cp.rewardCode?.length ? { rewardCode: cp.rewardCode.map((v) => ({ ...v })) } : {}),
  };
}

export type CheckpointParse = { ok: true; checkpoint: Checkpoint } | { ok: false; messages: string[] };

function fieldPath(path: readonly PropertyKey[]): string {
  let s = '';
  for (const p of path) s += typeof p === 'number' ? `[${p}]` : /^[A-Za-z_]\w*$/.test(String(p)) ? (s ? `.${String(p)}` : String(p)) : `[${JSON.stringify(String(p))}]`;
  return s;
}

/**
 * Validates a checkpoint's JSON form in full and decodes its tensors; every message names its
 * field under `prefix` (e.g. `checkpoint.learner.tensors["adam.m"].base64: …`).
 */
export function checkpointFromJson(value: unknown, prefix = 'checkpoint'): CheckpointParse {
  // 'checkpoint' → 'checkpoint.learner…'; a file prefix 'checkpoint.json:' → 'checkpoint.json: learner…'.
  const at = (path: readonly PropertyKey[]) => (path.length ? `${prefix}${prefix.endsWith(':') ? ' ' : '.'}${fieldPath(path)}` : prefix);
  if (value && typeof value === 'object' && typeof (value as { version?: unknown }).version === 'number' && (value as { version: number }).version > CHECKPOINT_VERSION) {
    return { ok: false, messages: [`${at(['version'])}: ${(value as { version: number }).version} was written by a newer playground (this one reads checkpoint version ${CHECKPOINT_VERSION})`] };
  }
  const r = checkpointJsonSchema.safeParse(value);
  if (!r.success) return { ok: false, messages: r.error.issues.slice(0, 12).map((i) => `${at(i.path)}: ${i.message}`) };
  const j = r.data;
  const messages: string[] = [];
  const decode = (ts: Record<string, z.output<typeof tensorJsonSchema>>, path: string[]): Record<string, Float32Array> => {
    const out: Record<string, Float32Array> = {};
    for (const [name, t] of Object.entries(ts)) {
      const where = at([...path, name]);
      try {
        const a = base64ToFloat32(t.base64);
        if (a.length !== t.length) messages.push(`${where}.base64: holds ${a.length} values, but length says ${t.length}`);
        else if (!a.every(Number.isFinite)) messages.push(`${where}.base64: holds a value that is not finite (NaN or ±Inf); a checkpoint never stores one`);
        else out[name] = a;
      } catch (e) {
        messages.push(`${where}.base64: ${(e as Error).message}`);
      }
    }
    return out;
  };
  const tensors = decode(j.learner.tensors, ['learner', 'tensors']);
  const reference = j.reference ? decode(j.reference, ['reference']) : undefined;
  if (messages.length > 0) return { ok: false, messages };
  return {
    ok: true,
    checkpoint: {
      format: CHECKPOINT_FORMAT,
      version: CHECKPOINT_VERSION,
      trainer: j.trainer,
      iteration: j.iteration,
      policyVersion: j.policyVersion,
      learner: { updates: j.learner.updates, tensors },
      hyper: j.hyper,
      rng: j.rng as Checkpoint['rng'],
      ema: j.ema,
      schedule: j.schedule,
      rewardWeights: j.rewardWeights as ShapingWeights,
      ...(reference ? { reference } : {}),
      ...(j.groups ? { groups: j.groups } : {}),
      ...(j.prompts ? { prompts: j.prompts } : {}),
      ...(j.pipeline ? { pipeline: j.pipeline } : {}),
      ...(j.rewardCode?.length ? { rewardCode: j.rewardCode } : {}),
    },
  };
}
