/**
 * `npm run train -- --eval N`: plays N held-out seeds greedily and by sampling, before RL (after
 * any warm start) and after it; appends every episode to eval-episodes.jsonl and returns the rates
 * (after RL also the seeds RL fixed and broke against the evaluation before it).
 */
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { heldOutSeeds } from '../core/util/rng.ts';
import type { RunTrainer } from '../core/trainer/api.ts';
import { fixedBroke, type SeedOutcome } from './evalDelta.ts';

/** Most held-out seeds --eval plays (each is two episodes kept in memory: greedy and sampled). */
export const MAX_EVAL_EPISODES = 100_000;

/** An evaluator over `evalN` held-out seeds writing into `out` (eval-episodes.jsonl is emptied now when evalN > 0). */
export function makeEvaluator(trainer: Pick<RunTrainer, 'evaluate'>, evalN: number, out: string): (when: string) => Promise<Record<string, unknown>> {
  const heldOut = heldOutSeeds(evalN);
  const evalEpisodesPath = join(out, 'eval-episodes.jsonl');
  if (evalN > 0) writeFileSync(evalEpisodesPath, '');
  const evalOutcomes: { greedy: SeedOutcome[]; sampled: SeedOutcome[] }[] = [];
  return async (when: string) => {
    const greedy = await trainer.evaluate(heldOut, 0);
    const sampled = await trainer.evaluate(heldOut, 1);
    // Every held-out episode, so failures can be read (which digit, which hop) and runs diffed.
    const lines = [...greedy.map((e) => ({ e, temperature: 0 })), ...sampled.map((e) => ({ e, temperature: 1 }))].map(({ e, temperature }) =>
      JSON.stringify({ when, temperature, seed: e.seed, success: e.success, return: Number(Array.from(e.rewards).reduce((a, b) => a + b, 0).toFixed(6)), actions: Array.from(e.actions as ArrayLike<string | number>), transcript: 'transcript' in e ? e.transcript : undefined }),
    );
    appendFileSync(evalEpisodesPath, lines.join('\n') + '\n');
    const rate = (eps: readonly { success: boolean }[]) => eps.filter((e) => e.success).length / Math.max(1, eps.length);
    const r: Record<string, unknown> = { when, episodes: evalN, greedy_success: rate(greedy), sampled_success: rate(sampled) };
    // After RL: how many held-out seeds RL fixed and broke, against the evaluation before it.
    const before = evalOutcomes[0];
    if (before) Object.assign(r, Object.fromEntries(Object.entries({ greedy: fixedBroke(before.greedy, greedy), sampled: fixedBroke(before.sampled, sampled) }).flatMap(([k, v]) => [[`${k}_fixed`, v.fixed], [`${k}_broke`, v.broke]])));
    evalOutcomes.push({ greedy, sampled });
    console.log(`eval (${when}, ${evalN} held-out seeds): greedy success ${(r.greedy_success as number).toFixed(3)}, sampled ${(r.sampled_success as number).toFixed(3)}${before ? `; RL fixed ${r.greedy_fixed} and broke ${r.greedy_broke} seeds greedy, fixed ${r.sampled_fixed} and broke ${r.sampled_broke} sampled` : ''}`);
    return r;
  };
}
