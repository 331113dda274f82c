/** Session layer: state carried in place, weight sync, hyperparameter edits, two runtimes agree. */
import { describe, expect, it } from 'vitest';
import * as ortNode from 'onnxruntime-node';
import * as ortWeb from 'onnxruntime-web';
import { buildTrainStep } from '../../core/update/trainStep.ts';
import { buildPolicyGraph } from '../../core/models/policyGraph.ts';
import { MlpPolicy } from '../../core/models/mlp.ts';
import { initWeights } from '../../core/models/types.ts';
import { syntheticBatch } from '../../core/update/syntheticBatch.ts';
import { PolicySession, TrainSession, type OrtModule } from './session.ts';
import { maxAbsDiff } from './test/util.ts';

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

describe('PolicySession with baked weights', () => {
  const graph = buildPolicyGraph(model, 16);
  const wA = initWeights(model, 7);
  const wB = initWeights(model, 8);
  const obs = (i: number) => syntheticBatch(spec, i).obs as Float32Array;

  it('after bakeAfterRuns runs at one set of weights it runs baked, with the fed outputs', async () => {
    const fed = await PolicySession.create(web, graph, wA);
    const pol = await PolicySession.create(web, graph, wA, { bakeAfterRuns: 2 });
    const check = async (i: number) => {
      const [a, b] = [await fed.run({ obs: obs(i) }), await pol.run({ obs: obs(i) })];
      expect(maxAbsDiff(a.logprobs, b.logprobs)).toBeLessThan(1e-6);
      expect(maxAbsDiff(a.value, b.value)).toBeLessThan(1e-6);
    };
    await check(1);
    expect([pol.weightsBaked, pol.bakes]).toEqual([false, 0]);
    await check(2); // the 2nd run at wA builds the baked session and runs on it
    expect([pol.weightsBaked, pol.bakes]).toEqual([true, 1]);
    await check(3);
    // New weights: fed again until their 2nd run, then baked again.
    fed.setWeights(wB, 1);
    pol.setWeights(wB, 1);
    expect(pol.weightsBaked).toBe(false);
    await check(4);
    await check(5);
    expect([pol.weightsBaked, pol.bakes, pol.version]).toEqual([true, 2, 1]);
    // wB ran 4 times (≥ 2 × bakeAfterRuns): the next weights are baked from their first run.
    await check(6);
    await check(7);
    fed.setWeights(wA, 2);
    pol.setWeights(wA, 2);
    await check(8);
    expect([pol.weightsBaked, pol.bakes]).toEqual([true, 3]);
    // Live tensors are never baked (they may be GPU buffers or released by their owner).
    const t = await TrainSession.create(web, spec, wA);
    fed.setWeightTensors(t.paramTensors());
    pol.setWeightTensors(t.paramTensors());
    for (let i = 9; i < 12; i++) await check(i);
    expect([pol.weightsBaked, pol.bakes]).toEqual([false, 3]);
    await pol.release();
  });

  it('weights set while a bake is being built win: that run is fed, the stale bake is dropped', async () => {
    const refB = await PolicySession.create(web, graph, wB);
    const pol = await PolicySession.create(web, graph, wA, { bakeAfterRuns: 1 });
    const pending = pol.run({ obs: obs(1) }); // starts baking wA, then awaits the new session
    pol.setWeights(wB, 1); // as a worker's message handler would, at that await
    const got = await pending;
    expect(maxAbsDiff(got.logprobs, (await refB.run({ obs: obs(1) })).logprobs)).toBeLessThan(1e-6);
    expect([pol.weightsBaked, pol.bakes]).toEqual([false, 1]);
    await pol.run({ obs: obs(2) });
    expect([pol.weightsBaked, pol.bakes]).toEqual([true, 2]);
  });
});
