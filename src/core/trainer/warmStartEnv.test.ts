/**
 * warmStart.envKwargs: the imitation warm start's expert plays the run's env with these kwargs
 * merged over env.kwargs, while RL trains on env.kwargs alone; a bad kwarg is named at parse time.
 */
import { describe, expect, it } from 'vitest';
import { parseRunConfig, warmStartEnv, type RunConfig, type RunConfigInput } from '../presets/schema.ts';
import { makeTextEnv } from '../envs/grid/textAdapter.ts';
import { expertEpisode, imitationSeed } from './imitation.ts';
import { tokenImitationConfig } from './createTrainer.ts';
import { decode } from '../text/codec.ts';

const base: RunConfigInput = {
  env: { id: 'tools/flaky-api', kwargs: { failureProb: 0.5, keys: 5 } },
  model: { kind: 'transformer', dModel: 16, nLayers: 1, nHeads: 2, dFF: 32, context: 256 },
  algo: { algo: 'grpo' },
  warmStart: { steps: 3, batch: 4 },
};

function parse(input: RunConfigInput): RunConfig {
  const r = parseRunConfig(input);
  if (!r.ok) throw new Error(r.messages.join('\n'));
  return r.config;
}

/** Counts `retry()` calls and failure replies in the first `n` expert episodes the warm start would train on. */
function demoStats(config: RunConfig, n: number): { retries: number; failures: number; keys: number } {
  const cfg = tokenImitationConfig(config)!;
  const env = makeTextEnv(cfg.env.id, cfg.env.kwargs);
  let retries = 0;
  let failures = 0;
  for (let k = 0; k < n; k++) {
    const text = decode(Array.from(expertEpisode(env, imitationSeed(cfg.seed, 0, k), 256).tokens));
    retries += text.split('retry()').length - 2; // the task text lists retry() once
    failures += text.split('try again').length - 1;
  }
  return { retries, failures, keys: (env as unknown as { config: { keys: number } }).config.keys };
}

describe('warmStart.envKwargs', () => {
  it('defaults to {}: the demonstrations come from the training env', () => {
    const c = parse(base);
    expect(c.warmStart!.envKwargs).toEqual({});
    expect(warmStartEnv(c)).toEqual({ id: 'tools/flaky-api', kwargs: { failureProb: 0.5, keys: 5 } });
    // failureProb 0.5: about half the first calls fail and the expert retries each time.
    const s = demoStats(c, 40);
    expect(s.failures).toBeGreaterThan(10);
    expect(s.retries).toBe(s.failures);
  });

  it('merges over env.kwargs for the expert only (a service that never fails: no retries shown)', () => {
    const c = parse({ ...base, warmStart: { steps: 3, batch: 4, envKwargs: { failureProb: 0 } } });
    // RL still trains on the flaky service; the demonstrations keep the run's other kwargs (keys 5).
    expect(c.env.kwargs).toEqual({ failureProb: 0.5, keys: 5 });
    expect(warmStartEnv(c).kwargs).toEqual({ failureProb: 0, keys: 5 });
    // Fails if the warm start still read env.kwargs (retries would appear, as in the test above).
    expect(demoStats(c, 40)).toEqual({ retries: 0, failures: 0, keys: 5 });
  });

  it('names a bad demonstration kwarg at parse time', () => {
    const bad = parseRunConfig({ ...base, warmStart: { steps: 3, envKwargs: { failureProb: 2 } } });
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.messages).toEqual([expect.stringMatching(/^warmStart\.envKwargs: tools\/flaky-api: kwarg failureProb must be a number in \[0, 1\], got 2$/)]);
    const unknown = parseRunConfig({ ...base, warmStart: { steps: 3, envKwargs: { failProb: 0 } } });
    expect(unknown.ok).toBe(false);
    if (!unknown.ok) expect(unknown.messages.join('\n')).toMatch(/warmStart\.envKwargs: .*unknown kwarg "failProb"/);
  });
});
