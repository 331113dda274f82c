/**
 * Typed trainer events: what a training run tells the outside world, so the CLI,
 * the browser worker and tests consume one stream instead of each re-deriving it from `step()`.
 *
 *   iteration      one object with the metric keys of ARCHITECTURE.md (+ trainer extras), every iteration
 *   trajectories   sampled episodes of the iteration, each with the reward its advantage compared
 *                  and that advantage (what the learner saw: ids, log-probs, versions)
 *   update-skipped the NaN guard skipped at least one update (no NaN reached the weights)
 *   error          a step threw; the run stops (the trainer is left as it was)
 *   held           a controlled run (RunControl) came to rest between iterations: paused, at its
 *                  budget or at its success target; it goes on when a command says so
 *   stopped        why the run ended: iteration budget, success target, stop request, or error
 *
 * `runTraining` drives any trainer (grid or token, sync or async) and emits them in that order
 * per iteration. The CLI and the browser's training worker both run it: the worker with a
 * RunControl, so the page's pause / step / stop / "train N more" / live iteration count act between two iterations.
 */
import type { BranchLink } from '../algos/treeAdvantages.ts';
import type { StepEpisode } from '../rollout/stepEpisode.ts';
import type { TokenEpisode } from '../rollout/tokenEpisode.ts';
import type { LensSample } from '../update/lensSample.ts';
import type { SteppableTrainer } from './api.ts';
import type { HoldReason, RunControl } from './runControl.ts';

export interface SampledEpisode {
  episode: StepEpisode | TokenEpisode;
  /** Total shaped reward: what the advantage compared. */
  reward: number;
  advantage: number;
}

export type StopReason = 'iterations' | 'success' | 'requested' | 'error';

export type TrainerEvent =
  | { type: 'iteration'; iteration: number; metrics: Readonly<Record<string, number>>; allApplied: boolean; wallS: number; batch: IterationBatch }
  | { type: 'trajectories'; iteration: number; episodes: readonly SampledEpisode[] }
  | { type: 'update-skipped'; iteration: number; message: string }
  | { type: 'error'; iteration: number; message: string; error: unknown }
  | { type: 'held'; reason: HoldReason; iterations: number }
  | { type: 'stopped'; reason: StopReason; iterations: number; wallS: number };

/** Every episode the iteration trained on, with its shaped reward and advantage (index-aligned). */
export interface IterationBatch {
  episodes: readonly (StepEpisode | TokenEpisode)[];
  episodeRewards: ArrayLike<number>;
  episodeAdvantages: ArrayLike<number>;
  /** [episode][action] each action's advantage (IterationReport.episodeTurnAdvantages); absent when none was computed. */
  episodeTurnAdvantages?: readonly ArrayLike<number>[];
  /** Tree rollouts' branch links (IterationReport.branches). */
  branches?: readonly BranchLink[];
  /** The loss lens's sample (IterationReport.lens). */
  lens?: LensSample;
}

export type TrainerEventType = TrainerEvent['type'];
export type TrainerEventOf<K extends TrainerEventType> = Extract<TrainerEvent, { type: K }>;

export interface RunTrainingOptions {
  /** Iterations to run (≥ 0); with `control`, the control's budget counts instead. */
  iterations: number;
  /**
   * Commands from outside (pause, step, stop, a new budget): the run holds where it would otherwise end
   * (budget, success) and ends only when stopped. See runControl.ts.
   */
  control?: RunControl;
  /** Awaited when a controlled run comes to rest (after its `held` event), the trainer between steps. */
  onHold?: (reason: HoldReason, iterations: number) => void | Promise<void>;
  /** Stop once the mean `episode/success_rate` of the last 3 iterations reaches this; null = never. */
  stopAtSuccess?: number | null;
  /** Sampled episodes per `trajectories` event (0 = no such events). Default 4. */
  trajectories?: number;
  /** Checked before each iteration: true ends the run with reason 'requested'. */
  shouldStop?: () => boolean;
  /**
   * Consecutive iterations whose updates were all skipped (non-finite loss, gradient or new
   * weights) before the run stops with an error: nothing is being learnt. Default 5.
   */
  maxSkippedInARow?: number;
  /**
   * Awaited after each iteration's events, while the trainer is between steps: where a caller
   * saves a checkpoint. A throw ends the run with an `error` event (the trainer is unchanged).
   */
  afterIteration?: (iteration: number) => void | Promise<void>;
}

/** Default for RunTrainingOptions.maxSkippedInARow. */
export const MAX_SKIPPED_IN_A_ROW = 5;

/**
 * `stopAtSuccess`: true once the mean `episode/success_rate` of the last 3 iterations (`recent`,
 * oldest first; fewer than 3 = not yet) reaches `threshold` (null = never). The CLI's loop and
 * the tab's read the same rule.
 */
