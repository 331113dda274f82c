/**
 * Stepping on a clock. A tool env reports how long each step took in its simulated world
 * (`info.latencyMs`, drawn from its seeded RNG); `stepTimed` makes the caller wait that long on
 * the given clock. With `RealClock` a UI shows the real feel of a slow, flaky service; with
 * `VirtualClock` tests and headless runs cover seconds of simulated waiting in microseconds and
 * stay reproducible.
 */
import type { Clock } from '../clock.ts';
import type { Env, StepResult } from '../types.ts';

/** `env.step(action)`, then sleep `info.latencyMs` (0 when absent) on `clock`. */
export async function stepTimed<O, A>(env: Env<O, A>, action: A, clock: Clock): Promise<StepResult<O>> {
  const result = env.step(action);
  await clock.sleep(result.info.latencyMs ?? 0);
  return result;
}
