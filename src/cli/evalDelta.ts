/**
 * What RL changed on the held-out seeds (`npm run train -- --eval N`): per seed, the episode before
 * RL (right after any warm start) and after it; `fixed` counts seeds that failed before and
 * succeed after, `broke` the reverse. Greedy and sampled (temperature 1) are counted apart.
 */

/** One held-out episode's outcome. */
export interface SeedOutcome {
  seed: number;
  success: boolean;
}

/** Seeds RL fixed and broke between two evaluations of the same seeds. */
export function fixedBroke(before: readonly SeedOutcome[], after: readonly SeedOutcome[]): { fixed: number; broke: number } {
  const was = new Map(before.map((e) => [e.seed, e.success]));
  let fixed = 0, broke = 0;
  for (const e of after) {
    const prev = was.get(e.seed);
    if (prev === undefined) throw new Error(`held-out seed ${e.seed} was evaluated after RL but not before`);
    if (!prev && e.success) fixed++;
    if (prev && !e.success) broke++;
  }
  return { fixed, broke };
}
