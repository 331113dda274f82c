/**
 * Reward shaping: the env's outcome reward plus named, weighted shaping terms, each reported
 * separately (`reward/<term>/mean`) so a researcher sees which term drives learning.
 *
 * Sign convention: every term has a *raw* value in its natural units, with penalties already
 * negative (−1 per malformed action, −1 per tool call, −1 per token over budget), and weights
 * are non-negative magnitudes. A term's *contribution* is weight × raw; the total reward is the
 * sum of contributions. `perStep` spreads each contribution over the step where it arose, so
 * step-level learners (PPO) see it at the right time and Σ perStep = total.
 *
 * Progressive schedule (arXiv:2512.07478): dense shaping early, pure outcome late.
 * Stages change the weights; stages advance by iteration count or by success rate, forward only.
 */
import { z } from 'zod';
import type { Frame, Info } from '../envs/types.ts';

type Numbers = ArrayLike<number>;

export type ShapingTerm = 'outcome' | 'progress' | 'format' | 'toolCost' | 'length' | 'potential';
export const SHAPING_TERMS: readonly ShapingTerm[] = ['outcome', 'progress', 'format', 'toolCost', 'length', 'potential'];

/** One line per term, for the UI and the docs: what the raw value is. */
export const SHAPING_TERM_DOCS: Readonly<Record<ShapingTerm, string>> = {
  outcome: "Sum of the environment's own rewards over the episode (the task's outcome).",
  progress: 'Sum of info.progress over steps: task completion increments reported by the env (e.g. a subgoal reached).',
  format: '−1 per step whose action was malformed (info.malformed): unparseable or unknown tool.',
  toolCost: '−1 per tool call (info.toolCall): a price on actions, to prefer shorter solutions.',
  length: '−1 per policy token beyond length.freeTokens: discourages rambling.',
  potential: "Potential-based shaping Σ γΦ(s′) − Φ(s) (grids: Φ = −actions left to the goal); an episode ends at Φ = 0 on success, at Φ's floor on failure.",
};

export interface ShapingConfig {
  /** Weight of the env's reward (1 = use it as is). */
  outcome: { weight: number };
  /** Weight per unit of reported progress. */
  progress: { weight: number };
  /** Penalty per malformed action (reward units). */
  format: { weight: number };
  /** Penalty per tool call (reward units). */
  toolCost: { weight: number };
  length: {
    /** Penalty per policy token over the free budget (reward units per token). */
    weight: number;
    /** Tokens per episode that cost nothing. */
    freeTokens: number;
  };
  potential: {
    /** Weight of F = γΦ(s′) − Φ(s); any weight keeps optimal policies (it scales Φ). */
    weight: number;
    /** γ in F; must equal the learner's discount for the invariance guarantee (1 for episode returns). */
    gamma: number;
  };
}

/** Outcome only: what the env says, nothing added. */
export const DEFAULT_SHAPING: ShapingConfig = {
  outcome: { weight: 1 },
  progress: { weight: 0 },
  format: { weight: 0 },
  toolCost: { weight: 0 },
  length: { weight: 0, freeTokens: 0 },
  potential: { weight: 0, gamma: 1 },
};

/**
 * A potential function Φ over full states, supplied by an env family (e.g. grids: minus the
 * fewest actions from the actual state to the goal). It reads the UI `Frame`, which shows the
 * full state, so it is computed outside the agent's view and never leaks into observations.
 *
 * Ng, Harada & Russell (1999): adding F(s, s′) = γΦ(s′) − Φ(s) to every transition changes every
 * policy's Q-values by the same −Φ(s), so the optimal policy is unchanged. Where an episode ends,
 * `shapeEpisode` sets Φ(s_T) by how it ended (see there and ARCHITECTURE.md "Potential shaping"):
 * a success ends at 0 (Φ's top), a failure at `floor` (Φ's bottom), a truncation at Φ(s_T).
 */
