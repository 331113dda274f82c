/**
 * The loss lens's reading of one iteration's sample: the run's loss and a loss to compare with,
 * each token's weight and state under each, and the per-state counts the panel states in words.
 */
import { algoDescriptor } from '../../core/algos/registry/index.ts';
import type { AlgoConfig } from '../../core/algos/config.ts';
import { DEFAULT_ALGO_CONFIG } from '../../core/algos/config.ts';
import { lensWeights, type LensLoss, type LensState } from '../../core/update/lossLens.ts';
import type { LensSample } from '../../core/update/lensSample.ts';
import type { PgObjective } from '../../core/update/surrogates.ts';

/** The objectives the lens can read a batch under, with the name the select shows. */
export const LENS_OBJECTIVES: readonly { id: PgObjective; label: string }[] = [
  { id: 'clip', label: 'PPO clip (GRPO, DAPO, …)' },
  { id: 'cispo', label: 'CISPO (bounded weight)' },
  { id: 'sapo', label: 'SAPO (soft gate)' },
  { id: 'gspo', label: 'GSPO (sequence ratio)' },
  { id: 'gmpo', label: 'GMPO (geometric mean)' },
];

/** Every state, in the order the summary lists them. */
export const LENS_STATES: readonly LensState[] = ['full', 'cut', 'faded', 'bounded', 'masked'];

type AlgoLike = Partial<Pick<AlgoConfig, 'clipLow' | 'clipHigh' | 'sapo' | 'covariance'>> & { algo: string };

/** The run's loss settings, under its own objective or under `objective` instead (the comparison). */
export function lensLossOf(algo: AlgoLike, objective?: PgObjective): LensLoss {
  const d = DEFAULT_ALGO_CONFIG;
  return {
    objective: objective ?? algoDescriptor(algo.algo).loss.objective,
    clipLow: algo.clipLow ?? d.clipLow,
    clipHigh: algo.clipHigh ?? d.clipHigh,
    tauPos: algo.sapo?.tauPos ?? d.sapo.tauPos,
    tauNeg: algo.sapo?.tauNeg ?? d.sapo.tauNeg,
    // Clip-Cov's selection is drawn at random inside each minibatch and not sent: no token reads as masked here.
    covariance: 'off',
  };
}

export interface LensReading {
  weight: Float64Array;
  state: LensState[];
  /** Tokens per state. */
  counts: Record<LensState, number>;
}

/** Each sampled token's weight and state under `loss`, and the counts per state. */
export function readLens(loss: LensLoss, s: LensSample): LensReading {
  const { weight, state } = lensWeights(loss, { logRatio: s.logRatio, adv: s.adv, seq: s.seq });
  const counts = { full: 0, cut: 0, faded: 0, bounded: 0, masked: 0 };
  for (const st of state) counts[st]++;
  return { weight, state, counts };
}

/** One sentence: "PPO clip: 180 full, 12 cut of 192 tokens." (states with no token left out). */
export function countsText(label: string, r: LensReading): string {
  const parts = LENS_STATES.filter((k) => r.counts[k] > 0).map((k) => `${r.counts[k]} ${k}`);
  return `${label}: ${parts.join(', ') || 'no tokens'} of ${r.state.length} tokens.`;
}

/** The objective's display label. */
export function objectiveLabel(id: PgObjective): string {
  return LENS_OBJECTIVES.find((o) => o.id === id)?.label ?? id;
}
