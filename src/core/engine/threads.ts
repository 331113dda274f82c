/**
 * WASM threads for a run's learner. Measured on a 2-core machine (onnxruntime-web 1.30):
 *
 *   Node, the presets' own models (`npm run bench -- threads`, best of 3 rounds, load 2.5–3):
 *   2 threads beat 1 (grid MLP train step 7.7 → 5.9 ms, 1.32×; calc transformer 124 → 71 ms,
 *   1.75×); 4 threads on 2 cores lose (15.3 and 160 ms).
 *   Chromium, the built app (`?backend=wasm&threads=N`): 2 threads did not beat 1 (grid-empty
 *   20 iterations 6.5–12.6 s vs 8.2–11 s; calc warm start 8.0–8.5 vs 6.6–7.9 steps/s), with or
 *   without ORT's spin-waiting; 4 lost clearly (2.5–4.5 steps/s).
 *
 * In a tab the page, the compositor and the GPU process need a core too, so a learner gets the
 * cores left after one for the browser and one per rollout worker, at most 4 (ORT's own cap
 * for intra-op threads: beyond it hand-offs cost more than small matrices gain).
 */
export interface ThreadBudget {
  /** navigator.hardwareConcurrency (or os.availableParallelism()). */
  cores: number;
  /** SharedArrayBuffer available (cross-origin isolated): without it WASM runs one thread. */
  isolated: boolean;
  /** Rollout workers the run starts beside its learner (each keeps a core busy). */
  rolloutWorkers: number;
  /** Cores kept for everything else (default 1: the page and the browser). */
  reserved?: number;
}

export const MAX_WASM_THREADS = 4;

export function learnerThreads(b: ThreadBudget): number {
  if (!b.isolated) return 1;
  const free = Math.floor(b.cores) - (b.reserved ?? 1) - Math.max(0, b.rolloutWorkers);
  return Math.max(1, Math.min(MAX_WASM_THREADS, free));
}