export interface Potential<S = Frame> {
  /** Registry-style id, e.g. `grid/neg-steps-to-success`. */
  id: string;
  /** One line: what Φ measures and its units. */
  doc: string;
  /** Φ(s); finite, ≤ 0, and 0 where the task succeeds. */
  phi(state: S): number;
  /**
   * The lowest Φ of any state an episode starting in `state` can reach (read once, at reset).
   * A failed episode ends at it, so no failure scores above an episode still trying.
   */
  floor(state: S): number;
}

/** What a finished (or truncated) episode reports to the shaper. */
export interface EpisodeRecord {
  /** [T] env reward after each step. */
  rewards: Numbers;
  /** [T] the step's info (malformed, toolCall, progress, …). */
  infos: readonly Info[];
  terminated: boolean;
  truncated: boolean;
  /** Policy tokens generated in the episode (grid: one per step). */
  policyTokens: number;
  /** [T+1] Φ(s_0), …, Φ(s_T); required when the potential term has a non-zero weight. */
  potentials?: Numbers;
  /**
   * The potential's `floor` for this episode (the lowest Φ it can reach): potentials are clamped
   * to it and a failed episode (terminated without info.success) ends at it. Required with
   * `potentials` on such an episode.
   */
  potentialFloor?: number;
}

export interface ShapedReward {
  /** Σ of contributions: the reward the advantage estimator sees. */
  total: number;
  /** weight × raw per term (sums to total); feeds `reward/<term>/mean`. */
  terms: Record<ShapingTerm, number>;
  /** Raw values before weighting (counts, sums). */
  raw: Record<ShapingTerm, number>;
  /** [T] contributions placed at their step; Σ perStep = total. */
  perStep: Float64Array;
}

/** Weights only (the part a schedule changes). */
export type ShapingWeights = Record<ShapingTerm, number>;

export function weightsOf(cfg: ShapingConfig): ShapingWeights {
  return {
    outcome: cfg.outcome.weight,
    progress: cfg.progress.weight,
    format: cfg.format.weight,
    toolCost: cfg.toolCost.weight,
    length: cfg.length.weight,
    potential: cfg.potential.weight,
  };
}

/**
 * Shape one episode's reward. Pure. Weights default to the config's; a schedule passes its own.
 * Throws when the record is inconsistent (lengths) or a needed input is missing, so a broken env
 * is reported with the episode rather than silently scored.
 */
