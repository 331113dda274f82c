/**
 * What the two token collectors' checkpoint()/restore() share: checks that a checkpoint fits this
 * trainer before anything changes (so a refused one leaves the trainer fresh), and copies of
 * weights that a checkpoint may hand away as transferables. Pure.
 */
import type { PolicyModel, Weights } from '../models/types.ts';
import type { Checkpoint, CheckpointTrainer } from '../runs/checkpoint.ts';

/** A copy of every tensor (a checkpoint's arrays may be transferred, which detaches them). */
export function copyWeights(w: Weights): Record<string, Float32Array> {
  return Object.fromEntries(Object.entries(w).map(([k, t]) => [k, Float32Array.from(t)]));
}

/** What a token trainer is, for the checks of `checkTokenCheckpoint`. */
export interface TokenRestoreTarget {
  /** e.g. 'Trainer.restore', the prefix of every message. */
  who: string;
  trainer: CheckpointTrainer;
  /** The trainer's iteration and version: both 0 on a fresh trainer. */
  iteration: number;
  version: number;
  /** The learner's live scalar inputs (a checkpoint may name only these). */
  hyper: Record<string, number>;
  /** RNG stream names the checkpoint must hold. */
  rng: readonly string[];
  /** The policy: the reference weights must have its parameters' names and sizes. */
  model: PolicyModel;
  /** Whether this run has a KL reference policy (klCoef > 0). */
  hasReference: boolean;
}

/** Throws, naming the field, when `cp` was not written by a trainer of this kind and config. */
export function checkTokenCheckpoint(cp: Checkpoint, t: TokenRestoreTarget): void {
  const { who } = t;
  if (cp.trainer !== t.trainer) throw new Error(`${who}: the checkpoint was written by the '${cp.trainer}' trainer, this run's is '${t.trainer}' (another config?)`);
  if (t.iteration !== 0 || t.version !== 0) throw new Error(`${who}: only a fresh trainer can be restored (it has trained)`);
  const unknown = Object.keys(cp.hyper).filter((k) => !(k in t.hyper));
  if (unknown.length > 0) throw new Error(`${who}: hyper.${unknown[0]} is not a hyperparameter of this run's train step (another algorithm?)`);
  for (const name of t.rng) if (!cp.rng[name]) throw new Error(`${who}: rng.${name} is missing`);
  if (!!cp.reference !== t.hasReference) {
    throw new Error(`${who}: reference: the checkpoint ${cp.reference ? 'has' : 'has no'} KL reference weights, this run ${t.hasReference ? 'has' : 'has no'} KL reference (klCoef ${t.hasReference ? '> 0' : '= 0'})`);
  }
  if (cp.reference) {
    for (const p of t.model.params) {
      const r = cp.reference[p.name];
      const n = p.shape.reduce((a, b) => a * b, 1);
      if (!r || r.length !== n) throw new Error(`${who}: reference["${p.name}"] ${r ? `has ${r.length} values, expected ${n}` : 'is missing'} (a checkpoint of another model?)`);
    }
  }
}
