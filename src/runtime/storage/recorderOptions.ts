/**
 * What a run's recorder is given and keeps beside its rows: its options (batching, trajectory
 * caps, quota reserve) with defaults, the hooks it reports through, the scheduler and the
 * cross-tab lock it uses, and the bookkeeping of iteration ranges it could not save.
 */

/** Adds iteration `it` to sorted, merged inclusive ranges. */
export function addMissing(ranges: [number, number][], first: number, last = first): [number, number][] {
  const all = [...ranges, [first, last] as [number, number]].sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  for (const r of all) {
    const top = out[out.length - 1];
    if (top && r[0] <= top[1] + 1) top[1] = Math.max(top[1], r[1]);
    else out.push([r[0], r[1]]);
  }
  return out;
}

/** "3–7, 12" (inclusive ranges of iterations). */
export function formatRanges(ranges: readonly (readonly [number, number])[]): string {
  return ranges.map(([a, b]) => (a === b ? `${a}` : `${a}–${b}`)).join(', ');
}

/** How many iterations the ranges hold. */
export const rangesCount = (ranges: readonly (readonly [number, number])[]): number => ranges.reduce((n, [a, b]) => n + b - a + 1, 0);

export interface RecorderOptions {
  /** Sampled episodes saved per iteration (the first ones of each batch). */
  trajectoriesPerIteration: number;
  /** Most trajectories saved per run: past it, every other saved iteration's are dropped and only every 2nd (4th, …) iteration is kept, so they stay spread over the run. */
  maxTrajectories: number;
  /** Write once this many iterations wait. */
  flushEveryIterations: number;
  /** ...or once the oldest waiting iteration is this old, ms. */
  flushEveryMs: number;
  /** Save the trainer's checkpoint every this many iterations (and on pause and at the end); 0 = only on pause and at the end. */
  checkpointEvery: number;
  /**
   * Metric rows kept in memory, saved or not (the newest): what a failed write retries and what a
   * deleted database is recreated from. A row pushed out before it was saved is missing.
   */
  memoryRows: number;
  /** First wait before retrying a failed write, ms (doubles per failure up to retryMaxMs). */
  retryMs: number;
  retryMaxMs: number;
}

export const DEFAULT_RECORDER_OPTIONS: RecorderOptions = {
  trajectoriesPerIteration: 4,
  maxTrajectories: 2000,
  flushEveryIterations: 5,
  flushEveryMs: 1000,
  checkpointEvery: 10,
  memoryRows: 2000,
  retryMs: 1000,
  retryMaxMs: 15_000,
};

/** What the recorder needs from its platform (injected in tests). */
export interface RecorderHooks {
  /** A message for the person (a full disk). */
  onProblem(message: string): void;
  /** Good news for the person (saving works again); default onProblem. */
  onRecovered?(message: string): void;
  /** Runs `fn` soon, when the thread is idle (default: requestIdleCallback, else setTimeout 0). */
  schedule?(fn: () => void): void;
  /** Holds a lock named after the run while it records; returns its release (default: Web Locks). */
  lock?(name: string): () => void;
  /** Bytes used and allowed for this site (default: navigator.storage.estimate; absent = never nearly full). */
  estimate?(): Promise<{ usage?: number; quota?: number }>;
}

/**
 * Free space below which trajectories stop, bytes: a quarter of the quota (at most 8 MB), and at
 * least room for two checkpoints of `checkpointBytes` (a checkpoint is replaced by writing the new
 * one first). Measured in Chromium with a small quota: trajectories (~15 KB per grid iteration)
 * filled it and the next metrics write failed too, since stopping trajectories frees nothing;
 * stopping them while room is left keeps it for metrics (~1 KB per iteration) and checkpoints
 * (~0.8 MB for the grid MLP), which Resume needs.
 */
export function trajectoryReserveBytes(quota: number, checkpointBytes = 0): number {
  return Math.max(Math.min(quota / 4, 8 * 1024 * 1024), 2 * checkpointBytes);
}

export function defaultEstimate(): Promise<{ usage?: number; quota?: number }> {
  const storage = (globalThis.navigator as Navigator | undefined)?.storage;
  return storage?.estimate ? storage.estimate() : Promise.resolve({});
}

/** The Web Locks name a recording tab holds for a run (another tab sees the run is alive). */
export const runLockName = (id: string) => `agentic-rl-playground:run:${id}`;

export function defaultSchedule(fn: () => void): void {
  const ric = (globalThis as { requestIdleCallback?: (cb: () => void, o?: { timeout: number }) => number }).requestIdleCallback;
  if (ric) ric(fn, { timeout: 500 });
  else setTimeout(fn, 0);
}

export function defaultLock(name: string): () => void {
  const locks = (globalThis.navigator as Navigator | undefined)?.locks;
  if (!locks) return () => undefined;
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  void locks.request(name, () => held).catch(() => undefined);
  return () => release();
}