export function shapeEpisode(ep: EpisodeRecord, cfg: ShapingConfig, weights: ShapingWeights = weightsOf(cfg)): ShapedReward {
  const T = ep.rewards.length;
  if (ep.infos.length !== T) throw new RangeError(`shapeEpisode: ${T} rewards but ${ep.infos.length} infos`);
  const raw: ShapedReward['raw'] = { outcome: 0, progress: 0, format: 0, toolCost: 0, length: 0, potential: 0 };
  const perStep = new Float64Array(T);
  // Potentials, when supplied, are always reported (raw) so a person can see the term before
  // turning it on; they are required only when the term has a weight.
  if (ep.potentials && ep.potentials.length !== T + 1) {
    throw new RangeError(`shapeEpisode: ${T} steps need ${T + 1} potentials Φ(s_0..s_T), got ${ep.potentials.length}`);
  }
  if (weights.potential !== 0 && !ep.potentials) {
    throw new RangeError(`shapeEpisode: potential shaping needs ${T + 1} potentials Φ(s_0..s_T), got none`);
  }
  const usePotential = ep.potentials !== undefined;
  const g = cfg.potential.gamma;
  // Φ(s_T) by how the episode ended: success 0 (Φ's top, the value of the absorbing goal), failure
  // the floor (Φ's bottom), truncation Φ(s_T) as recorded. With γ = 1 the term telescopes to
  // Φ_T − Φ(s_0), and s_0 is shared by a GRPO group, so Φ_T is all the term tells episodes apart
  // by: this order puts any success above any episode still trying, and that above any failure.
  const floor = ep.potentialFloor ?? -Infinity;
  const succeeded = T > 0 && ep.infos[T - 1].success === true;
  if (usePotential && ep.terminated && !succeeded && ep.potentialFloor === undefined) {
    throw new RangeError('shapeEpisode: a failed episode with potentials needs potentialFloor (the lowest Φ), or dying would score above trying');
  }
  const phiAt = (t: number): number => {
    if (t === T && ep.terminated) return succeeded ? 0 : floor;
    return Math.max(ep.potentials![t], floor);
  };
  for (let t = 0; t < T; t++) {
    const info = ep.infos[t];
    const r = ep.rewards[t];
    const prog = typeof info.progress === 'number' && Number.isFinite(info.progress) ? info.progress : 0;
    const fmt = info.malformed ? -1 : 0;
    const tool = info.toolCall ? -1 : 0;
    let f = 0;
    if (usePotential) {
      f = g * phiAt(t + 1) - phiAt(t);
    }
    raw.outcome += r;
    raw.progress += prog;
    raw.format += fmt;
    raw.toolCost += tool;
    raw.potential += f;
    perStep[t] = weights.outcome * r + weights.progress * prog + weights.format * fmt + weights.toolCost * tool + weights.potential * f;
  }
  raw.length = -Math.max(0, ep.policyTokens - cfg.length.freeTokens);
  if (T > 0) perStep[T - 1] += weights.length * raw.length;
  const terms = {} as Record<ShapingTerm, number>;
  let total = 0;
  for (const k of SHAPING_TERMS) {
    terms[k] = weights[k] * raw[k];
    total += terms[k];
  }
  return { total, terms, raw, perStep };
}

// ---------------------------------------------------------------------------------------------
// Progressive schedule
// ---------------------------------------------------------------------------------------------

export interface ScheduleStage {
  /** Shown in the UI, e.g. 'early'. */
  name: string;
  /** Weights in this stage; terms left out keep the base config's weight. */
  weights: Partial<ShapingWeights>;
  /** When to move on; absent on the last stage (stay forever). Advance happens on whichever rule fires first. */
  advance?: {
    /** Move on after this many iterations in the stage, regardless of success. */
    afterIterations?: number;
    /** Move on early when the success rate is ≥ atLeast for forIterations consecutive iterations (hysteresis: one lucky batch is not enough). */
    successRate?: { atLeast: number; forIterations: number };
    /** Never move on before this many iterations in the stage (lets the policy settle). Default 1. */
    minIterations?: number;
  };
}

export interface ShapingSchedule {
  stages: readonly ScheduleStage[];
}

export interface ScheduleState {
  /** Index into stages. */
  stage: number;
  /** Iterations completed in the current stage. */
  iterationsInStage: number;
  /** Consecutive iterations in this stage meeting the success threshold. */
  streak: number;
}

export const SCHEDULE_START: ScheduleState = { stage: 0, iterationsInStage: 0, streak: 0 };

/** What the trainer needs from the iteration that just finished. */
export interface IterationOutcome {
  /** `episode/success_rate` of the iteration, in [0, 1]. */
  successRate: number;
}

export interface ScheduleStep {
  state: ScheduleState;
  /** Stage index and name for the *next* iteration. */
  stage: number;
  name: string;
  /** Full weights for the next iteration (base weights overridden by the stage's). */
  weights: ShapingWeights;
  /** True if this call moved to a new stage. */
  advanced: boolean;
}

/** The weights of a stage over a base config. */
export function stageWeights(schedule: ShapingSchedule, stage: number, base: ShapingConfig): ShapingWeights {
  return { ...weightsOf(base), ...schedule.stages[stage].weights } as ShapingWeights;
}

