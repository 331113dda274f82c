/**
 * Drives the real session layer on the native WebGPU EP with state kept in GPU buffers, next to
 * the same session on WASM, and reports what differs: three chained train steps (metrics and
 * weights), the NaN guard on the GPU (a NaN advantage must leave every weight untouched), and
 * five KV-cache decode steps. Part of the Device check (src/runtime/engine/selfTest.ts), which
 * the Chromium e2e tests run.
 */
import { buildTrainStep } from '../../core/update/trainStep.ts';
import { MODEL_PRESETS } from '../../core/models/presets.ts';
import type { TransformerPolicy } from '../../core/models/transformer.ts';
import { initWeights } from '../../core/models/types.ts';
import { syntheticBatch } from '../../core/update/syntheticBatch.ts';
import { TrainSession, type OrtModule } from './session.ts';
import { KvDecoder } from './kvDecoder.ts';

const gpuOpts = { sessionOptions: { executionProviders: ['webgpu'] }, stateLocation: 'gpu-buffer' as const };
const cpuOpts = { sessionOptions: { executionProviders: ['wasm'] } };

function maxDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

export async function runSessionCheck(ort: OrtModule): Promise<Record<string, number | boolean | string>> {
  const out: Record<string, number | boolean | string> = {};
  const model = MODEL_PRESETS['mlp-76k'].make();
  const spec = buildTrainStep(model, { batch: 16, loss: { kind: 'policy-gradient', entropyCoef: 0.01 } });
  const w = initWeights(model, 1);
  const gpu = await TrainSession.create(ort, spec, w, gpuOpts);
  const cpu = await TrainSession.create(ort, spec, w, cpuOpts);
  let metricDiff = 0;
  for (let i = 0; i < 3; i++) {
    const b = syntheticBatch(spec, i);
    const [rg, rc] = [await gpu.step(b), await cpu.step(b)];
    for (const k of Object.keys(rc.metrics)) metricDiff = Math.max(metricDiff, Math.abs(rg.metrics[k] - rc.metrics[k]));
  }
  out.metricMaxDiff = metricDiff;
  out.stateLocation = gpu.paramTensors()['l0.w'].location;
  const bad = syntheticBatch(spec, 9);
  (bad.advantages as Float32Array)[0] = NaN;
  const before = await gpu.getWeights();
  out.nanApplied = (await gpu.step(bad)).applied;
  const after = await gpu.getWeights();
  out.nanWeightsChanged = model.params.some((p) => maxDiff(before[p.name], after[p.name]) > 0);
  const wc = await cpu.getWeights();
  out.weightMaxDiff = Math.max(...model.params.map((p) => maxDiff(after[p.name], wc[p.name])));
  out.version = gpu.version;
  await gpu.release();
  await cpu.release();

  const tm = MODEL_PRESETS['transformer-tiny'].make() as TransformerPolicy;
  const tw = initWeights(tm, 2);
  const dg = await KvDecoder.create(ort, tm, 2, 1, tw, gpuOpts);
  const dc = await KvDecoder.create(ort, tm, 2, 1, tw, cpuOpts);
  let decodeDiff = 0;
  for (let t = 0; t < 5; t++) {
    const tok = Int32Array.from([t + 5, 2 * t + 7]);
    const pos = Int32Array.from([t, t]);
    decodeDiff = Math.max(decodeDiff, maxDiff((await dg.next(tok, pos)).logprobs, (await dc.next(tok, pos)).logprobs));
  }
  out.decodeMaxDiff = decodeDiff;
  return out;
}
