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
  /** Terms scored and logged but not added to the reward the advantages see (config reward.logOnly). */
  logOnly?: readonly string[];
  /** Terms whose per-episode sum is the eval reward, `eval/reward_mean` (config reward.evalTerms). */
  evalTerms?: readonly string[];
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

/**
 * `eval/reward_mean`: the eval reward, Σ of the named terms per episode, mean over the iteration's
 * sampled episodes — the sum of the terms' `reward/<term>/mean`, which the metrics already hold
 * (a mean of sums is the sum of means). Nothing without eval terms.
 */
export function addEvalReward(m: Record<string, number>, evalTerms: readonly string[] | undefined): void {
  if (!evalTerms?.length) return;
  let sum = 0;
  for (const t of evalTerms) {
    const v = m[`reward/${t}/mean`];
    if (v === undefined) throw new Error(`reward.evalTerms: '${t}' is no term this run scores (no reward/${t}/mean)`);
    sum += v;
  }
  m['eval/reward_mean'] = sum;
}

/**
 * Problems with reward.logOnly / reward.evalTerms against the terms that exist: log-only names must
 * be the code's exports (a shaping term is switched off by its weight), eval names exports or
 * shaping terms, and neither means anything without reward code. `exported` = null when the code
 * has not been loaded yet (only the empty-code rule is checked).
 */
export function rewardTermNameIssues(reward: { code: string; logOnly: readonly string[]; evalTerms: readonly string[] }, exported: readonly string[] | null, shapingTerms: readonly string[]): string[] {
  const out: string[] = [];
  if (reward.code.trim() === '') {
    if (reward.logOnly.length) out.push('reward.logOnly: names reward-lab terms, but reward.code is empty; write the terms or use []');
    if (reward.evalTerms.length) out.push('reward.evalTerms: the eval reward is computed with the reward lab, but reward.code is empty; write the terms or use []');
    return out;
  }
  if (!exported) return out;
  for (const t of reward.logOnly) if (!exported.includes(t)) out.push(`reward.logOnly: '${t}' is not a term of the reward code (its terms: ${exported.join(', ') || 'none'}); a shaping term is left out of training by weight 0`);
  for (const t of reward.evalTerms) if (!exported.includes(t) && !shapingTerms.includes(t)) out.push(`reward.evalTerms: '${t}' is neither a term of the reward code (${exported.join(', ') || 'none'}) nor a shaping term (${shapingTerms.join(', ')})`);
  return out;
}

/** Adds `reward/version` (the user-terms code that scored the iteration; 0 = none) and `reward/terms_skipped`; nothing for a run without terms. */
export function addRewardLabMetrics(m: Record<string, number>, version: number, termsSkipped: number): void {
  if (version === 0 && termsSkipped === 0) return;
  m['reward/version'] = version;
  m['reward/terms_skipped'] = termsSkipped;
}
