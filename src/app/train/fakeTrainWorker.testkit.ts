/**
 * A training worker for the store's unit tests: the real loop (core's runTraining with a
 * RunControl, as the worker runs it) over a scripted `step`, without ONNX or a Worker.
 */
import { runTraining, TrainerEvents } from '../../core/trainer/events.ts';
import { RunControl, type RunCommand } from '../../core/trainer/runControl.ts';
import type { IterationView, RunEvent, RunOptions } from '../../runtime/trainWorker/types.ts';

export interface FakeWorkerHooks {
  start?: (...args: unknown[]) => void;
  /** One iteration of the fake trainer. */
  step: () => Promise<IterationView>;
  setHyper?: (h: unknown) => void;
}

export function fakeTrainWorkerModule(hooks: () => FakeWorkerHooks) {
  let control: RunControl | null = null;
  let trained = 0;
  const api = {
    start: async (...args: unknown[]) => {
      control?.command('stop');
      control = null;
      trained = 0;
      hooks().start?.(...args);
      return { engine: 'fake', setupS: 0, params: 10, canCheckpoint: false, iteration: 0 };
    },
    async run(o: RunOptions, onEvent: (e: RunEvent) => void | Promise<void>) {
      const c = new RunControl(o.iterations, { steps: o.mode === 'step' ? 1 : 0 });
      control = c;
      const events = new TrainerEvents();
      let view: IterationView | null = null;
      let answered: Promise<void> | void = undefined;
      events.on('iteration', () => {
        if (control === c && view) answered = onEvent({ type: 'iteration', view });
      });
      events.on('error', (e) => {
        if (control === c) void onEvent({ type: 'error', iteration: e.iteration, message: e.message });
      });
      const trainer = {
        async step() {
          view = await hooks().step();
          trained = view.iteration + 1;
          return { iteration: view.iteration, metrics: view.metrics, episodes: [], episodeRewards: [], episodeAdvantages: [], allApplied: view.allApplied };
        },
      };
      const r = await runTraining(trainer, events, {
        iterations: o.iterations,
        control: c,
        stopAtSuccess: o.stopAtSuccess,
        trajectories: 0,
        afterIteration: async () => {
          await answered;
        },
        onHold: async (reason) => {
          if (control === c) await onEvent({ type: 'held', reason, iteration: trained });
        },
      });
      return r.reason;
    },
    command: async (c: RunCommand) => control?.command(c),
    setHyper: async (h: unknown) => hooks().setHyper?.(h),
  };
  return {
    workerStarting: <T>(work: Promise<T>) => work,
    trainWorker: () => api,
    terminateTrainWorker: () => {
      control?.command('stop');
      control = null;
    },
    // Retiring stops the run as terminating does; the fake keeps its (stateless) api for the next run.
    retireTrainWorker: async () => {
      control?.command('stop');
      control = null;
    },
  };
}
