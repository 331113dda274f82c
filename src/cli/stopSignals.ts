/**
 * The CLI's stop signals. The first Ctrl-C (SIGINT), SIGTERM or SIGHUP asks the run to stop after
 * the iteration in flight and write every output; a second one of any kind quits at once, saying
 * what the --out folder holds at that moment.
 */

/**
 * Signals that stop a run as Ctrl-C does, each with its exit status (the shell's convention,
 * 128 + the signal's number): the outputs were written and checkpoint.json resumes the run.
 */
export const STOP_SIGNALS = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const;

export type StopSignal = keyof typeof STOP_SIGNALS;

/** Exit status after Ctrl-C (128 + SIGINT): outputs were written. */
export const EXIT_INTERRUPTED = STOP_SIGNALS.SIGINT;

/**
 * Listens for the stop signals: the first calls `onStop` (the run then stops after its iteration
 * and writes its outputs), a second one of any kind prints `quitMessage(sig)` and quits at once
 * with its status. `dispose` restores the default handling.
 */
export function listenForStop(onStop: (sig: StopSignal) => void, quitMessage: (sig: StopSignal) => string): { dispose: () => void } {
  const names = Object.keys(STOP_SIGNALS) as StopSignal[];
  const quitNow = (sig: StopSignal) => {
    // Writes to a pipe or a file are synchronous in Node, so the line is out before the exit.
    console.log(quitMessage(sig));
    process.exit(STOP_SIGNALS[sig]);
  };
  const first = (sig: StopSignal) => {
    for (const n of names) {
      process.off(n, first);
      process.on(n, quitNow);
    }
    // A hung-up terminal fails writes to it: the outputs are files, so carry on without it.
    if (sig === 'SIGHUP') for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
    onStop(sig);
  };
  for (const n of names) process.on(n, first);
  return {
    dispose: () => {
      for (const n of names) {
        process.off(n, first);
        process.off(n, quitNow);
      }
    },
  };
}

/**
 * A macrotask turn (setImmediate: no timer delay), so signal handlers run. A loop of promises
 * that never waits on I/O (a WASM learner's steps resolve at once) runs wholly in microtasks and
 * would otherwise hold every signal until it ends: the imitation warm start runs minutes so.
 */
export const letSignalsIn = () => new Promise<void>((resolve) => setImmediate(resolve));
