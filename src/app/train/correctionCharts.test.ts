import { describe, expect, it } from 'vitest';
import { DEFAULT_ROLLOUT_CORRECTION } from '../../core/algos/correction/config.ts';
import { anchorName } from '../../core/metrics/lookup.ts';
import { dashboardCharts } from './dashboardCharts.ts';
import { CORRECTION_FIELDS } from './correctionFields.ts';
import { essFormat } from './correctionCharts.ts';
import { FIELD_BY_PATH } from './fields.ts';

const base = { env: { id: 'grid/empty-8x8' }, model: { kind: 'mlp' }, shaping: {} };

describe('rollout correction on the dashboard and in the form', () => {
  it('the Shift section gains the ESS, gap and rejection charts only when the run corrects', () => {
    const ids = (rc: typeof DEFAULT_ROLLOUT_CORRECTION) => dashboardCharts({ ...base, algo: { algo: 'grpo', rolloutCorrection: rc } }, 100, 7).shift.map((c) => c.id);
    expect(ids(DEFAULT_ROLLOUT_CORRECTION)).not.toContain('correction-ess');
    expect(ids({ ...DEFAULT_ROLLOUT_CORRECTION, mismatch: 'fp8' })).toEqual(expect.arrayContaining(['correction-ess', 'correction-gap', 'correction-rejected']));
  });
  it("the charts draw the keys --metric-names verl writes as veRL's rollout_corr/* names", () => {
    const shift = dashboardCharts({ ...base, algo: { algo: 'grpo', rolloutCorrection: { ...DEFAULT_ROLLOUT_CORRECTION, is: 'token' } } }, 100, 7).shift;
    const keys = shift.flatMap((c) => c.lines.map((l) => l.key)).filter((k) => k.startsWith('correction/'));
    expect(keys.map((k) => anchorName(k, 'verl')).filter((n) => n.startsWith('rollout_corr/')).sort()).toEqual([
      'rollout_corr/chi2_token',
      'rollout_corr/log_ppl_abs_diff',
      'rollout_corr/rollout_is_eff_sample_size',
      'rollout_corr/rollout_is_ratio_fraction_high',
      'rollout_corr/rollout_rs_masked_fraction',
    ]);
  });
  it('the form lists the modes for mlp policies only', () => {
    for (const f of CORRECTION_FIELDS) expect(FIELD_BY_PATH.get(f.path)).toBe(f);
    const draft = (kind: string) => ({ model: { kind } }) as Parameters<NonNullable<(typeof CORRECTION_FIELDS)[number]['when']>>[0];
    expect(CORRECTION_FIELDS.every((f) => f.when?.(draft('mlp')))).toBe(true);
    expect(CORRECTION_FIELDS.some((f) => f.when?.(draft('transformer')))).toBe(false);
  });
});

describe('essFormat', () => {
  it('reads 1 − the gap near 1 (0.9999917 → "1 − 8.3e-6"), three digits elsewhere', () => {
    expect(essFormat(0.9999916866540441)).toBe('1 − 8.3e-6');
    expect(essFormat(1)).toBe('1');
    expect(essFormat(0.8254)).toBe('0.825');
  });
});
