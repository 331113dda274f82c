import { describe, expect, it } from 'vitest';
import { anchorName, detectNaming, fromAnchorName, keepApplicable, metricDecl, renameRow, rowToOurs } from './lookup.ts';
import { METRICS, type IterationKey, type MetricDecl, type MetricKey } from './registry.ts';

const ALL: readonly MetricDecl[] = METRICS;

describe('metric registry', () => {
  it('declares each key once, each with a doc, a family and a policy', () => {
    const keys = ALL.map((d) => d.key);
    expect(keys.filter((k, i) => keys.indexOf(k) !== i)).toEqual([]);
    for (const d of ALL) {
      expect(d.doc.length, d.key).toBeGreaterThan(10);
      expect(d.families.length, d.key).toBeGreaterThan(0);
      expect(d.policies.length, d.key).toBeGreaterThan(0);
      expect(d.key, d.key).toMatch(/^[a-z_]+(\/([a-zA-Z_]+|<[a-z]+>))+$/);
    }
  });

  it('types keys as literals: patterns take any name, chart-only keys are no iteration keys (compile time)', () => {
    const keys: IterationKey[] = ['actor/entropy', 'reward/myTerm/mean', 'agents/a/subgoal_rate'];
    const drawn: MetricKey = 'reward/lo';
    // @ts-expect-error: the reward band's edge is drawn by the app, never logged.
    const logged: IterationKey = 'reward/lo';
    // @ts-expect-error: a typo is no key.
    const typo: MetricKey = 'actor/entropyy';
    expect([...keys, drawn, logged, typo]).toHaveLength(6);
  });

  it('finds a literal key before a pattern, a user term by the pattern, and nothing for an undeclared key', () => {
    expect(metricDecl('reward/outcome/mean')?.key).toBe('reward/outcome/mean');
    expect(metricDecl('reward/calcCall/mean')?.key).toBe('reward/<term>/mean');
    expect(metricDecl('reward/calcCall/std')?.key).toBe('reward/<term>/std');
    expect(metricDecl('agents/b/subgoal_rate')?.key).toBe('agents/<name>/subgoal_rate');
    // One segment stands for a placeholder: a nested name is not a term.
    expect(metricDecl('reward/a/b/mean')).toBeUndefined();
    expect(metricDecl('reward//mean')).toBeUndefined();
    expect(metricDecl('tools/calls')).toBeUndefined();
  });

  it("keepApplicable drops what does not apply to the run and keeps undeclared keys for the tests to catch", () => {
    const row = { 'reward/mean': 1, 'tools/call_frequency': 0, 'reward/toolCost/mean': 0, 'reward/format/mean': 0, 'reward/potential/mean': 0.5, 'perf/update_s': 0.1, 'made/up': 3 };
    expect(Object.keys(keepApplicable({ ...row }, { family: 'grid', policy: 'step' }))).toEqual(['reward/mean', 'reward/potential/mean', 'perf/update_s', 'made/up']);
    expect(Object.keys(keepApplicable({ ...row }, { family: 'grid', policy: 'token' }))).toEqual(['reward/mean', 'reward/format/mean', 'made/up']);
    expect(Object.keys(keepApplicable({ ...row }, { family: 'tool', policy: 'token' }))).toEqual(['reward/mean', 'tools/call_frequency', 'reward/toolCost/mean', 'reward/format/mean', 'made/up']);
  });
});

