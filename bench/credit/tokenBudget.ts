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
 * success (Infinity when none succeeded).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface BudgetRow {
  run: string;
  iterations: number;
  tokens: number;
  episodes: number;
  successes: number;
  episodesPerSuccess: number;
}

interface Iter {
  tokens: number;
  episodes: number;
  successes: number;
}

function iterations(dir: string): Iter[] {
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

const dirs = process.argv.slice(2);
if (dirs.length > 0) {
  for (const r of atEqualTokens(dirs.map((d) => ({ run: d, its: iterations(d) })))) {
    console.log(`${r.run}\t${r.iterations} it\t${Math.round(r.tokens)} tokens\t${r.episodes} episodes\t${Math.round(r.successes)} successes\t${r.episodesPerSuccess === Infinity ? '∞' : r.episodesPerSuccess.toFixed(1)} episodes/success`);
  }
}
