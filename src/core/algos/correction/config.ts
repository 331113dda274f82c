/**
 * The `algo.rolloutCorrection` settings: their type, defaults, schema and cross-field rules.
 * The mode names come from the registry (index.ts).
 */
import { z } from 'zod';
import { IS_MODES, RS_MODES, rsMode } from './index.ts';
import type { CorrectionBounds } from './types.ts';

/** Rounding of the rollout policy's weights, to make μ ≠ π_old on purpose. */
export type MismatchMode = 'off' | 'fp16' | 'bf16' | 'fp8';
export const MISMATCH_MODES: readonly MismatchMode[] = ['off', 'fp16', 'bf16', 'fp8'];

export interface RolloutCorrectionConfig {
  /** Importance weights on the advantage: 'off', 'token' (min(ρ_t, cap)) or 'sequence' (min(Π ρ_t, cap)); ρ = π_old/μ. */
  is: string;
  /** Truncation cap on the IS weight (veRL rollout_is_threshold; bias–variance trade-off); also the bound the IS metrics count against. */
  isCap: number;
  /** Rejection sampling: 'off', 'token_k1', 'seq_sum_k1' (ratio bounds) or 'seq_mean_k3' (a divergence bound); rejected positions leave the loss. */
  rs: string;
  /** Lower ratio bound for the k1 modes; null = 1/rsHigh. Must be null for the divergence modes. */
  rsLow: number | null;
  /** Upper bound: a ratio for the k1 modes (default 2), mean k3 in nats for seq_mean_k3 (default 0.01); null = the mode's default. */
  rsHigh: number | null;
  /** M2PO threshold on the batch mean of (log ρ)², nats²; null = off (AReaL suggests 0.04). */
  m2po: number | null;
  /**
   * 'decoupled' = three policies: the learner recomputes π_old before the update, the PPO ratio
   * is π_θ/π_old and the IS weight π_old/μ; 'bypass' = two: π_old := μ, so the ratio π_θ/μ carries
   * the correction itself (no separate IS weight), and RS/M2PO judge the learner's pre-update log-probs.
   */
  mode: 'decoupled' | 'bypass';
  /** Demonstration: round the rollout policy's weights to fp16, bf16 or fp8 E4M3 (the learner keeps float32), so μ ≠ π_old on every token; 'off' = identical weights. */
  mismatch: MismatchMode;
}

export const DEFAULT_ROLLOUT_CORRECTION: RolloutCorrectionConfig = {
  is: 'off',
  isCap: 2,
  rs: 'off',
  rsLow: null,
  rsHigh: null,
  m2po: null,
  mode: 'decoupled',
  mismatch: 'off',
};

/** Whether any correction runs (and so whether π_old is scored and the correction/* keys logged). */
export function correctionActive(c: RolloutCorrectionConfig): boolean {
  return c.is !== 'off' || c.rs !== 'off' || c.m2po !== null || c.mismatch !== 'off';
}

/** The thresholds with the modes' defaults filled in. */
export function correctionBounds(c: RolloutCorrectionConfig): CorrectionBounds {
  const rs = rsMode(c.rs);
  const rsHigh = c.rsHigh ?? rs?.defaultHigh ?? 0;
  const rsLow = rs?.bounds === 'ratio' ? (c.rsLow ?? 1 / rsHigh) : 0;
  return { isCap: c.isCap, rsLow, rsHigh, m2Threshold: c.m2po ?? Infinity };
}

const D = DEFAULT_ROLLOUT_CORRECTION;
const num = () => z.number({ error: 'must be a number' }).refine(Number.isFinite, 'must be a finite number');
const names = (xs: readonly { name: string }[]) => ['off', ...xs.map((d) => d.name)] as [string, ...string[]];
const oneOf = <T extends string>(values: readonly [T, ...T[]]) => z.enum(values, { error: `must be one of ${values.map((v) => `'${v}'`).join(', ')}` });

export const rolloutCorrectionSchema = z
  .strictObject({
    is: oneOf(names(IS_MODES)).default(D.is),
    isCap: num().min(1, 'must be ≥ 1 (a cap below 1 would down-weight on-policy tokens)').max(1e6, 'must be ≤ 1e6').default(D.isCap),
    rs: oneOf(names(RS_MODES)).default(D.rs),
    rsLow: num().gt(0, 'must be > 0 (a ratio) or null').lt(1, 'must be < 1 (a ratio below the on-policy 1) or null').nullable().default(D.rsLow),
    rsHigh: num().gt(0, 'must be > 0 or null').max(1e6, 'must be ≤ 1e6 or null').nullable().default(D.rsHigh),
    m2po: num().gt(0, 'must be > 0 (nats²) or null').max(100, 'must be ≤ 100 (nats²) or null').nullable().default(D.m2po),
    mode: oneOf(['decoupled', 'bypass'] as const).default(D.mode),
    mismatch: oneOf(MISMATCH_MODES as [MismatchMode, ...MismatchMode[]]).default(D.mismatch),
  }, { error: 'must be an object' })
  .default({ ...D });

/** Rules across the fields (paths relative to `algo`). */
export function correctionIssues(c: RolloutCorrectionConfig, tisEnabled: boolean): { path: string; message: string }[] {
  const out: { path: string; message: string }[] = [];
  const at = (f: string) => `rolloutCorrection.${f}`;
  const rs = rsMode(c.rs);
  if (rs?.bounds === 'upper' && c.rsLow !== null) out.push({ path: at('rsLow'), message: `'${c.rs}' bounds a divergence from above only; use null` });
  if (rs?.bounds === 'ratio' && c.rsHigh !== null && c.rsHigh <= 1) out.push({ path: at('rsHigh'), message: `must be > 1 for '${c.rs}' (a ratio bound above the on-policy 1), got ${c.rsHigh}` });
  if (!rs && (c.rsLow !== null || c.rsHigh !== null)) out.push({ path: at(c.rsLow !== null ? 'rsLow' : 'rsHigh'), message: "bounds rejection sampling, which is off (rs 'off'); use null" });
  if (c.mode === 'bypass' && c.is !== 'off') {
    out.push({ path: at('is'), message: "bypass mode trains on the ratio π_θ/μ, which already carries the importance weight (veRL loss_type 'ppo_clip'); use 'off', or mode 'decoupled' for an explicit IS weight" });
  }
  if (tisEnabled && c.is !== 'off') out.push({ path: 'tis.enabled', message: `rolloutCorrection.is '${c.is}' weights every position, stale ones included; turn tis off (both would weight stale positions twice)` });
  return out;
}

/**
 * Where the run can correct: π_old is scored by the trainer's own scorer of the learner's
 * weights, which the grid MLP trainer keeps (token trainers score π_old inside the train graph,
 * or not at all when every token is fresh). A message naming the field, or null.
 */
export function correctionRunIssue(c: RolloutCorrectionConfig, target: string): string | null {
  if (!correctionActive(c) || target === 'grid-mlp') return null;
  const on = c.mismatch !== 'off' ? `mismatch '${c.mismatch}'` : c.is !== 'off' ? `is '${c.is}'` : c.rs !== 'off' ? `rs '${c.rs}'` : 'm2po';
  return `algo.rolloutCorrection: rollout correction (${on}) runs on grid envs with an mlp policy, whose trainer scores π_old at every step; this run is '${target}'. Turn it off (is and rs 'off', m2po null, mismatch 'off')`;
}
