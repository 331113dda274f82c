/**
 * Times a few iterations of each distinct lesson shape (lessonEstimate.ts) in one probe training
 * worker, as Start would run them: the same worker code, createTrainer, WASM with the learner's
 * threads. One worker for all shapes, so the runtime loads once (its load is counted in the first
 * shape's setup, as a student's first Start pays it too).
 */
import { proxy } from 'comlink';
import type { RunConfig } from '../../core/presets/schema.ts';
import { learnerThreads } from '../../core/engine/threads.ts';
import type { BackendReport } from '../../runtime/backend.ts';
import type { RunEvent } from '../../runtime/trainWorker/types.ts';
import { withProbeWorker } from '../train/client.ts';
import type { Shape, ShapeTiming } from './lessonEstimate.ts';

/** Most iterations timed per shape: the first is kept (a lesson pays it too); 3 give a median and a range. */
export const ITERATIONS_PER_SHAPE = 3;
/** Fewest iterations timed per shape (a range needs 2; a shape whose first iteration alone used the budget gets 1). */
export const MIN_ITERATIONS = 2;
/** Once a shape's iterations took this many seconds together it stops (after 1 iteration if that one did), so 8 shapes fit in 30 s on a slow laptop. */
export const SHAPE_ITER_BUDGET_S = 1.2;
/** Imitation warm-start steps timed (the lessons run 300; their time per step is steady after the first). */
export const WARM_STEPS_TIMED = 4;
/** Seconds after which no further shape is started. */
export const SHAPE_DEADLINE_S = 24;
/** Seconds after which the timing worker is ended, whatever it is doing: the check's limit (30 s with the page's own work). */
export const HARD_LIMIT_S = 28;

export interface ShapeResult {
  shape: Shape;
  timing: ShapeTiming | null;
  error?: string;
}

/** The config the check runs for a shape: its iterations cut to ITERATIONS_PER_SHAPE, its warm start to WARM_STEPS_TIMED. */
export function probeConfig(c: RunConfig): RunConfig {
  return { ...c, iterations: ITERATIONS_PER_SHAPE, warmStart: c.warmStart ? { ...c.warmStart, steps: Math.min(c.warmStart.steps, WARM_STEPS_TIMED) } : null };
}

/**
 * Times each shape in turn, reporting each as it ends. No shape starts after SHAPE_DEADLINE_S, and
 * at HARD_LIMIT_S the worker is ended mid-iteration (its finished iterations are kept), so the
 * check never runs past 30 s, however slow the laptop.
 */
export async function timeShapes(shapes: readonly Shape[], report: BackendReport, onEach: (r: ShapeResult) => void, startedAt = performance.now()): Promise<void> {
  const elapsedS = () => (performance.now() - startedAt) / 1000;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hardStop = new Promise<'stop'>((ok) => (timer = setTimeout(() => ok('stop'), Math.max(0, HARD_LIMIT_S - elapsedS()) * 1000)));
  try {
    await withProbeWorker(async (w) => {
      for (let i = 0; i < shapes.length; i++) {
        const shape = shapes[i];
        if (elapsedS() > SHAPE_DEADLINE_S) {
          onEach({ shape, timing: null, error: `not reached within the check's ${HARD_LIMIT_S} s` });
          continue;
        }
        const got: { iterS: number[]; setupS: number; warmStepS: number } = { iterS: [], setupS: 0, warmStepS: 0 };
        try {
          const ended = await Promise.race([timeOne(w, shape, report, got).then(() => 'done' as const), hardStop]);
          if (ended === 'stop') {
            // The worker is ended by withProbeWorker on return: keep what finished, skip the rest.
            onEach(got.iterS.length ? { shape, timing: got } : { shape, timing: null, error: `not finished within the check's ${HARD_LIMIT_S} s` });
            for (const rest of shapes.slice(i + 1)) onEach({ shape: rest, timing: null, error: `not reached within the check's ${HARD_LIMIT_S} s` });
            return;
          }
          if (got.iterS.length === 0) throw new Error('no iteration finished');
          onEach({ shape, timing: got });
        } catch (e) {
          onEach({ shape, timing: null, error: (e as Error).message });
        }
      }
    });
  } finally {
    clearTimeout(timer);
  }
}

/** Starts `shape` in the worker and times its warm start and iterations into `got` as they finish. */
async function timeOne(w: Parameters<Parameters<typeof withProbeWorker>[0]>[0], shape: Shape, report: BackendReport, got: ShapeTiming): Promise<void> {
  const cfg = probeConfig(shape.config);
  const threads = learnerThreads({ cores: report.hardwareConcurrency, isolated: report.wasm.crossOriginIsolated, rolloutWorkers: (cfg.rollout as { workers?: number }).workers ?? 0 });
  // Warm-start progress arrives once per step: the time between the first and the last report, per step.
  const warmAt: number[] = [];
  const info = await w.start(cfg, 'wasm', proxy(() => void warmAt.push(performance.now())), threads);
  got.warmStepS = warmAt.length >= 2 ? (warmAt[warmAt.length - 1] - warmAt[0]) / 1000 / (warmAt.length - 1) : 0;
  // The worker's setup time (runtime load, sessions, the timed warm-start steps) without those steps, which the estimate scales per step.
  got.setupS = Math.max(0, info.setupS - warmAt.length * got.warmStepS);
  const iterS = got.iterS;
  // The loop holds at its budget instead of ending (the page's "train N more"): stop it there.
  await w.run(
    { iterations: ITERATIONS_PER_SHAPE, stopAtSuccess: null, mode: 'play' },
    proxy(async (e: RunEvent) => {
      if (e.type === 'iteration') {
        iterS.push(e.view.wallS);
        const spent = iterS.reduce((a, b) => a + b, 0);
        if (spent >= SHAPE_ITER_BUDGET_S && (iterS.length >= MIN_ITERATIONS || iterS[0] >= SHAPE_ITER_BUDGET_S)) return w.command('stop');
      } else if (e.type === 'held') return w.command('stop');
      else if (e.type === 'error') iterS.length = 0;
    }),
  );
}
