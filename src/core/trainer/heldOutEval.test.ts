import { describe, expect, it } from 'vitest';
import { heldOutSeeds } from '../util/rng.ts';
import type { IterationReport, RunTrainer } from './api.ts';
import { HeldOutEvalTrainer, passAtK } from './heldOutEval.ts';

describe('passAtK', () => {
  it('matches a hand count: pass@1 the mean success, pass@k the share of questions solved at least once', () => {
    // Question 1: 1 of 4; question 2: 0 of 4; question 3: 4 of 4. Successes 5 of 12; 2 of 3 questions solved.
    const r = passAtK([
      [true, false, false, false],
      [false, false, false, false],
      [true, true, true, true],
    ]);
    expect(r.passAt1).toBeCloseTo(5 / 12, 12);
    // The independence formula 1 − (1 − pass@1)^k would give 1 − (7/12)^4 ≈ 0.884: wrong when
    // success concentrates on some questions (confidently right or wrong), the case that matters.
    expect(r.passAtK).toBeCloseTo(2 / 3, 12);
  });

  it('refuses ragged or empty input', () => {
    expect(() => passAtK([])).toThrow(/no questions/);
    expect(() => passAtK([[true], [true, false]])).toThrow(/same number/);
  });
});

/** A scripted trainer: evaluate() succeeds exactly on the (seed, sample) pairs `solves` lists; records its calls. */
function scripted(solves: (seed: number, sample: number) => boolean) {
  const calls: { seeds: number[]; temperature: number | undefined }[] = [];
  let iteration = 0;
  const t = {
    model: { params: [] },
    get iteration() {
      return iteration;
    },
    version: 0,
    canCheckpoint: false,
    async step() {
      return { iteration: iteration++, metrics: { 'episode/success_rate': 0 }, episodes: [], episodeRewards: new Float64Array(0), episodeAdvantages: new Float64Array(0), allApplied: true };
    },
    async evaluate(seeds: readonly number[], temperature?: number) {
      calls.push({ seeds: [...seeds], temperature });
      const seen = new Map<number, number>();
      return seeds.map((s) => {
        const k = seen.get(s) ?? 0;
        seen.set(s, k + 1);
        return { success: solves(s, k) };
      });
    },
  };
  return { trainer: t as unknown as RunTrainer, calls };
}

describe('HeldOutEvalTrainer', () => {
  it('evaluates before iterations 0, every, 2·every … with k sampled episodes per held-out seed', async () => {
    const [q0, q1] = heldOutSeeds(2);
    // q0 is solved by its 2nd sample only, q1 never: pass@1 = 1/6, pass@3 = 1/2.
    const { trainer, calls } = scripted((seed, sample) => seed === q0 && sample === 1);
    const t = new HeldOutEvalTrainer(trainer, { every: 2, questions: 2, k: 3 });
    const rows: IterationReport[] = [];
    for (let i = 0; i < 5; i++) rows.push(await t.step());
    expect(rows.map((r) => 'eval/pass_at_k' in r.metrics)).toEqual([true, false, true, false, true]);
    expect(rows[0].metrics['eval/pass_at_one']).toBeCloseTo(1 / 6, 12);
    expect(rows[0].metrics['eval/pass_at_k']).toBeCloseTo(1 / 2, 12);
    // Sampled (temperature 1), question-major: a greedy evaluation would have no pass@k to speak of.
    expect(calls[0]).toEqual({ seeds: [q0, q0, q0, q1, q1, q1], temperature: 1 });
    expect(calls).toHaveLength(3);
  });

  it('every 0 never evaluates', async () => {
    const { trainer, calls } = scripted(() => true);
    const t = new HeldOutEvalTrainer(trainer, { every: 0, questions: 2, k: 2 });
    const r = await t.step();
    expect(calls).toHaveLength(0);
    expect('eval/pass_at_one' in r.metrics).toBe(false);
  });
});
