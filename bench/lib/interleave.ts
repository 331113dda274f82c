/**
 * Interleaved timing for a noisy shared machine: instead of timing A for a while and then B
 * (where a burst of background load lands on one of them), every round runs each contender
 * once, and the starting contender rotates from round to round so that none is always the one
 * that runs right after another's allocations or GC.
 */

export interface Contender {
  key: string;
  /** One timed unit of work; resolves when the work is complete. */
  run: () => Promise<unknown>;
}

export interface InterleaveOptions {
  /** Untimed rounds first (JIT compilation, allocator and cache warm-up). */
  warmup: number;
  /** Timed rounds; each contender contributes one sample per round. */
  rounds: number;
  /** Called after each timed round (progress reporting). */
  onRound?: (round: number) => void;
}

/** Samples in milliseconds per contender key. */
export async function interleave(contenders: readonly Contender[], opts: InterleaveOptions): Promise<Map<string, number[]>> {
  const samples = new Map<string, number[]>(contenders.map((c) => [c.key, []]));
  const n = contenders.length;
  for (let r = 0; r < opts.warmup + opts.rounds; r++) {
    for (let i = 0; i < n; i++) {
      const c = contenders[(r + i) % n];
      const t0 = performance.now();
      await c.run();
      const dt = performance.now() - t0;
      if (r >= opts.warmup) samples.get(c.key)!.push(dt);
    }
    if (r >= opts.warmup) opts.onRound?.(r - opts.warmup + 1);
  }
  return samples;
}
