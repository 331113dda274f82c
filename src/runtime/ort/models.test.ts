/**
 * Models: preset sizes, KV-cache decoding vs full recomputation, rollout vs trainer log-probs
 * for token policies, standalone export loaded by onnxruntime-node, the WebGPU-safe op set, and
 * the protobuf bytes decoded by an independent decoder (onnx-proto).
 */
import { describe, expect, it } from 'vitest';
import * as ortNode from 'onnxruntime-node';
import * as ortWeb from 'onnxruntime-web';
import onnxProto from 'onnx-proto';
import { buildTrainStep } from '../../core/update/trainStep.ts';
import { buildPolicyGraph } from '../../core/models/policyGraph.ts';
import { exportPolicyOnnx } from '../../core/models/export.ts';
import { MlpPolicy } from '../../core/models/mlp.ts';
import { MODEL_PRESETS } from '../../core/models/presets.ts';
import { TransformerPolicy } from '../../core/models/transformer.ts';
import { countParams, initWeights } from '../../core/models/types.ts';
import { syntheticBatch } from '../../core/update/syntheticBatch.ts';
import { VOCAB_SIZE } from '../../core/text/codec.ts';
import { Rng } from '../../core/util/rng.ts';
import { PolicySession, TrainSession, type OrtModule } from './session.ts';
import { KvDecoder } from './kvDecoder.ts';
import { maxAbsDiff } from './test/util.ts';

ortWeb.env.wasm.numThreads = 1;
const node = ortNode as unknown as OrtModule;
const web = ortWeb as unknown as OrtModule;

describe('presets', () => {
  it('mlp-76k and transformer-1m have the documented sizes', () => {
    // 160·256+256 + 256·128+128 + 128·7+7 + 128+1
    expect(countParams(MODEL_PRESETS['mlp-76k'].make())).toBe(75_144);
    const d = 128, f = 512, V = VOCAB_SIZE, L = 5;
    const perLayer = 4 * (d * d + d) + 4 * d + (d * f + f) + (f * d + d);
    expect(countParams(MODEL_PRESETS['transformer-1m'].make())).toBe(V * d + 32 * d + L * perLayer + 2 * d + d * V + V);
    expect(countParams(MODEL_PRESETS['transformer-1m'].make())).toBeGreaterThan(1.0e6);
    expect(countParams(MODEL_PRESETS['transformer-1m'].make())).toBeLessThan(1.05e6);
  });
});

describe('graphs use only kernels that the native WebGPU EP implements', () => {
  // No LogSoftmax (CPU fallback on WebGPU), no Scatter*, no And/Or/Not.
  const allowed = new Set(['Add', 'Sub', 'Mul', 'Div', 'Neg', 'Exp', 'Log', 'Sqrt', 'Tanh', 'Relu', 'Erf', 'Pow', 'Gemm', 'MatMul', 'ReduceSum', 'ReduceMean', 'ReduceMax', 'Softmax', 'Transpose', 'Reshape', 'Concat', 'Slice', 'Pad', 'Gather', 'Where', 'Equal', 'Greater', 'Less', 'Cast', 'Expand', 'Identity']);
  for (const id of ['mlp-76k', 'transformer-1m']) {
    it(`${id}: policy, decode and train-step graphs`, () => {
      const model = MODEL_PRESETS[id].make();
      const graphs = [buildPolicyGraph(model, 2), buildTrainStep(model, { batch: 2, loss: { kind: 'policy-gradient', useReference: true } }).graph];
      if (model instanceof TransformerPolicy) graphs.push(model.buildDecodeGraph(2, 1));
      for (const g of graphs) for (const op of Object.keys(g.opCounts())) expect(allowed.has(op), `${g.name}: ${op}`).toBe(true);
    });
  }
});

