/**
 * The form's rollout-correction fields (algo.rolloutCorrection; grid MLP runs only, where the
 * trainer scores π_old). The thresholds that may be null (rsLow, rsHigh, m2po) are set in the
 * config or a preset; the form shows the modes and the IS cap.
 */
import { IS_MODES, RS_MODES } from '../../core/algos/correction/index.ts';
import { MISMATCH_MODES } from '../../core/algos/correction/config.ts';

/** A form field (fields.ts FieldDef) as this file needs it; typed here so fields.ts can import the list without a cycle. */
interface CorrectionField {
  path: string;
  label: string;
  panel: 'rollout';
  input: { kind: 'select'; options: readonly { value: string; label: string }[] } | { kind: 'number'; min: number; max: number; step: number };
  help: string;
  when: (c: { model: { kind: string } }) => boolean;
}

const mlp = (c: { model: { kind: string } }) => c.model.kind === 'mlp';
const options = (names: readonly string[]) => names.map((n) => ({ value: n, label: n }));

export const CORRECTION_FIELDS: readonly CorrectionField[] = [
  {
    path: 'algo.rolloutCorrection.mismatch',
    label: 'Rollout precision (mismatch)',
    panel: 'rollout',
    input: { kind: 'select', options: MISMATCH_MODES.map((m) => ({ value: m, label: m === 'off' ? 'float32 (no mismatch)' : `${m} weights` })) },
    when: mlp,
    help: 'Round the rollout policy\'s weights to fp16, bf16 or fp8 while the learner keeps float32, as a fast inference engine beside a float32 trainer does: the policy that acts (μ) then differs from the one trained (π_old) on every step. Watch the Shift charts.',
  },
  {
    path: 'algo.rolloutCorrection.is',
    label: 'Rollout IS',
    panel: 'rollout',
    input: { kind: 'select', options: options(['off', ...IS_MODES.map((d) => d.name)]) },
    when: mlp,
    help: `Importance weights on each step's advantage, ρ = π_old/μ truncated at the cap: ${IS_MODES.map((d) => `'${d.name}' = ${d.help}`).join('; ')}. Decoupled mode only.`,
  },
  { path: 'algo.rolloutCorrection.isCap', label: 'IS cap', panel: 'rollout', input: { kind: 'number', min: 1, max: 1e6, step: 0.5 }, when: mlp, help: 'Upper bound on the IS weight (veRL rollout_is_threshold, default 2): lower = less variance, more bias.' },
  {
    path: 'algo.rolloutCorrection.rs',
    label: 'Rejection sampling',
    panel: 'rollout',
    input: { kind: 'select', options: options(['off', ...RS_MODES.map((d) => d.name)]) },
    when: mlp,
    help: `Drop steps or episodes whose ratio is out of bounds (rsLow, rsHigh in the config): ${RS_MODES.map((d) => `'${d.name}' = ${d.help} (default bound ${d.defaultHigh})`).join('; ')}.`,
  },
  {
    path: 'algo.rolloutCorrection.mode',
    label: 'Correction mode',
    panel: 'rollout',
    input: { kind: 'select', options: [{ value: 'decoupled', label: 'decoupled (3 policies)' }, { value: 'bypass', label: 'bypass (2 policies)' }] },
    when: mlp,
    help: "'decoupled' = the learner recomputes π_old before the update: PPO's ratio is π_θ/π_old and the IS weight π_old/μ. 'bypass' = π_old is μ itself: the ratio π_θ/μ carries the correction (no IS weight); rejection sampling still applies.",
  },
];