export function successReached(recent: readonly number[], threshold: number | null | undefined): boolean {
  if (threshold == null || recent.length < 3) return false;
  const last = recent.slice(-3);
  return last.reduce((a, b) => a + b, 0) / 3 >= threshold;
}

/** Why a run whose updates keep being skipped stops (the CLI and the tab say the same). */
export function skippedRunMessage(n: number): string {
  return `the last ${n} iterations' updates were all skipped: the loss, the gradient or the updated weights were not finite (NaN or ±Inf), so no weight changed. The run stops; lower the learning rate or the reward scale, or raise Adam's ε`;
}

/**
 * A macrotask between iterations: a training loop of promises that never wait on I/O (WASM
 * runs resolve at once) would otherwise starve timers and signal handlers (Ctrl-C in the CLI).
 */
const yieldToEventLoop = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/** A typed listener registry. */
export class TrainerEvents {
  private readonly listeners = new Map<TrainerEventType, ((e: TrainerEvent) => void)[]>();

  on<K extends TrainerEventType>(type: K, listener: (e: TrainerEventOf<K>) => void): () => void {
    const list = this.listeners.get(type) ?? [];
    const l = listener as (e: TrainerEvent) => void;
    list.push(l);
    this.listeners.set(type, list);
    return () => {
      const i = list.indexOf(l);
      if (i >= 0) list.splice(i, 1);
    };
  }

  emit(e: TrainerEvent): void {
    for (const l of this.listeners.get(e.type) ?? []) l(e);
  }
}

/**
 * Runs `trainer` and reports through `events`. Resolves with the stop event (never rejects: a
 * failing step becomes an `error` event followed by `stopped` with reason 'error').
 */
export async function runTraining(trainer: SteppableTrainer, events: TrainerEvents, o: RunTrainingOptions): Promise<TrainerEventOf<'stopped'>> {
  const t0 = performance.now();
  const recent: number[] = [];
  const keep = o.trajectories ?? 4;
  let done = 0;
  let reason: StopReason = 'iterations';
  let skippedInARow = 0;
  const maxSkipped = o.maxSkippedInARow ?? MAX_SKIPPED_IN_A_ROW;
  const c = o.control;
  /** stopAtSuccess met by the last 3 iterations: the CLI's run ends, a controlled one holds. */
  let reached = false;
  for (;;) {
    if (!c && done >= o.iterations) break;
    if (done > 0) await yieldToEventLoop();
    if (o.shouldStop?.()) {
      reason = 'requested';
      break;
    }
    if (c) {
      const go = await c.next(done, reached, async (why) => {
        events.emit({ type: 'held', reason: why, iterations: done });
        await o.onHold?.(why, done);
      });
      if (!go) {
        reason = 'requested';
        break;
      }
      // Going on past the success target: it needs 3 fresh iterations to be met again.
      if (reached) recent.length = 0;
      reached = false;
    }
    const ts = performance.now();
    let r: Awaited<ReturnType<SteppableTrainer['step']>>;
    try {
      r = await trainer.step();
    } catch (error) {
      events.emit({ type: 'error', iteration: done, message: error instanceof Error ? error.message : String(error), error });
      reason = 'error';
      break;
    }
    done++;
    events.emit({ type: 'iteration', iteration: r.iteration, metrics: r.metrics, allApplied: r.allApplied, wallS: (performance.now() - ts) / 1000, batch: r });
    if (!r.allApplied) events.emit({ type: 'update-skipped', iteration: r.iteration, message: 'a loss, gradient or updated weight was not finite: the NaN guard skipped the update and kept every weight' });
    skippedInARow = r.allApplied ? 0 : skippedInARow + 1;
    if (skippedInARow >= maxSkipped) {
      const message = skippedRunMessage(skippedInARow);
      events.emit({ type: 'error', iteration: r.iteration, message, error: new Error(message) });
      reason = 'error';
      break;
    }
    if (keep > 0 && r.episodes.length > 0) {
      const n = Math.min(keep, r.episodes.length);
      events.emit({
        type: 'trajectories',
        iteration: r.iteration,
        episodes: Array.from({ length: n }, (_, k) => ({ episode: r.episodes[k], reward: r.episodeRewards[k], advantage: r.episodeAdvantages[k] })),
      });
    }
    if (o.afterIteration) {
      try {
        await o.afterIteration(r.iteration);
      } catch (error) {
        events.emit({ type: 'error', iteration: r.iteration, message: error instanceof Error ? error.message : String(error), error });
        reason = 'error';
        break;
      }
    }
    recent.push(r.metrics['episode/success_rate'] ?? 0);
    if (recent.length > 3) recent.shift();
    if (successReached(recent, o.stopAtSuccess)) {
      reached = true;
      if (c) continue;
      reason = 'success';
      break;
    }
  }
  const stopped: TrainerEventOf<'stopped'> = { type: 'stopped', reason, iterations: done, wallS: (performance.now() - t0) / 1000 };
  events.emit(stopped);
  return stopped;
}
