/** Session layer: state carried in place, weight sync, hyperparameter edits, two runtimes agree. */
import { describe, expect, it } from 'vitest';
import * as ortNode from 'onnxruntime-node';
import * as ortWeb from 'onnxruntime-web';
import { buildPolicyGraph, buildTrainStep } from '../../core/graph/train.ts';
import { MlpPolicy } from '../../core/models/mlp.ts';
import { initWeights } from '../../core/models/types.ts';
import { syntheticBatch } from '../../core/models/synthetic.ts';
import { PolicySession, TrainSession, type OrtModule } from './session.ts';
import { maxAbsDiff } from './testUtil.ts';

ortWeb.env.wasm.numThreads = 1;
const node = ortNode as unknown as OrtModule;
const web = ortWeb as unknown as OrtModule;

const model = new MlpPolicy({ obsDim: 10, hidden: [16, 16], numActions: 5, valueHead: true });
const spec = buildTrainStep(model, { batch: 16, loss: { kind: 'policy-gradient', entropyCoef: 0.01 }, adam: { lr: 1e-2 } });

describe('TrainSession', () => {
  it('ort-web WASM and onnxruntime-node agree over 5 chained steps', async () => {
    const w = initWeights(model, 1);
    const a = await TrainSession.create(web, spec, w);
    const b = await TrainSession.create(node, spec, w);
    for (let i = 0; i < 5; i++) {
      const batch = syntheticBatch(spec, i);
      const ra = await a.step(batch);
      const rb = await b.step(batch);
      for (const k of Object.keys(ra.metrics)) expect(ra.metrics[k], k).toBeCloseTo(rb.metrics[k], 4);
    }
    const wa = await a.getWeights();
    const wb = await b.getWeights();
    for (const p of model.params) expect(maxAbsDiff(wa[p.name], wb[p.name])).toBeLessThan(1e-4);
    expect(a.version).toBe(5);
    expect(await a.adamStep()).toBe(5);
  });

  it('keeps state as runtime tensors: outputs become the next inputs, weights move', async () => {
    const w = initWeights(model, 2);
    const s = await TrainSession.create(web, spec, w);
    const before = s.paramTensors()['l0.w'];
    await s.step(syntheticBatch(spec, 1));
    const after = s.paramTensors()['l0.w'];
    expect(after).not.toBe(before);
    expect(maxAbsDiff(before.data as Float32Array, w['l0.w'])).toBe(0); // the input was not mutated
    expect(maxAbsDiff(after.data as Float32Array, w['l0.w'])).toBeGreaterThan(1e-4);
  });

  it('setWeights resets Adam by default; getWeights returns copies', async () => {
    const s = await TrainSession.create(node, spec, initWeights(model, 3));
    await s.step(syntheticBatch(spec, 1));
    const w = await s.getWeights();
    w['l0.w'][0] += 1; // must not leak into the session
    expect((await s.getWeights())['l0.w'][0]).not.toBe(w['l0.w'][0]);
    s.setWeights(w);
    expect(await s.adamStep()).toBe(0);
    expect((await s.getWeights())['l0.w'][0]).toBe(w['l0.w'][0]);
  });

  it('a zero learning rate leaves weights unchanged; hyperparameters are live', async () => {
    const w = initWeights(model, 4);
    const s = await TrainSession.create(node, spec, w);
    s.hyper.lr = 0;
    await s.step(syntheticBatch(spec, 1));
    expect(maxAbsDiff((await s.getWeights())['l1.w'], w['l1.w'])).toBe(0);
    s.hyper.lr = 1e-2;
    await s.step(syntheticBatch(spec, 1));
    expect(maxAbsDiff((await s.getWeights())['l1.w'], w['l1.w'])).toBeGreaterThan(1e-4);
  });

  it('rejects malformed batches with the input name', async () => {
    const s = await TrainSession.create(node, spec, initWeights(model, 5));
    const bad = syntheticBatch(spec, 1);
    bad.actions = new Float32Array(16);
    await expect(s.step(bad)).rejects.toThrow(/'actions' must be a Int32Array/);
    const short = syntheticBatch(spec, 1);
    short.obs = new Float32Array(3);
    await expect(s.step(short)).rejects.toThrow(/'obs' has 3 values/);
  });
});

describe('PolicySession', () => {
  it('zero-copy weight sync from the trainer gives the same outputs as copied weights', async () => {
    const s = await TrainSession.create(web, spec, initWeights(model, 6));
    await s.step(syntheticBatch(spec, 1));
    const pol = await PolicySession.create(web, buildPolicyGraph(model, 16), initWeights(model, 6));
    const obs = syntheticBatch(spec, 2).obs as Float32Array;
    pol.setWeightTensors(s.paramTensors(), s.version);
    const viaTensors = await pol.run({ obs });
    pol.setWeights(await s.getWeights(), s.version);
    const viaCopy = await pol.run({ obs });
    expect(pol.version).toBe(1);
    expect(maxAbsDiff(viaTensors.logprobs, viaCopy.logprobs)).toBe(0);
  });
});