describe('ONNX bytes decode with onnx-proto', () => {
  it('opset, IR version, inputs, initializers and node attributes round-trip', () => {
    const model = new MlpPolicy({ obsDim: 3, hidden: [4], numActions: 2 });
    const w = initWeights(model, 1);
    // The decoder's generated types mark every field optional; this is the subset we read.
    interface Dec {
      irVersion: number;
      opsetImport: { version: number }[];
      graph: {
        input: { name: string; type: { tensorType: { shape: { dim: { dimValue: number }[] } } } }[];
        output: { name: string }[];
        initializer: { name: string; dims: number[]; rawData: Uint8Array }[];
        node: { opType: string; attribute: { name: string; i: number }[] }[];
      };
    }
    const m = onnxProto.onnx.ModelProto.decode(exportPolicyOnnx(model, w, { batch: 5 })) as unknown as Dec;
    expect(Number(m.irVersion)).toBe(8);
    expect(Number(m.opsetImport[0].version)).toBe(18);
    expect(m.graph.input.map((i) => i.name)).toEqual(['obs']);
    expect(m.graph.input[0].type.tensorType.shape.dim.map((d) => Number(d.dimValue))).toEqual([5, 3]);
    const init = m.graph.initializer.find((t) => t.name === 'l0.w')!;
    expect(init.dims.map(Number)).toEqual([3, 4]);
    const raw = init.rawData;
    expect(Array.from(new Float32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength)))).toEqual(Array.from(w['l0.w']));
    const reduce = m.graph.node.find((n) => n.opType === 'ReduceMax')!;
    expect(Number(reduce.attribute.find((a) => a.name === 'keepdims')!.i)).toBe(1);
    expect(m.graph.output.map((o) => o.name)).toEqual(['logprobs']);
  });
});

describe('transformer KV-cache decoding', () => {
  const model = new TransformerPolicy({ vocabSize: 17, dModel: 16, nLayers: 2, nHeads: 2, dFF: 32, context: 10, valueHead: true });
  const w = initWeights(model, 3);
  // Larger weights than init so attention is far from uniform and errors would show.
  for (const k of Object.keys(w)) if (!k.includes('ln')) w[k] = w[k].map((x) => x * 8);
  const B = 2;
  const T = 10;
  const rng = new Rng(9);
  const tokens = Int32Array.from({ length: B * T }, () => rng.int(0, 17));

  it('prefill (chunk of 4, padded) + one-token steps equal the full causal pass within 1e-4', async () => {
    const full = await PolicySession.create(web, buildPolicyGraph(model, B), w);
    const ref = await full.run({ tokens });
    const V = 17;
    const chunk = await KvDecoder.create(web, model, B, 4, w);
    const one = await KvDecoder.create(web, model, B, 1, w);
    // Row 0 prefills 4 tokens, row 1 only 3 (its 4th slot is padding that later steps overwrite).
    const pre = Int32Array.from([...tokens.slice(0, 4), ...tokens.slice(T, T + 3), 0]);
    const r0 = await chunk.next(pre, Int32Array.from([0, 0]));
    let worst = 0;
    for (let b = 0; b < B; b++) {
      const n = b === 0 ? 4 : 3;
      for (let s = 0; s < n; s++) worst = Math.max(worst, maxAbsDiff(r0.logprobs.subarray((b * 4 + s) * V, (b * 4 + s + 1) * V), ref.logprobs.subarray((b * T + s) * V, (b * T + s + 1) * V)));
    }
    // Hand the chunk decoder's cache over by replaying the same prefix into the 1-step decoder.
    for (let t = 0; t < T; t++) {
      const r = await one.next(Int32Array.from([tokens[t], tokens[T + t]]), Int32Array.from([t, t]));
      for (let b = 0; b < B; b++) {
        worst = Math.max(worst, maxAbsDiff(r.logprobs.subarray(b * V, (b + 1) * V), ref.logprobs.subarray((b * T + t) * V, (b * T + t + 1) * V)));
        expect(Math.abs(r.value![b] - ref.value[b * T + t])).toBeLessThan(1e-4);
      }
    }
    expect(worst).toBeLessThan(1e-4);
  });

  it('rows at different positions decode independently', async () => {
    const full = await PolicySession.create(web, buildPolicyGraph(model, B), w);
    const ref = await full.run({ tokens });
    const dec = await KvDecoder.create(web, model, B, 1, w);
    // Row 0 is two tokens ahead of row 1 throughout.
    for (let t = 0; t < 2; t++) await dec.next(Int32Array.from([tokens[t], 0]), Int32Array.from([t, 9]));
    let worst = 0;
    for (let t = 0; t + 2 < T; t++) {
      const r = await dec.next(Int32Array.from([tokens[t + 2], tokens[T + t]]), Int32Array.from([t + 2, t]));
      worst = Math.max(worst, maxAbsDiff(r.logprobs.subarray(0, 17), ref.logprobs.subarray((t + 2) * 17, (t + 3) * 17)));
      worst = Math.max(worst, maxAbsDiff(r.logprobs.subarray(17, 34), ref.logprobs.subarray((T + t) * 17, (T + t + 1) * 17)));
    }
    expect(worst).toBeLessThan(1e-4);
  });

  it('sampled rollout log-probs equal the trainer log-probs at the same weights (≤ 1e-5)', async () => {
    const spec = buildTrainStep(model, { batch: B });
    const dec = await KvDecoder.create(web, model, B, 1, w);
    const seq = new Int32Array(B * T);
    const behaviour = new Float32Array(B * T);
    const srng = new Rng(4);
    for (let b = 0; b < B; b++) seq[b * T] = 1;
    for (let t = 0; t < T - 1; t++) {
      const r = await dec.next(Int32Array.from([seq[t], seq[T + t]]), Int32Array.from([t, t]));
      for (let b = 0; b < B; b++) {
        const lp = r.logprobs.subarray(b * 17, (b + 1) * 17);
        let u = srng.random();
        let a = 0;
        while (a < 16 && (u -= Math.exp(lp[a])) > 0) a++;
        seq[b * T + t + 1] = a;
        behaviour[b * T + t] = lp[a];
      }
    }
    const batch = syntheticBatch(spec, 1);
    batch.tokens = seq;
    batch.actions = Int32Array.from(seq, (_, i) => (i % T === T - 1 ? 0 : seq[i + 1]));
    batch.old_logprobs = behaviour;
    batch.mask = Float32Array.from(seq, (_, i) => (i % T === T - 1 ? 0 : 1)); // no target after the last token
    const trainer = await TrainSession.create(web, spec, w);
    const res = await trainer.step(batch);
    let worst = 0;
    for (let i = 0; i < B * T; i++) if (i % T !== T - 1) worst = Math.max(worst, Math.abs(res.logprobs[i] - behaviour[i]));
    expect(worst).toBeLessThanOrEqual(1e-5);
    // Same weights ⇒ ratio 1 everywhere ⇒ approx KL and clip fractions are 0.
    expect(res.metrics['actor/approx_kl']).toBeLessThan(1e-6);
  });
});

