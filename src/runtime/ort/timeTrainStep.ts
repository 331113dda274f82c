/**
 * Time train steps of a model preset on an injected ORT module (median of `runs` after
 * `warmup` steps). Used by the tests' timing report and by the bench.
 */
import { buildTrainStep } from '../../core/update/trainStep.ts';
import { MODEL_PRESETS } from '../../core/models/presets.ts';
import { countParams, initWeights } from '../../core/models/types.ts';
import { syntheticBatch } from '../../core/update/syntheticBatch.ts';
import { TrainSession, type OrtModule, type OrtSessionOptions } from './session.ts';

export interface TrainStepTiming {
  preset: string;
  params: number;
  /** Milliseconds per step: median, min, max over the timed runs. */
  medianMs: number;
  minMs: number;
  maxMs: number;
  /** Session creation time (graph serialisation + ORT init), ms. */
  createMs: number;
}

export async function timeTrainStep(ort: OrtModule, presetId: string, opts: { runs?: number; warmup?: number; session?: OrtSessionOptions } = {}): Promise<TrainStepTiming> {
  const preset = MODEL_PRESETS[presetId];
  if (!preset) throw new RangeError(`unknown preset '${presetId}'`);
  const model = preset.make();
  const spec = buildTrainStep(model, { batch: preset.benchBatch, loss: { kind: 'policy-gradient' } });
  const t0 = performance.now();
  const s = await TrainSession.create(ort, spec, initWeights(model, 1), opts.session);
  const createMs = performance.now() - t0;
  const batches = [0, 1, 2, 3].map((i) => syntheticBatch(spec, i));
  for (let i = 0; i < (opts.warmup ?? 3); i++) await s.step(batches[i % 4]);
  const times: number[] = [];
  for (let i = 0; i < (opts.runs ?? 20); i++) {
    const t = performance.now();
    await s.step(batches[i % 4]);
    times.push(performance.now() - t);
  }
  await s.release();
  times.sort((a, b) => a - b);
  return { preset: presetId, params: countParams(model), medianMs: times[times.length >> 1], minMs: times[0], maxMs: times[times.length - 1], createMs };
}
