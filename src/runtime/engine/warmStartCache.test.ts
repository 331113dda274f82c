/**
 * Shipped warm starts (core/trainer/warmStartCache.ts), on a real tiny warm start (ort-web WASM
 * in Node): the file written from a trained warm start loads back bit-exact, a run of the same
 * config then starts from it without training, and a run that differs in anything the warm start
 * depends on (here the seed, and the warm start's steps) does not find it and trains its own.
 */
import { describe, expect, it } from 'vitest';
import { parseRunConfig, type RunConfig } from '../../core/presets/schema.ts';
import { initialTokenWeights, type WarmStartCache } from '../../core/trainer/createTrainer.ts';
import { warmStartFileName, warmStartFromJson, warmStartKey, warmStartToJson } from '../../core/trainer/warmStartCache.ts';
import { makeTokenModel } from '../../core/models/transformer.ts';
import { loadNodeEngine } from './node.ts';

const TINY = { kind: 'transformer', dModel: 16, nLayers: 1, nHeads: 2, dFF: 32, context: 128 };

function config(over: Record<string, unknown> = {}): RunConfig {
  const r = parseRunConfig({ env: { id: 'tools/calculator' }, model: TINY, warmStart: { steps: 3, batch: 4, lr: 0.003 }, algo: { algo: 'grpo', groupSize: 2 }, rollout: { groups: 2, learnerBatch: 4, maxActionTokens: 8 }, seed: 5, ...over });
  if (!r.ok) throw new Error(r.messages.join('; '));
  return r.config;
}

/** A cache over in-memory files by name; counts the steps the warm start reported. */
function memoryCache(files: Map<string, unknown>) {
  const results: unknown[] = [];
  const cache: WarmStartCache = { read: async (name) => files.get(name), onResult: (r) => results.push(r) };
  return { cache, results };
}

describe('shipped warm starts', () => {
  it('a matching file replaces training with the same weights; another seed or step count trains its own', async () => {
    const engine = await loadNodeEngine('ort-web-wasm');
    const c = config();
    let steps = 0;
    const trained = await initialTokenWeights(c, engine, () => void steps++);
    expect(steps).toBe(3);
    const key = warmStartKey(c)!;
    const file = JSON.parse(JSON.stringify(warmStartToJson(key, trained.weights, { ceLoss: 1, targetProb: 0.5, wallS: 2 }, engine.name)));
    const files = new Map([[warmStartFileName(key), file]]);

    const { cache, results } = memoryCache(files);
    const reports: number[] = [];
    const loaded = await initialTokenWeights(c, engine, (r, total) => void reports.push(r.step + 1, total), cache);
    expect(results).toEqual([{ loaded: true, savedS: 2 }]);
    // One report, at the last step: the page shows the warm start done.
    expect(reports).toEqual([3, 3]);
    for (const [name, w] of Object.entries(trained.weights)) expect(Array.from(loaded.weights[name])).toEqual(Array.from(w));
    expect(loaded.reference).toBe(loaded.weights);

    // A key without the seed (or the steps) would hand this file to these runs: they must train.
    for (const other of [config({ seed: 6 }), config({ warmStart: { steps: 2, batch: 4, lr: 0.003 } })]) {
      let n = 0;
      const o = memoryCache(files);
      await initialTokenWeights(other, engine, () => void n++, o.cache);
      expect(n).toBe(other.warmStart!.steps);
      expect(o.results).toEqual([]);
    }
  }, 60_000);

  it('refuses a file for another key, a wrong tensor size or a non-finite value, saying why', () => {
    const c = config();
    const model = makeTokenModel(c.model as Parameters<typeof makeTokenModel>[0]);
    const key = warmStartKey(c)!;
    const weights = Object.fromEntries(model.params.map((p) => [p.name, new Float32Array(p.shape.reduce((a, b) => a * b, 1)).fill(0.25)]));
    const good = warmStartToJson(key, weights, { ceLoss: 1, targetProb: 0.5, wallS: 1 }, 'x');
    expect(warmStartFromJson(good, key, model).ok).toBe(true);
    expect(warmStartFromJson(good, warmStartKey(config({ seed: 6 }))!, model)).toEqual({ ok: false, reason: 'trained for another configuration (its key differs)' });
    const name = model.params[0].name;
    const short = { ...weights, [name]: new Float32Array(1) };
    expect(warmStartFromJson(warmStartToJson(key, short, { ceLoss: 1, targetProb: 0.5, wallS: 1 }, 'x'), key, model)).toMatchObject({ ok: false, reason: expect.stringContaining(`tensor ${name} has 1 floats`) });
    const nan = { ...weights, [name]: weights[name].map((v, i) => (i === 0 ? NaN : v)) };
    expect(warmStartFromJson(warmStartToJson(key, nan, { ceLoss: 1, targetProb: 0.5, wallS: 1 }, 'x'), key, model)).toMatchObject({ ok: false, reason: expect.stringContaining('non-finite') });
    expect(warmStartKey(config({ warmStart: null }))).toBeNull();
  });
});
