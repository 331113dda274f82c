/**
 * Episodes per success at an equal token budget, from the metrics.jsonl of finished CLI runs
 * (e.g. GRPO against GRPO with tree rollouts, same config and seed):
 *
 *   npx tsx bench/credit/tokenBudget.ts runs/grpo-1 runs/tree-1 [...more run dirs]
 *
 * Per run, iteration by iteration: policy tokens sampled (perf/tokens_per_s × perf/rollout_s:
 * every token the rollout decoded, a tree's branches and their padding rows included), episodes
 * trained (train/batch_episodes, branches counted as episodes) and successes among them
 * (train/batch_success_rate × episodes). The budget is the smallest run's total tokens; each run
 * counts its whole iterations within it. Prints tokens, episodes, successes and episodes per
 * success (Infinity when none succeeded). Then, per run, the first iteration whose batch success
 * reaches each of `--reach` (comma-separated rates, default 0.5,0.8) and the episodes and tokens
 * spent up to and including it ('never' when the run did not get there).
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface BudgetRow {
  run: string;
  iterations: number;
  tokens: number;
  episodes: number;
  successes: number;
  episodesPerSuccess: number;
}

export interface Iter {
  tokens: number;
  episodes: number;
  successes: number;
}

export function iterations(dir: string): Iter[] {
  return readFileSync(join(dir, 'metrics.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, number>)
    .map((m) => {
      const episodes = m['train/batch_episodes'] ?? NaN;
      return { tokens: m['perf/tokens_per_s'] * m['perf/rollout_s'], episodes, successes: m['train/batch_success_rate'] * episodes };
    });
}

/** Each run cut at the smallest run's token total (whole iterations only). */
export function atEqualTokens(runs: readonly { run: string; its: readonly Iter[] }[]): BudgetRow[] {
  const budget = Math.min(...runs.map((r) => r.its.reduce((s, x) => s + x.tokens, 0)));
  return runs.map(({ run, its }) => {
    const row: BudgetRow = { run, iterations: 0, tokens: 0, episodes: 0, successes: 0, episodesPerSuccess: Infinity };
    for (const x of its) {
      if (row.tokens + x.tokens > budget + 1e-6) break;
      row.iterations++;
      row.tokens += x.tokens;
      row.episodes += x.episodes;
      row.successes += x.successes;
    }
    row.episodesPerSuccess = row.successes > 0 ? row.episodes / row.successes : Infinity;
    return row;
  });
}

/** The first iteration (0-based) whose batch success rate reaches `rate`, with the episodes and tokens spent through it; null when none does. */
export function firstReach(its: readonly Iter[], rate: number): { iteration: number; episodes: number; tokens: number } | null {
  let episodes = 0;
  let tokens = 0;
  for (let i = 0; i < its.length; i++) {
    episodes += its[i].episodes;
    tokens += its[i].tokens;
    // Successes are rate × episodes, so compare rates with a rounding allowance.
    if (its[i].successes >= rate * its[i].episodes - 1e-9) return { iteration: i, episodes, tokens };
  }
  return null;
}

// Run as a script only (a test imports the functions).
const isMain = process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
const args = isMain ? process.argv.slice(2) : [];
const reachAt = args.indexOf('--reach');
const reach = reachAt >= 0 ? args[reachAt + 1].split(',').map(Number) : [0.5, 0.8];
const dirs = reachAt >= 0 ? args.filter((_, i) => i !== reachAt && i !== reachAt + 1) : args;
if (dirs.length > 0) {
  const runs = dirs.map((d) => ({ run: d, its: iterations(d) }));
  for (const r of atEqualTokens(runs)) {
    console.log(`${r.run}\t${r.iterations} it\t${Math.round(r.tokens)} tokens\t${r.episodes} episodes\t${Math.round(r.successes)} successes\t${r.episodesPerSuccess === Infinity ? '∞' : r.episodesPerSuccess.toFixed(1)} episodes/success`);
  }
  for (const { run, its } of runs) {
    const parts = reach.map((rate) => {
      const f = firstReach(its, rate);
      return f ? `≥${rate}: it ${f.iteration}, ${f.episodes} episodes, ${Math.round(f.tokens)} tokens` : `≥${rate}: never in ${its.length} it`;
    });
    console.log(`${run}\t${parts.join('\t')}`);
  }
}
