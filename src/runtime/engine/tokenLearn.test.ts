/**
 * Short real learning runs for token policies (ort-web WASM in Node): a learning regression in
 * the agent loop, the imitation loss or the token GRPO update fails CI. Budgets are small and
 * the thresholds well below what full runs reach (numbers in the RL-loop issue report).
 */
import { describe, expect, it } from 'vitest';
import { defaultsFor } from '../../core/algos/config.ts';
import { registerEnv } from '../../core/envs/registry.ts';
import { dict, text } from '../../core/envs/spaces.ts';
import { VirtualClock } from '../../core/envs/clock.ts';
import type { EnvSpec, ResetResult, StepResult, ToolEnv, ToolObs, TranscriptFrame } from '../../core/envs/types.ts';
import { initWeights } from '../../core/models/types.ts';
import { parseRunConfig } from '../../core/presets/schema.ts';
import { heldOutSeeds } from '../../core/util/rng.ts';
import { createTrainer } from '../../core/trainer/createTrainer.ts';
import { DEFAULT_IMITATION, trainImitation } from '../../core/trainer/imitation.ts';
import { mixSeed } from '../../core/util/rng.ts';
import { DEFAULT_TOKEN_TRAINER } from '../../core/trainer/tokenConfig.ts';
import { createLockstepTrainer } from '../../core/trainer/lockstepCollector.ts';
import { makeTokenModel } from '../../core/models/transformer.ts';
import { WARM_START_DIR } from '../../core/trainer/warmStartCache.ts';
import type { WarmStartCache } from '../../core/trainer/createTrainer.ts';
import { loadNodeEngine } from './node.ts';
import { existsSync, readFileSync } from 'node:fs';

/** public/warm-start/ as the tab and `--shipped-warm-start` read it; records whether a file was used. */
function shippedWarmStarts(results: unknown[]): WarmStartCache {
  const dir = new URL(`../../../public/${WARM_START_DIR}/`, import.meta.url);
  return {
    read: async (name) => (existsSync(new URL(name, dir)) ? (JSON.parse(readFileSync(new URL(name, dir), 'utf8')) as unknown) : undefined),
    onResult: (r) => void results.push(r),
  };
}

/**
 * A one-turn text bandit: reward 1 when the action starts with a digit. A fresh policy does so
 * about 10% of the time (10 of ~105 tokens), so GRPO groups carry signal from the start.
 */
class FirstDigitEnv implements ToolEnv {
  readonly spec: EnvSpec = {
    id: 'test/first-digit',
    title: 'First digit',
    description: 'Answer with anything that starts with a digit.',
    family: 'tool',
    observationSpace: dict({ text: text(40) }),
    actionSpace: text(40),
    rewardRange: [0, 1],
    maxSteps: 1,
  };
  reset(): ResetResult<ToolObs> {
    return { obs: { text: 'say a number' }, info: {} };
  }
  step(action: string): StepResult<ToolObs> {
    const ok = /^[0-9]/.test(action);
    return { obs: { text: ok ? 'done: correct.' : 'done: wrong.' }, reward: ok ? 1 : 0, terminated: true, truncated: false, info: { success: ok } };
  }
  renderText(): string {
    return 'say a number';
  }
  frame(): TranscriptFrame {
    return { kind: 'transcript', messages: [] };
  }
  expertAction(): string {
    return '7';
  }
}
registerEnv('test/first-digit', () => new FirstDigitEnv());

/**
 * The warm start → GRPO test. Measured on 128 held-out seeds (ort-web WASM, ~45 s), warm start
 * → after 60 iterations, sampled / greedy: run seed 1 0.563 → 0.711 / 0.852 → 0.836; seed 2
 * 0.602 → 0.695 / 0.898 → 0.852; seed 3 0.672 → 0.750 / 0.922 → 0.891. The bars sit below
 * the worst of the three. Seed 3's warm start is shipped (public/warm-start/, the calculator
 * lesson's): the run loads it, bit for bit what its 300 imitation steps give (warmStartCache.test.ts,
 * and cli/warmStart.test.ts keeps the file current), instead of training it again (~15 s in CI).
 */
const WARM_RL = { d: 48, warmSteps: 300, lr: 3e-4, iterations: 60, minGain: 0.07, greedyDrop: 0.06, seed: 3 };