/**
 * Advance the schedule by one finished iteration. Pure: `(state, metrics) -> {state, stage, weights}`.
 * Forward only (a regression of success rate does not move back: rewards that flip back and
 * forth would make the return scale oscillate).
 */
export function stepSchedule(schedule: ShapingSchedule, state: ScheduleState, outcome: IterationOutcome, base: ShapingConfig): ScheduleStep {
  if (schedule.stages.length === 0) throw new RangeError('stepSchedule: a schedule needs at least one stage');
  const cur = schedule.stages[state.stage];
  if (!cur) throw new RangeError(`stepSchedule: stage ${state.stage} does not exist (${schedule.stages.length} stages)`);
  const inStage = state.iterationsInStage + 1;
  const rule = cur.advance;
  const streak = rule?.successRate && outcome.successRate >= rule.successRate.atLeast ? state.streak + 1 : 0;
  let advance = false;
  if (rule && state.stage < schedule.stages.length - 1 && inStage >= (rule.minIterations ?? 1)) {
    if (rule.afterIterations !== undefined && inStage >= rule.afterIterations) advance = true;
    if (rule.successRate && streak >= rule.successRate.forIterations) advance = true;
  }
  const next: ScheduleState = advance ? { stage: state.stage + 1, iterationsInStage: 0, streak: 0 } : { stage: state.stage, iterationsInStage: inStage, streak };
  return {
    state: next,
    stage: next.stage,
    name: schedule.stages[next.stage].name,
    weights: stageWeights(schedule, next.stage, base),
    advanced: advance,
  };
}

/**
 * Seed 002's three stages: dense progress reward early (0.7 progress + 0.3 outcome), mixed in
 * the middle (0.3 + 0.7), pure outcome late. Early ends at ≥ 50% success for 3 iterations
 * running (not before 5); the middle stage lasts at most 50 iterations or until ≥ 80% for 3.
 */
export const PROGRESSIVE_SCHEDULE: ShapingSchedule = {
  stages: [
    { name: 'early', weights: { progress: 0.7, outcome: 0.3 }, advance: { successRate: { atLeast: 0.5, forIterations: 3 }, minIterations: 5 } },
    { name: 'middle', weights: { progress: 0.3, outcome: 0.7 }, advance: { afterIterations: 50, successRate: { atLeast: 0.8, forIterations: 3 } } },
    { name: 'late', weights: { progress: 0, outcome: 1 } },
  ],
};

// ---------------------------------------------------------------------------------------------
// Validation of user-supplied shaping configs and schedules
// ---------------------------------------------------------------------------------------------

/** Largest shaping weight: rewards beyond ~1e6 overflow the group statistics (a weight of 1e308 made every advantage 0). */
export const MAX_SHAPING_WEIGHT = 1000;
const weight = () =>
  z
    .number({ error: 'must be a number' })
    .min(0, 'must be ≥ 0 (penalties are already negative; the weight is a magnitude)')
    .max(MAX_SHAPING_WEIGHT, `must be ≤ ${MAX_SHAPING_WEIGHT} (rewards far above 1 overflow the group statistics and swamp the outcome)`);

export const shapingConfigSchema = z.strictObject({
  outcome: z.strictObject({ weight: weight().default(1) }).default({ weight: 1 }),
  progress: z.strictObject({ weight: weight().default(0) }).default({ weight: 0 }),
  format: z.strictObject({ weight: weight().default(0) }).default({ weight: 0 }),
  toolCost: z.strictObject({ weight: weight().default(0) }).default({ weight: 0 }),
  length: z
    .strictObject({ weight: weight().default(0), freeTokens: z.number({ error: 'must be a number' }).int('must be an integer').min(0, 'must be ≥ 0').max(1_000_000, 'must be ≤ 1,000,000').default(0) })
    .default({ weight: 0, freeTokens: 0 }),
  potential: z
    .strictObject({ weight: weight().default(0), gamma: z.number({ error: 'must be a number' }).min(0, 'must be in [0, 1]').max(1, 'must be in [0, 1]').default(1) })
    .default({ weight: 0, gamma: 1 }),
});

