/**
 * Liveness from progress, not from an idle event loop.
 *
 * A worker busy in one long synchronous stretch (scoring a batch of reward terms, an iteration
 * whose inference calls resolve as microtasks, a session build) never turns its event loop, so a
 * ping alone cannot tell it from a dead one: a 5 ms reward term and the default preset at load 13
 * were both declared dead that way. So the worker also *posts* progress from inside its long
 * loops (`progressBeacon`): a worker's postMessage reaches the page at once, whatever the
 * worker's event loop is doing. The page's `Watchdog` counts either sign (an answered probe, a
 * progress message) and declares the worker dead only when it has shown neither for the limit.
 *
 * The same watchdog, with probes only, watches rollout workers (they yield to their event loop
 * between lockstep steps, so a live one answers a probe within milliseconds).
 */

/** The `type` of a progress message (comlink ignores messages without its `id`). */
export const PROGRESS_MESSAGE = 'agentic-rl-playground:progress';

export interface ProgressMessage {
  type: typeof PROGRESS_MESSAGE;
  /** What the worker was doing, e.g. 'scoring reward terms (episodes 9–16 of 64)'. */
  stage: string;
}

export function isProgressMessage(data: unknown): data is ProgressMessage {
  return typeof data === 'object' && data !== null && (data as { type?: unknown }).type === PROGRESS_MESSAGE;
}

/** Reports progress from inside long work; cheap enough to call per inference call. */
export type Progress = (stage: string) => void;

/**
 * Worker side: a `Progress` that posts at most one message per `everyMs` (default 500 ms), so
 * calling it per inference call or per slice costs a clock read.
 */
export function progressBeacon(post: (m: ProgressMessage) => void, o: { everyMs?: number; now?: () => number } = {}): Progress {
  const every = o.everyMs ?? 500;
  const now = o.now ?? (() => performance.now());
  let last = -Infinity;
  return (stage) => {
    const t = now();
    if (t - last < every) return;
    last = t;
    post({ type: PROGRESS_MESSAGE, stage });
  };
}

export interface WatchdogOptions {
  /** Ms without a sign of life after which the worker counts as dead (read at every check: it may change). */
  limitMs: () => number;
  /** Ms between checks (and probes). */
  everyMs: number;
  /** Asks the worker whether it lives; resolves when it answers (a comlink ping). */
  probe?: () => Promise<unknown>;
  /** Called once when the worker is declared dead: how long it was silent, and the last stage it reported. */
  onSilent(silentMs: number, lastStage: string | null): void;
  now?: () => number;
  setInterval?: (fn: () => void, ms: number) => unknown;
  clearInterval?: (handle: unknown) => void;
}

/**
 * Page side: watches one worker. Dead when a probe has been outstanding for `limitMs` and no
 * progress arrived meanwhile, or (without probes) nothing arrived for `limitMs`.
 *
 * Silence is counted from an unanswered probe, not from the last answer: a tab the browser
 * throttles in the background may check once a minute, and the answer to the probe sent at the
 * last check must not read as a minute of silence. A check that runs late (its thread was itself
 * stalled, or the machine slept) judges nothing: messages that arrived meanwhile may still be
 * queued behind it; the next check on time judges.
 */
export class Watchdog {
  private lastSign: number;
  private lastTick: number;
  /** When the probe now waiting for its answer was sent (null: none waiting). */
  private probeSentAt: number | null = null;
  private stage: string | null = null;
  private handle: unknown;
  private stopped = false;
  private readonly now: () => number;

  constructor(private readonly o: WatchdogOptions) {
    this.now = o.now ?? (() => performance.now());
    this.lastSign = this.lastTick = this.now();
    const set = o.setInterval ?? ((fn: () => void, ms: number) => setInterval(fn, ms));
    this.handle = set(() => this.check(), o.everyMs);
  }

  /** A sign of life (a progress message, an answer); `stage` names what the worker is doing. */
  progress(stage?: string): void {
    this.lastSign = this.now();
    if (stage !== undefined) this.stage = stage;
  }

  /** The last stage the worker reported. */
  get lastStage(): string | null {
    return this.stage;
  }

  /** Ms since the last sign of life. */
  get silentMs(): number {
    return this.now() - this.lastSign;
  }

  /** Whether it still watches (false once stopped or once it declared the worker dead). */
  get watching(): boolean {
    return !this.stopped;
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    (this.o.clearInterval ?? ((h: unknown) => clearInterval(h as ReturnType<typeof setInterval>)))(this.handle);
  }

  /** One check (the interval calls it; tests may too). */
  check(): void {
    if (this.stopped) return;
    const t = this.now();
    const late = t - this.lastTick > 2 * this.o.everyMs + 1000;
    this.lastTick = t;
    if (!late) {
      // Silent since: the later of the last sign and the probe still waiting (without probes: the last sign).
      const since = this.o.probe ? (this.probeSentAt === null ? null : Math.max(this.lastSign, this.probeSentAt)) : this.lastSign;
      if (since !== null && t - since > this.o.limitMs()) {
        this.stop();
        this.o.onSilent(t - this.lastSign, this.stage);
        return;
      }
    }
    if (this.o.probe && this.probeSentAt === null) {
      this.probeSentAt = t;
      // A probe that fails was still answered (comlink relays the worker's error).
      const answered = () => {
        this.probeSentAt = null;
        this.progress();
      };
      let answer: Promise<unknown>;
      try {
        answer = this.o.probe();
      } catch {
        return; // could not even be sent: it stays unanswered
      }
      answer.then(answered, answered);
    }
  }
}

/** "12 s" / "1.5 s": a duration for messages. */
export function seconds(ms: number): string {
  const s = ms / 1000;
  return `${s < 10 ? Number(s.toFixed(1)) : Math.round(s)} s`;
}
