/**
 * A worker's death as a signal that each call subscribes to and unsubscribes from when it
 * settles. Racing every call against one long-lived `died` promise instead leaves a handler per
 * call on that promise for the worker's whole life, and each handler keeps its call's result
 * reachable: with rollout workers that was every collected batch (+0.58 MB heap per iteration).
 */

export class DeathSignal {
  private cause: Error | null = null;
  private readonly listeners = new Set<(e: Error) => void>();

  /** Why the worker died, or null while it lives. */
  get reason(): Error | null {
    return this.cause;
  }

  /** Marks the worker dead (the first cause wins) and fails every call waiting on it. */
  fail(e: Error): void {
    if (this.cause) return;
    this.cause = e;
    const ls = [...this.listeners];
    this.listeners.clear();
    for (const l of ls) l(e);
  }

  /** Calls `listener` once the worker dies (at once if it has); returns the unsubscribe. */
  on(listener: (e: Error) => void): () => void {
    if (this.cause) {
      listener(this.cause);
      return () => undefined;
    }
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  /** Calls waiting on this worker now (diagnostics and the leak test). */
  get waiting(): number {
    return this.listeners.size;
  }
}

export interface GuardOptions {
  /** Fail the call after this many ms without an answer (0 or absent: no deadline). */
  deadlineMs?: number;
  /** What the call is, for the timeout message, e.g. 'rollout worker 3: collect'. */
  what?: string;
  /** Runs when the deadline passes (e.g. terminate the worker and fail its death signal). */
  onTimeout?: (e: Error) => void;
}

/**
 * `call`, failed early when the worker dies or the deadline passes. Once it settles nothing of
 * it stays subscribed, so a long-lived worker accumulates nothing per call.
 */
export function guardCall<T>(call: Promise<T>, death: DeathSignal, o: GuardOptions = {}): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let done = false;
    let off: () => void = () => undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const settle = (f: () => void) => {
      if (done) return;
      done = true;
      off();
      if (timer !== undefined) clearTimeout(timer);
      f();
    };
    off = death.on((e) => settle(() => reject(e)));
    if (done) return;
    const ms = o.deadlineMs ?? 0;
    if (ms > 0 && Number.isFinite(ms)) {
      timer = setTimeout(() => {
        const e = new Error(`${o.what ?? 'worker call'}: no answer within ${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s (the worker is hung or overloaded)`);
        settle(() => reject(e));
        o.onTimeout?.(e);
      }, ms);
    }
    call.then(
      (v) => settle(() => resolve(v)),
      (e: unknown) => settle(() => reject(e)),
    );
  });
}
