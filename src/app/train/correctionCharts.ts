/**
 * The Shift section's rollout-correction charts (algo.rolloutCorrection, algos/correction/): drawn
 * only when the run corrects, since every key is absent otherwise.
 */
import { correctionActive, type RolloutCorrectionConfig } from '../../core/algos/correction/config.ts';
import type { ChartSpec } from '../ui/MetricChart.tsx';

/** ESS sits at 1 − 1e-5 under a small mismatch: shown as its distance below 1 there, where 3 digits would all read 1.000. */
export const essFormat = (v: number) => (!Number.isFinite(v) ? '–' : v < 1 && v > 0.999 ? `1 − ${(1 - v).toExponential(1)}` : String(Number(v.toPrecision(3))));

const share = (v: number) => (!Number.isFinite(v) ? '–' : v !== 0 && Math.abs(v) < 0.1 ? `${(v * 100).toFixed(1)}%` : `${Math.round(v * 100)}%`);

export const CORRECTION_CHARTS: ChartSpec[] = [
  {
    id: 'correction-ess',
    title: 'Effective sample size',
    help: 'correction/is_ess (veRL rollout_corr/rollout_is_eff_sample_size): 1 / mean((w / mean w)²) over the trained steps, w = π_old/μ clamped to [1/cap, cap]. 1 when the rollout and the learner agree on every step; it falls as a few steps carry most of the weight (0.5 = the batch is worth half its steps). Close to 1 it reads as 1 − the gap.',
    lines: [{ key: 'correction/is_ess', label: 'ESS', color: '#2563eb' }],
    domain: ['auto', 'auto'],
    ref: { y: 1, label: 'on-policy' },
    format: essFormat,
  },
  {
    id: 'correction-gap',
    title: 'Rollout–learner gap',
    help: "correction/chi_squared_token (veRL chi2_token): mean of ρ² − 1 over steps, ρ = π_old/μ, the variance the IS weights add; correction/log_ppl_abs_diff (veRL log_ppl_abs_diff): per episode |mean log μ − mean log π_old|, nats. Both 0 when the rollout holds the learner's weights.",
    lines: [
      { key: 'correction/chi_squared_token', label: 'χ²', color: '#7c3aed' },
      { key: 'correction/log_ppl_abs_diff', label: '|Δ log ppl|', color: '#0f766e', dashed: true },
    ],
  },
  {
    id: 'correction-rejected',
    title: 'Truncated, rejected',
    help: 'correction/is_ratio_fraction_high (veRL rollout_is_ratio_fraction_high): share of IS weights above the cap, truncated to it; correction/rs_masked_fraction (veRL rollout_rs_masked_fraction): share of trained steps rejection sampling dropped from the loss; correction/second_moment_masked_fraction: share M2PO masked to keep the mean (log ρ)² under its threshold.',
    lines: [
      { key: 'correction/is_ratio_fraction_high', label: 'above cap', color: '#c92a2a' },
      { key: 'correction/rs_masked_fraction', label: 'RS', color: '#c2410c', dashed: true },
      { key: 'correction/second_moment_masked_fraction', label: 'M2PO', color: '#64748b', dashed: true },
    ],
    domain: [0, 'auto'],
    format: share,
  },
];

/** The charts a run's config calls for (none without a correction). */
export function correctionCharts(c: RolloutCorrectionConfig | undefined): ChartSpec[] {
  return c && correctionActive(c) ? CORRECTION_CHARTS : [];
}
