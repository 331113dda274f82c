/**
 * The user-terms part of a trainer's score phase, shared by every collector (the grid step pool,
 * the lockstep and the continuous token loops; trainer/rewards.ts holds it): the run's `RewardLab`, scoring a batch of
 * episodes' step records in its sandbox with the non-finite policy applied, and the
 * `reward/version` / `reward/terms_skipped` metrics. Each trainer builds the records its own way
 * (grids: replay from the seed; text envs: read off the token episode) and adds the returned
 * per-step values to the shaped reward with `addTermRewards` before advantages.
 */
import { resolveTermScores, type NonFinitePolicy, type RewardTermsScorer } from './rewardTerms.ts';
import type { ScoreEpisode } from './stepRecord.ts';

/** User reward terms for a run (reward lab): the sandboxed scorer and what to do with its problems. */
export interface RewardLab {
  scorer: RewardTermsScorer;
  /** What a non-finite term value does ('skip': the term counts 0 in that episode, reported). */
  onNonFinite: NonFinitePolicy;
  /** The code version that scores from now on (1 = the run's starting code); `reward/version` reports it. */
  version?: number;
  /** Called once per skipped (episode, term) with a message naming the term, the line and the seed. */
  onProblem?: (message: string) => void;
}

/** A trainer's copy of a lab passed to setRewardLab: the version defaults to 1 (the run's starting code). */
export function installRewardLab(lab: RewardLab | null): (RewardLab & { version: number }) | null {
  return lab ? { ...lab, version: lab.version ?? 1 } : null;
}

/**
 * Scores finished episodes (their step records, in order) with the lab's terms. Returns, per
 * episode, term → [T] finite per-step values (a skipped term is all zeros), and how many
 * (episode, term) pairs were skipped (each reported through `onProblem`). Rejects when a term
 * throws, loops or exhausts memory, or returns a non-finite value under `onNonFinite: 'stop'`.
 */
export async function scoreWithRewardLab(lab: RewardLab, records: readonly ScoreEpisode[]): Promise<{ values: Record<string, Float64Array>[]; skipped: number }> {
  if (records.length === 0) return { values: [], skipped: 0 };
  const raw = await lab.scorer.score(records);
  let skipped = 0;
  const values = records.map((rec, i) => {
    const r = resolveTermScores(raw[i], lab.onNonFinite, { seed: rec.seed, lineOf: (t) => lab.scorer.lineOf(t) });
    skipped += r.skipped.length;
    for (const msg of r.skipped) lab.onProblem?.(msg);
    return r.values;
  });
  return { values, skipped };
}

/** Adds `reward/version` (the user-terms code that scored the iteration; 0 = none) and `reward/terms_skipped`; nothing for a run without terms. */
export function addRewardLabMetrics(m: Record<string, number>, version: number, termsSkipped: number): void {
  if (version === 0 && termsSkipped === 0) return;
  m['reward/version'] = version;
  m['reward/terms_skipped'] = termsSkipped;
}
