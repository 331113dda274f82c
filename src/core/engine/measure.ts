/**
 * Times one engine on a run's workload (shape.ts) within a wall-clock budget: build a learner
 * and a rollout runner, run each once untimed (first calls compile kernels and allocate), then
 * alternate timed train steps and rollout calls until the budget is spent or enough samples
 * are in. Synthetic batches and zero-filled inputs: timings do not depend on the values.
 */
import { syntheticBatch } from '../update/syntheticBatch.ts';
import { initWeights } from '../models/types.ts';
import { buildTrainStep } from '../update/trainStep.ts';
import type { Engine, Feed } from './types.ts';
import type { ProbeShape } from './shape.ts';

export interface EngineTiming {
  /** Engine name, e.g. 'ort-web-wasm'. */
  engine: string;
  /** Building the sessions plus the untimed first calls, ms. */
  setupMs: number;
  /** Warm ms per train step (warmEstimate); NaN when none was timed. */
  trainMs: number;
  /** Warm ms per rollout call; NaN when none was timed or rollouts run elsewhere. */
  rolloutMs: number;
  /** Timed samples behind each figure. */
  trainSamples: number;
  rolloutSamples: number;
  /** Estimated ms per iteration: trainMs × steps + rolloutMs × calls (shape.ts counts). */
  iterationMs: number;
  /** Wall time of the whole measurement, ms. */
  totalMs: number;
}

export interface MeasureOptions {
  /** Wall-clock budget for this engine, ms (setup included); `minSamples` are taken even past it. */
  budgetMs: number;
  /** Stop early once this many timed samples of each kind are in (default 12). */
  maxSamples?: number;
  /** Take at least this many timed samples of each kind, budget or not (default 3). */
  minSamples?: number;
  /** Clock in ms (default performance.now). */
  now?: () => number;
}

/**
 * The fastest of the later half of the samples. WASM engines start on baseline-compiled code and
 * speed up as hot functions are re-compiled (seen: 120 → 45 → 32 → 15 ms over the first five
 * steps of a grid learner), and that warm speed is what a run of many iterations sees; the
 * minimum, not the median, because on a busy machine other work only ever adds time.
 */
export function warmEstimate(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  return Math.min(...xs.slice(Math.floor(xs.length / 2)));
}

/** Combines per-call times into the estimated cost of one iteration (ms). */
export function iterationCost(shape: Pick<ProbeShape, 'trainStepsPerIteration' | 'rolloutCallsPerIteration'>, trainMs: number, rolloutMs: number): number {
  return trainMs * shape.trainStepsPerIteration + (shape.rolloutCallsPerIteration > 0 ? rolloutMs * shape.rolloutCallsPerIteration : 0);
}

export async function measureEngine(engine: Engine, shape: ProbeShape, options: MeasureOptions): Promise<EngineTiming> {
  const now = options.now ?? (() => performance.now());
  const maxSamples = options.maxSamples ?? 12;
  const minSamples = Math.min(options.minSamples ?? 3, maxSamples);
  const t0 = now();
  const weights = initWeights(shape.model, 1);
  const learner = await engine.createLearner(shape.model, shape.train, weights);
  const batch = syntheticBatch(buildTrainStep(shape.model, shape.train), 2) as Record<string, Feed>;
  const timesRollout = shape.rolloutCallsPerIteration > 0;
  let rollout: (() => Promise<unknown>) | null = null;
  let release: () => Promise<void> = async () => undefined;
  if (timesRollout) {
    const r = shape.rollout;
    const rows = r.rows;
    if (r.kind === 'decode') {
      const decoder = await engine.createDecoder(shape.model, rows, weights);
      const tokens = new Int32Array(rows);
      const pos = new Int32Array(rows);
      let p = 0;
      // Walk positions forward so the attention span grows as in a real episode, wrapping at the context.
      rollout = () => {
        pos.fill(p);
        p = (p + 1) % Math.min(decoder.context, 64);
        if (p === 0) decoder.reset();
        return decoder.next(tokens, pos);
      };
      release = () => decoder.release();
    } else {
      const policy = await engine.createPolicy(shape.model, rows, weights);
      const obs = new Float32Array(rows * r.obsDim);
      rollout = () => policy.run({ obs });
      release = () => policy.release();
    }
  }
  const trainTimes: number[] = [];
  const rolloutTimes: number[] = [];
  try {
    await learner.step(batch);
    if (rollout) await rollout();
    const setupMs = now() - t0;
    const timed = async (fn: () => Promise<unknown>, into: number[]) => {
      const s = now();
      await fn();
      into.push(now() - s);
    };
    for (;;) {
      await timed(() => learner.step(batch), trainTimes);
      if (rollout) await timed(rollout, rolloutTimes);
      const have = rollout ? Math.min(trainTimes.length, rolloutTimes.length) : trainTimes.length;
      if (have >= maxSamples || (have >= minSamples && now() - t0 >= options.budgetMs)) break;
    }
    const trainMs = warmEstimate(trainTimes);
    const rolloutMs = rollout ? warmEstimate(rolloutTimes) : NaN;
    return {
      engine: engine.name,
      setupMs,
      trainMs,
      rolloutMs,
      trainSamples: trainTimes.length,
      rolloutSamples: rolloutTimes.length,
      iterationMs: iterationCost(shape, trainMs, rolloutMs),
      totalMs: now() - t0,
    };
  } finally {
    await learner.release();
    await release();
  }
}
