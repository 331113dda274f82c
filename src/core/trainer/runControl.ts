/**
 * Pause, single step, stop and "train N more" (a larger budget) for a run driven from outside the loop (the
 * browser's training worker, where the page sends the commands). `runTraining` asks `next()`
 * before each iteration, so a command never cuts an iteration in half: pausing takes effect
 * between two steps, and a step is exactly one rollout plus one update.
 *
 * Where the CLI's loop ends (the iteration budget, stopAtSuccess), a controlled loop holds
 * instead, paused, with the trainer kept: the page can step once more or raise the budget and
 * train on. It ends only on `stop()` (or an error).
 */

/** Why a controlled run waits between iterations: a pause (or the end of a single step), its budget, its success target. */
export type HoldReason = 'paused' | 'iterations' | 'success';

/** `budget`: the run's iterations in all (counted from its start), raised for "train N more" or changed live. */
export type RunCommand = 'play' | 'pause' | 'step' | 'stop' | { budget: number };

export class RunControl {
  private state: 'running' | 'paused' | 'stopped';
  /** Iterations this run may take in all. */
  private budget: number;
  /** Single steps asked for while paused and not yet taken. */
  private granted = 0;
  /** Bumped by every command, so a command that came while a hold was being reported is not missed. */
  private version = 0;
  private wake: (() => void) | null = null;

  /**
   * `iterations`: the budget of this run. `steps`: start paused with that many single steps
   * granted (1 = the page's Step); `paused`: start paused with none.
   */
  constructor(iterations: number, o: { paused?: boolean; steps?: number } = {}) {
    this.budget = iterations;
    this.granted = Math.max(0, Math.floor(o.steps ?? 0));
    this.state = o.paused || this.granted > 0 ? 'paused' : 'running';
  }

  get iterations(): number {
    return this.budget;
  }

  get stopped(): boolean {
    return this.state === 'stopped';
  }

  command(c: RunCommand): void {
    if (this.state === 'stopped') return;
    if (c === 'play') this.state = 'running';
    else if (c === 'pause') {
      this.state = 'paused';
      this.granted = 0;
    } else if (c === 'step') {
      this.state = 'paused';
      this.granted++;
    } else if (c === 'stop') this.state = 'stopped';
    else this.budget = Math.max(0, Math.floor(c.budget));
    this.version++;
    const w = this.wake;
    this.wake = null;
    w?.();
  }

  /**
   * Before iteration `done` (0-based within this run): true to take it, false when the run was
   * stopped. `reached`: stopAtSuccess was met by the iterations so far. Each time the loop comes
   * to rest `onHold` is awaited once (the caller saves a checkpoint there, the trainer being
   * between steps); the wait then lasts until a command lets the run go on.
   */
  async next(done: number, reached: boolean, onHold: (why: HoldReason) => void | Promise<void>): Promise<boolean> {
    let reported: HoldReason | null = null;
    let successSeen = false;
    for (;;) {
      if (this.state === 'stopped') return false;
      const why: HoldReason | null = done >= this.budget ? 'iterations' : reached && !successSeen ? 'success' : this.state === 'paused' && this.granted === 0 ? 'paused' : null;
      if (why === null) {
        if (this.state === 'paused') this.granted--;
        return true;
      }
      if (why === 'success') successSeen = true;
      // The end of the budget or the success target: the run rests paused until told otherwise.
      if (why !== 'paused' && reported !== why) {
        this.state = 'paused';
        this.granted = 0;
      }
      const v = this.version;
      if (reported !== why) {
        reported = why;
        await onHold(why);
      }
      if (this.version === v) await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }
}
