/**
 * Grid worlds played as text by a transformer with a value head (ort-web WASM in Node): the
 * values the KV-cached rollout records are the full forward's, and PPO on tokens (token GAE,
 * value loss) learns. Budgets are small; the full memory run is `npm run train -- --config
 * grid-memory-ppo` (numbers in the preset's report).
 */
import { describe, expect, it } from 'vitest';
import { defaultsFor } from '../../core/algos/config.ts';
import { makeTextEnv } from '../../core/envs/grid/textAdapter.ts';
import { initWeights } from '../../core/models/types.ts';
import { mixSeed } from '../../core/util/rng.ts';
import { DEFAULT_IMITATION, trainImitation } from '../../core/trainer/imitation.ts';
import { collectTokenEpisodes } from '../../core/rollout/tokenLockstep.ts';
import { DEFAULT_TOKEN_TRAINER } from '../../core/trainer/tokenConfig.ts';
import { createLockstepTrainer } from '../../core/trainer/lockstepCollector.ts';
import { makeTokenModel } from '../../core/models/transformer.ts';
import { Rng } from '../../core/util/rng.ts';
import { loadNodeEngine } from './node.ts';

describe('grid envs as text, PPO on tokens (ort-web WASM)', () => {
  it('records per-token values equal to the full forward pass (within 1e-4)', async () => {
    const engine = await loadNodeEngine('ort-web-wasm');
    const model = makeTokenModel({ kind: 'transformer', dModel: 16, nLayers: 2, nHeads: 2, dFF: 32, context: 96 }, true);
    const w = initWeights(model, 3);
    // Larger than init so values vary by position and a misaligned index would show.
    for (const k of Object.keys(w)) if (!k.includes('ln')) w[k] = w[k].map((x) => x * 8);
    const B = 4;
    const T = model.config.context;
    const dec = await engine.createDecoder(model, B, w, 8);
    const envs = Array.from({ length: B }, () => makeTextEnv('grid/memory', { size: 8, viewSize: 3, maxSteps: 6 }));
    const r = await collectTokenEpisodes({ envs, seeds: [1, 2, 3, 4], groups: [-1, -1, -1, -1], decoder: dec, rng: new Rng(1), maxActionTokens: 2 });
    const full = await engine.createPolicy(model, B, w);
    const tokens = new Int32Array(B * T);
    r.episodes.forEach((ep, b) => tokens.set(ep.tokens, b * T));
    const out = await full.run({ tokens });
    let checked = 0;
    r.episodes.forEach((ep, b) => {
      expect(ep.values).toBeDefined();
      for (let i = 1; i < ep.tokens.length; i++) {
        if (!ep.lossMask[i]) {
          expect(ep.values![i]).toBe(0);
          continue;
        }
        // V of the state token i was sampled in = the value output at position i − 1.
        expect(Math.abs(ep.values![i] - out.value[b * T + i - 1])).toBeLessThan(1e-4);
        checked++;
      }
    });
    expect(checked).toBeGreaterThan(20);
    await Promise.all([dec.release(), full.release()]);
  });

  it('PPO with token GAE lifts a weak warm start on grid/empty-5x5 played as text', { timeout: 120_000 }, async () => {
    const engine = await loadNodeEngine('ort-web-wasm');
    const env = { id: 'grid/empty-5x5', kwargs: { viewSize: 3, maxSteps: 8 } };
    const modelCfg = { kind: 'transformer' as const, dModel: 32, nLayers: 1, nHeads: 2, dFF: 64, context: 160 };
    // A few imitation steps teach the answer format (one letter, then <eoa>), not the task.
    const w0 = initWeights(makeTokenModel(modelCfg), 1);
    const warm = await trainImitation(engine, makeTokenModel(modelCfg), w0, { ...DEFAULT_IMITATION, env, steps: WARM_STEPS, batch: 8, lr: 3e-3, seed: mixSeed(1, 0x1a1) });
    const trainer = await createLockstepTrainer(
      {
        ...DEFAULT_TOKEN_TRAINER,
        env,
        model: modelCfg,
        algo: { ...defaultsFor('ppo'), lr: 1e-3, entropyCoef: 0.01, updateEpochs: 4, minibatches: 2 },
        shaping: { ...DEFAULT_TOKEN_TRAINER.shaping, format: { weight: 0.1 } },
        episodes: 32,
        learnerBatch: 16,
        maxActionTokens: 2,
        prefillStep: 16,
        seed: 1,
      },
      engine,
      warm.weights,
    );
    const first = await trainer.step();
    let last = first;
    for (let i = 1; i < PPO_ITERATIONS; i++) last = await trainer.step();
    expect(first.metrics['episode/success_rate']).toBeLessThan(FIRST_BELOW);
    expect(last.metrics['episode/success_rate']).toBeGreaterThanOrEqual(LAST_AT_LEAST);
    expect(Number.isFinite(last.metrics['critic/explained_variance'])).toBe(true);
    // EV = 1 − Var(R − V)/Var(R) cannot exceed 1; the value head's loss falls as it trains.
    expect(last.metrics['critic/explained_variance']).toBeLessThanOrEqual(1);
    expect(last.metrics['critic/value_loss']).toBeLessThan(first.metrics['critic/value_loss']!);
    expect(first.metrics['mismatch/logprob_abs_diff_max']).toBeLessThanOrEqual(1e-4);
    expect(last.allApplied).toBe(true);
    await trainer.release();
  });
});

// 60 imitation steps (batch 8) leave the policy at ≈ 0.16 success; PPO reached 0.78 after 12
// iterations (seed 1, measured with the same settings). The bars leave room for numerics.
const WARM_STEPS = 60;
const PPO_ITERATIONS = 16;
const FIRST_BELOW = 0.4;
const LAST_AT_LEAST = 0.7;