const stageWeightsSchema = z.strictObject(Object.fromEntries(SHAPING_TERMS.map((k) => [k, weight().optional()])) as Record<ShapingTerm, z.ZodOptional<ReturnType<typeof weight>>>);
const posInt = () => z.number({ error: 'must be a number' }).int('must be an integer').min(1, 'must be ≥ 1');

export const shapingScheduleSchema = z.strictObject({
  stages: z
    .array(
      z.strictObject({
        name: z.string({ error: 'must be a string' }).min(1, 'must not be empty'),
        weights: stageWeightsSchema,
        advance: z
          .strictObject({
            afterIterations: posInt().optional(),
            successRate: z.strictObject({ atLeast: z.number({ error: 'must be a number' }).min(0, 'must be in [0, 1]').max(1, 'must be in [0, 1]'), forIterations: posInt() }).optional(),
            minIterations: posInt().optional(),
          })
          .refine((a) => a.afterIterations !== undefined || a.successRate !== undefined, 'needs afterIterations or successRate (or leave advance out on the last stage)')
          .optional(),
      }),
    )
    .min(1, 'needs at least one stage'),
});

/** Format zod issues as `path: message` lines (same style as the algorithm config). */
export function formatIssues(issues: readonly z.core.$ZodIssue[]): string[] {
  return issues.flatMap((i) => {
    const path = i.path.map(String).join('.');
    if (i.code === 'unrecognized_keys') return i.keys.map((k) => `${path ? `${path}.` : ''}${k}: unknown field`);
    return [path ? `${path}: ${i.message}` : i.message];
  });
}

export function parseShapingConfig(input: unknown): { ok: true; config: ShapingConfig } | { ok: false; messages: string[] } {
  const r = shapingConfigSchema.safeParse(input);
  return r.success ? { ok: true, config: r.data } : { ok: false, messages: formatIssues(r.error.issues) };
}

export function parseShapingSchedule(input: unknown): { ok: true; schedule: ShapingSchedule } | { ok: false; messages: string[] } {
  const r = shapingScheduleSchema.safeParse(input);
  if (!r.success) return { ok: false, messages: formatIssues(r.error.issues) };
  const stages = r.data.stages;
  const messages: string[] = [];
  stages.forEach((s, i) => {
    if (i === stages.length - 1 && s.advance) messages.push(`stages.${i}.advance: the last stage has nowhere to advance to; remove it`);
  });
  return messages.length ? { ok: false, messages } : { ok: true, schedule: r.data as ShapingSchedule };
}

/**
 * `shaping` with live weight edits applied: a new config (the input is not modified); only
 * weights change, not length.freeTokens or potential.gamma. `potentialRecorded` says whether
 * the run records Φ(s) per step: without it a non-zero potential weight cannot be honoured.
 */
export function withShapingWeights(shaping: ShapingConfig, w: Partial<ShapingWeights>, potentialRecorded: boolean): ShapingConfig {
  const out = structuredClone(shaping);
  for (const [term, v] of Object.entries(w) as [string, number | undefined][]) {
    if (v === undefined) continue;
    if (!(SHAPING_TERMS as readonly string[]).includes(term)) throw new RangeError(`rewardWeights.${term}: not a shaping term (${SHAPING_TERMS.join(', ')})`);
    if (!(Number.isFinite(v) && v >= 0)) throw new RangeError(`rewardWeights.${term}: must be a finite number ≥ 0 (penalties are already negative; the weight is a magnitude), got ${v}`);
    if (term === 'potential' && v !== 0 && !potentialRecorded) {
      throw new RangeError('rewardWeights.potential: this run does not record potentials Φ(s) (it started with the term off); restart with a non-zero potential weight');
    }
    out[term as keyof ShapingConfig].weight = v;
  }
  return out;
}