describe('standalone policy export', () => {
  it('MLP: onnxruntime-node loads the baked model and matches the training-side policy', async () => {
    const model = MODEL_PRESETS['mlp-76k'].make();
    const spec = buildTrainStep(model, { batch: 8 });
    const trainer = await TrainSession.create(web, spec, initWeights(model, 2));
    for (let i = 0; i < 3; i++) await trainer.step(syntheticBatch(spec, i));
    const w = await trainer.getWeights();
    const obs = syntheticBatch(spec, 99).obs as Float32Array;
    const sideBySide = await PolicySession.create(web, buildPolicyGraph(model, 8), w);
    const mine = await sideBySide.run({ obs });
    const exported = await ortNode.InferenceSession.create(exportPolicyOnnx(model, w, { batch: 8 }));
    expect(exported.inputNames).toEqual(['obs']);
    const theirs = await exported.run({ obs: new ortNode.Tensor('float32', obs, [8, 160]) });
    expect(maxAbsDiff(theirs.logprobs.data as Float32Array, mine.logprobs)).toBeLessThan(1e-5);
    expect(maxAbsDiff(theirs.value.data as Float32Array, mine.value)).toBeLessThan(1e-5);
  });
  it('transformer decode graph exports with weights baked and runs in onnxruntime-node', async () => {
    const model = new TransformerPolicy({ vocabSize: VOCAB_SIZE, dModel: 16, nLayers: 1, nHeads: 2, context: 8 });
    const w = initWeights(model, 5);
    const bytes = exportPolicyOnnx(model, w, { graph: 'decode', batch: 1 });
    const s = await ortNode.InferenceSession.create(bytes);
    expect([...s.inputNames].sort()).toEqual(['past.k.0', 'past.v.0', 'pos', 'tokens']);
    const cache = model.emptyCache(1);
    const res = await s.run({
      tokens: new ortNode.Tensor('int32', Int32Array.of(1), [1, 1]),
      pos: new ortNode.Tensor('int32', Int32Array.of(0), [1]),
      'past.k.0': new ortNode.Tensor('float32', cache['past.k.0'], model.cacheShape(1)),
      'past.v.0': new ortNode.Tensor('float32', cache['past.v.0'], model.cacheShape(1)),
    });
    const ref = await (await PolicySession.create(node, model.buildDecodeGraph(1, 1), w)).run({ tokens: Int32Array.of(1), pos: Int32Array.of(0), ...cache });
    expect(maxAbsDiff(res.logprobs.data as Float32Array, ref.logprobs)).toBeLessThan(1e-6);
  });
});
