/**
 * Time for simulated tool latency. Envs report how long a call took (`info.latencyMs`, drawn
 * from their seeded RNG); whoever drives the env waits on a Clock. Tests use VirtualClock,
 * so a 1 s long-tail call costs no real time and runs are reproducible.
 */
export interface Clock {
  /** Milliseconds since an arbitrary origin. */
  now(): number;
  /** Resolves after `ms` milliseconds of this clock's time. */
  sleep(ms: number): Promise<void>;
}

export class RealClock implements Clock {
  now(): number {
    return performance.now();
  }
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
  }
}

/**
 * Discrete-event virtual time: `sleep` registers a wake-up; `advance`/`runUntilIdle` move time
 * forward and resolve sleepers in time order. With `autoAdvance`, a sleep resolves on the next
 * microtask and time jumps by its duration (handy for sequential code).
 */
export class VirtualClock implements Clock {
  private t = 0;
  private seq = 0;
  private sleepers: { at: number; seq: number; resolve: () => void }[] = [];

  constructor(private readonly autoAdvance = false) {}

  now(): number {
    return this.t;
  }

  sleep(ms: number): Promise<void> {
    const at = this.t + Math.max(0, ms);
    if (this.autoAdvance) {
      this.t = at;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.sleepers.push({ at, seq: this.seq++, resolve });
      this.sleepers.sort((a, b) => a.at - b.at || a.seq - b.seq);
    });
  }

  /** Moves time forward by `ms`, waking every sleeper due by then, in order. */
  async advance(ms: number): Promise<void> {
    const target = this.t + ms;
    while (this.sleepers.length > 0 && this.sleepers[0].at <= target) {
      const s = this.sleepers.shift()!;
      this.t = s.at;
      s.resolve();
      await Promise.resolve();
    }
    this.t = target;
  }

  /** Wakes sleepers one at a time until none are left (each may register more). */
  async runUntilIdle(maxWakeups = 1_000_000): Promise<void> {
    for (let n = 0; this.sleepers.length > 0 && n < maxWakeups; n++) {
      const s = this.sleepers.shift()!;
      this.t = Math.max(this.t, s.at);
      s.resolve();
      // Let the woken task run up to its next sleep before waking the next one.
      for (let i = 0; i < 10; i++) await Promise.resolve();
    }
  }

  get pending(): number {
    return this.sleepers.length;
  }
}