describe('token policies learn (ort-web WASM)', () => {
  it('GRPO on tokens learns a one-turn text bandit from scratch', { timeout: 60_000 }, async () => {
    const engine = await loadNodeEngine('ort-web-wasm');
    const trainer = await createLockstepTrainer(
      {
        ...DEFAULT_TOKEN_TRAINER,
        env: { id: 'test/first-digit' },
        model: { kind: 'transformer', dModel: 32, nLayers: 1, nHeads: 2, dFF: 64, context: 32 },
        algo: { ...defaultsFor('grpo'), lr: 1e-3, entropyCoef: 0, updateEpochs: 4, minibatches: 4 },
        groups: 8,
        learnerBatch: 16,
        maxActionTokens: 4,
        seed: 1,
      },
      engine,
    );
    const first = await trainer.step();
    let last = first;
    for (let i = 1; i < 15; i++) last = await trainer.step();
    // ≈ 0.1 by chance at the start; ≈ 0.98 after 15 iterations (seed 1).
    expect(first.metrics['episode/success_rate']).toBeLessThan(0.3);
    expect(last.metrics['episode/success_rate']).toBeGreaterThanOrEqual(0.7);
    expect(last.metrics['actor/entropy']).toBeLessThan(first.metrics['actor/entropy']!);
    expect(first.metrics['mismatch/logprob_abs_diff_max']).toBeLessThanOrEqual(1e-4);
    await trainer.release();
  });

  it('imitation warm start teaches the multi-turn calculator loop (1-digit operands)', { timeout: 120_000 }, async () => {
    const engine = await loadNodeEngine('ort-web-wasm');
    const env = { id: 'tools/calculator', kwargs: { minDigits: 1, maxDigits: 1 } };
    const modelCfg = { kind: 'transformer' as const, dModel: 48, nLayers: 2, nHeads: 4, dFF: 192, context: 96 };
    const model = makeTokenModel(modelCfg);
    const w0 = initWeights(model, 1);
    const warm = await trainImitation(engine, model, w0, { ...DEFAULT_IMITATION, env, steps: 150, batch: 16, lr: 3e-3 });
    expect(warm.curve[warm.curve.length - 1].ceLoss).toBeLessThan(warm.curve[0].ceLoss / 4);
    // Greedy exact-answer rate on held-out seeds (outside the imitation seed stream).
    const heldOut = Array.from({ length: 64 }, (_, i) => mixSeed(0x4e1d, i));
    const cfg = { ...DEFAULT_TOKEN_TRAINER, env, model: modelCfg, algo: defaultsFor('grpo'), groups: 4, maxActionTokens: 16 };
    const rate = async (weights: typeof w0) => {
      const t = await createLockstepTrainer(cfg, engine, weights);
      const eps = await t.evaluate(heldOut);
      await t.release();
      return eps.filter((e) => e.success).length / eps.length;
    };
    expect(await rate(w0)).toBe(0);
    // ≈ 0.95 with these settings (ort-node, same seeds); the bar leaves room for numerics.
    expect(await rate(warm.weights)).toBeGreaterThanOrEqual(0.6);
  });

  it('GRPO after a short warm start raises the held-out exact-answer rate on the calculator (2-digit operands)', { timeout: 420_000 }, async () => {
    // The calc-grpo story at a CI budget: imitation gives the format and a soft policy, then
    // GRPO on the exact-answer reward sharpens it on its own samples. Same path as the preset
    // (run config -> createTrainer -> warm start -> GRPO with KL to the warm start).
    const engine = await loadNodeEngine('ort-web-wasm');
    const parsed = parseRunConfig({
      env: { id: 'tools/calculator', kwargs: { minDigits: 2, maxDigits: 2 } },
      model: { kind: 'transformer', dModel: WARM_RL.d, nLayers: 2, nHeads: 8, dFF: 4 * WARM_RL.d, context: 96 },
      warmStart: { steps: WARM_RL.warmSteps, batch: 16, lr: 3e-3 },
      algo: { algo: 'grpo', groupSize: 8, lr: WARM_RL.lr, entropyCoef: 0, klCoef: 0.001 },
      rollout: { groups: 8, learnerBatch: 16, maxActionTokens: 16 },
      iterations: WARM_RL.iterations,
      seed: WARM_RL.seed,
    });
    if (!parsed.ok) throw new Error(parsed.messages.join('; '));
    // A virtual clock: the calculator's simulated tool latency decides the order in which the
    // continuous loop finishes episodes, so with the wall clock each run trains on other batches
    // (the greedy rate after RL once fell 8 of 128 below the warm start's, past the bar).
    const loaded: unknown[] = [];
    const trainer = await createTrainer(parsed.config, engine, { clock: new VirtualClock(), warmStartCache: shippedWarmStarts(loaded) });
    expect(loaded).toEqual([{ loaded: true, savedS: expect.any(Number) }]);
    const seeds = heldOutSeeds(128);
    const rate = async (temperature: number) => (await trainer.evaluate(seeds, temperature)).filter((e) => e.success).length / seeds.length;
    const warm = { greedy: await rate(0), sampled: await rate(1) };
    for (let i = 0; i < WARM_RL.iterations; i++) await trainer.step();
    const after = { greedy: await rate(0), sampled: await rate(1) };
    await trainer.release();
    console.log(`calculator warm start → GRPO: greedy ${warm.greedy} → ${after.greedy}, sampled ${warm.sampled} → ${after.sampled}`);
    // RL sharpens what imitation half-learned: the sampled rate rises toward the greedy one,
    // which must not fall far (GRPO fixes soft errors, not confident ones; see calc-grpo).
    expect(warm.sampled).toBeLessThan(0.8);
    expect(after.sampled).toBeGreaterThanOrEqual(warm.sampled + WARM_RL.minGain);
    expect(after.greedy).toBeGreaterThanOrEqual(warm.greedy - WARM_RL.greedyDrop);
  });
});
