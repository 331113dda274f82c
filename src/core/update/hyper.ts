/**
 * Hyperparameters as the train-step graph sees them: the mapping from an AlgoConfig to the
 * graph's options (one place, so every trainer builds the same loss and optimizer) and the
 * live edits that change the graph's scalar inputs between steps.
 */
import type { AlgoConfig } from '../algos/config.ts';
import { algoDescriptor } from '../algos/registry/index.ts';
import type { ShapingWeights } from '../reward/shaping.ts';
import { HYPER_INPUTS, type HyperInput, type TrainStepOptions } from './trainStep.ts';

/** Hyperparameters that may change while training runs (applied from the next train step). */
export interface LiveHyper {
  lr?: number;
  entropyCoef?: number;
  clipLow?: number;
  clipHigh?: number;
  klCoef?: number;
  /**
   * Shaping term weights (non-negative magnitudes, as in ShapingConfig): replace the base
   * config's weights from the next iteration's rewards on. Under a progressive schedule the
   * current stage's own weights still take precedence, as they do over the config's.
   */
  rewardWeights?: Partial<ShapingWeights>;
}

/**
 * The train-step graph options an algorithm config implies: the clipped PG loss (clip-higher,
 * KL to the reference as a loss term when klMode is 'loss', entropy bonus, value loss for
 * value-head models) and AdamW with global-norm clipping.
 */
export function trainStepOptions(algo: AlgoConfig, batch: number): TrainStepOptions {
  return {
    batch,
    loss: {
      kind: 'policy-gradient',
      objective: algoDescriptor(algo.algo).loss.objective,
      clipLow: algo.clipLow,
      clipHigh: algo.clipHigh,
      useReference: algo.klCoef > 0 && algo.klMode === 'loss',
      klCoef: algo.klCoef,
      klEstimator: algo.klEstimator,
      entropyCoef: algo.entropyCoef,
      valueCoef: algo.valueCoef,
      valueClip: algo.valueClip,
      tauPos: algo.sapo.tauPos,
      tauNeg: algo.sapo.tauNeg,
      covariance: algo.covariance.mode,
      covKlCoef: algo.covariance.klCoef,
    },
    adam: { lr: algo.lr, beta1: algo.adamBeta1, beta2: algo.adamBeta2, eps: algo.adamEps, weightDecay: algo.weightDecay, maxGradNorm: algo.maxGradNorm ?? 0 },
  };
}

/** The live-editable hyperparameters, each the graph input it sets. */
const LIVE_INPUTS = {
  lr: HYPER_INPUTS.lr,
  entropyCoef: HYPER_INPUTS.entropyCoef,
  clipLow: HYPER_INPUTS.clipLow,
  clipHigh: HYPER_INPUTS.clipHigh,
  klCoef: HYPER_INPUTS.klCoef,
} as const satisfies { [K in Exclude<keyof LiveHyper, 'rewardWeights'>]-?: HyperInput };

/**
 * Applies live hyperparameter changes to a learner's scalar inputs (from the next step on). An
 * input the graph does not have (kl_coef without a reference policy) is left out.
 */
export function applyLiveHyper(hyper: Record<string, number>, h: LiveHyper): void {
  for (const [key, input] of Object.entries(LIVE_INPUTS) as [keyof typeof LIVE_INPUTS, HyperInput][]) {
    const v = h[key];
    if (v !== undefined && input in hyper) hyper[input] = v;
  }
}
