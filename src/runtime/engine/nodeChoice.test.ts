import { describe, expect, it } from 'vitest';
import { chooseNodeEngine } from './node.ts';
import { parseRunConfig } from '../../core/presets/schema.ts';
import '../../core/envs/index.ts';

describe('--engine auto (Node)', () => {
  it("times the run's model on ort-web WASM and onnxruntime-node and returns the faster one, loaded", async () => {
    const r = parseRunConfig({ env: { id: 'grid/empty-8x8' }, model: { kind: 'mlp', hidden: [16] }, algo: { algo: 'grpo', groupSize: 4 }, rollout: { groups: 2, learnerBatch: 64 } });
    if (!r.ok) throw new Error(r.messages.join('; '));
    const { engine, decision } = await chooseNodeEngine(r.config, 1500);
    expect(decision.candidates.map((c) => c.id)).toEqual(['ort-web-wasm', 'ort-node']);
    for (const c of decision.candidates) {
      expect(c.note).toBeUndefined();
      expect(c.timing!.trainSamples).toBeGreaterThanOrEqual(3);
      expect(c.timing!.rolloutSamples).toBeGreaterThanOrEqual(3);
      expect(c.timing!.trainMs).toBeGreaterThan(0);
      expect(c.timing!.rolloutMs).toBeGreaterThan(0);
      expect(c.timing!.iterationMs).toBeGreaterThan(c.timing!.trainMs);
    }
    const best = [...decision.candidates].sort((a, b) => a.timing!.iterationMs - b.timing!.iterationMs)[0];
    expect(decision.chosen).toBe(best.id);
    expect(engine.name).toBe(best.id);
  });
});