describe('anchor names', () => {
  // Written by hand from TRL's GRPOTrainer (`self._metrics[mode][...]`) and veRL's
  // metric_utils.py / core_algos.py.
  const ours = {
    iteration: 3,
    wall_s: 1.5,
    'reward/mean': 0.5,
    'reward/std': 0.2,
    'reward/max': 1,
    'reward/calcCall/mean': 0.25,
    'reward/calcCall/std': 0.1,
    'groups/frac_zero_std': 0.125,
    'groups/reward_std_mean': 0.3,
    'actor/entropy': 1.2,
    'actor/approx_kl': 0.01,
    'actor/kl_ref': 0.02,
    'actor/clipfrac_low': 0.001,
    'actor/clipfrac_high': 0.002,
    'actor/grad_norm': 0.7,
    'actor/lr': 1e-3,
    'critic/value_loss': 0.4,
    'critic/explained_variance': 0.6,
    'episode/length_mean': 11,
    'episode/success_rate': 0.75,
    'mismatch/logprob_abs_diff_max': 1e-6,
  };

  it('--metric-names trl writes TRL GRPOTrainer names; keys TRL has no name for keep ours', () => {
    expect(renameRow(ours, 'trl')).toEqual({
      iteration: 3,
      wall_s: 1.5,
      reward: 0.5,
      reward_std: 0.2,
      'reward/max': 1,
      'rewards/calcCall/mean': 0.25,
      'rewards/calcCall/std': 0.1,
      frac_reward_zero_std: 0.125,
      'groups/reward_std_mean': 0.3,
      entropy: 1.2,
      'actor/approx_kl': 0.01,
      kl: 0.02,
      'clip_ratio/low_mean': 0.001,
      'clip_ratio/high_mean': 0.002,
      grad_norm: 0.7,
      learning_rate: 1e-3,
      'critic/value_loss': 0.4,
      'critic/explained_variance': 0.6,
      'completions/mean_length': 11,
      'episode/success_rate': 0.75,
      'sampling/sampling_logp_difference/max': 1e-6,
    });
  });

  it('--metric-names verl writes veRL names', () => {
    expect(renameRow(ours, 'verl')).toEqual({
      iteration: 3,
      wall_s: 1.5,
      'critic/score/mean': 0.5,
      'reward/std': 0.2,
      'critic/score/max': 1,
      'reward/calcCall/mean': 0.25,
      'reward/calcCall/std': 0.1,
      'groups/frac_zero_std': 0.125,
      'groups/reward_std_mean': 0.3,
      'actor/entropy': 1.2,
      'actor/ppo_kl': 0.01,
      'actor/kl_loss': 0.02,
      'actor/clipfrac_low': 0.001,
      'actor/clipfrac_high': 0.002,
      'actor/grad_norm': 0.7,
      'actor/lr': 1e-3,
      'critic/vf_loss': 0.4,
      'critic/vf_explained_var': 0.6,
      'response_length/mean': 11,
      'episode/success_rate': 0.75,
      'mismatch/logprob_abs_diff_max': 1e-6,
    });
  });

  it('the hand-checked pairs map to the names TRL and veRL log', () => {
    expect(anchorName('reward/outcome/mean', 'trl')).toBe('rewards/outcome/mean');
    expect(anchorName('reward/outcome/std', 'trl')).toBe('rewards/outcome/std');
    expect(anchorName('actor/approx_kl', 'verl')).toBe('actor/ppo_kl');
    expect(anchorName('critic/value_loss', 'verl')).toBe('critic/vf_loss');
    expect(anchorName('critic/explained_variance', 'verl')).toBe('critic/vf_explained_var');
    expect(anchorName('groups/frac_zero_std', 'trl')).toBe('frac_reward_zero_std');
  });

  it('each naming is one-to-one: no two of our keys get one name, no name is another key of ours, and reading back gives our key', () => {
    const concrete = ALL.map((d) => d.key.replace(/<[a-z]+>/g, 'someName'));
    for (const naming of ['trl', 'verl'] as const) {
      const names = concrete.map((k) => anchorName(k, naming));
      expect(names.filter((n, i) => names.indexOf(n) !== i), naming).toEqual([]);
      names.forEach((n, i) => {
        if (n !== concrete[i]) expect(metricDecl(n), `${naming}: ${n} is also one of our keys`).toBeUndefined();
        expect(fromAnchorName(n, naming)).toBe(concrete[i]);
      });
    }
  });

  it('a row written in TRL or veRL names is recognised and read back into ours', () => {
    expect(detectNaming(ours)).toBe('ours');
    for (const naming of ['trl', 'verl'] as const) {
      const written = renameRow(ours, naming);
      expect(detectNaming(written)).toBe(naming);
      expect(rowToOurs(written)).toEqual(ours);
    }
  });
});
