/**
 * The Runs view's policy export rebuilds the model from the run's config and bakes in its saved
 * checkpoint's parameters; the reference is the CLI's policy.onnx, exported from the live
 * trainer's model and weights: the bytes must be the same. A checkpoint of another model is refused.
 */
import { describe, expect, it } from 'vitest';
import { exportPolicyOnnx } from '../../core/models/export.ts';
import { parseRunConfig, type RunConfig } from '../../core/presets/schema.ts';
import { policyOnnxFromCheckpoint } from '../../core/runs/policyExport.ts';
import { createTrainer } from '../../core/trainer/createTrainer.ts';
import { loadNodeEngine } from './node.ts';

function config(algo: Record<string, unknown>, hidden = [64, 64]): RunConfig {
  const r = parseRunConfig({ env: { id: 'grid/empty-5x5' }, model: { kind: 'mlp', hidden, activation: 'tanh' }, algo, rollout: { groups: 2, episodes: 16, learnerBatch: 128 }, iterations: 1, seed: 3 });
  if (!r.ok) throw new Error(r.messages.join('\n'));
  return r.config;
}

describe('policy export from a checkpoint', () => {
  for (const algo of [{ algo: 'grpo', groupSize: 4 }, { algo: 'ppo' }]) {
    it(`${algo.algo}: the same bytes as the CLI's policy.onnx`, { timeout: 60_000 }, async () => {
      const cfg = config(algo);
      const trainer = await createTrainer(cfg, await loadNodeEngine('ort-web-wasm'));
      await trainer.step();
      const cp = await trainer.checkpoint();
      const cli = exportPolicyOnnx(trainer.model, await trainer.getWeights(), { batch: 1 });
      await trainer.release();
      const fromRun = policyOnnxFromCheckpoint(cfg, cp);
      expect(fromRun.length).toBeGreaterThan(1000);
      expect(Buffer.from(fromRun).equals(Buffer.from(cli))).toBe(true);
      expect(() => policyOnnxFromCheckpoint(config(algo, [32]), cp)).toThrow(/does not fit this run's model: parameter 'l0.w' has \d+ values, expected \d+/);
    });
  }
});
