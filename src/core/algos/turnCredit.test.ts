/**
 * MT-GRPO against numbers worked out by hand from the paper's formula (arXiv 2505.11821):
 *   A_{i,k} = Â^T_{i,k} + λ·Â^O_i on intermediate actions, A_{i,K} = Â^O_i on the last one,
 * each Â normalised within its group (mean, sample std). Then the same through computeAdvantages
 * on a token batch, so the collector's turn infos reach the right tokens. The last test shows the
 * hand numbers tell apart the plausible wrong variants (each would fail the first test).
 */
import { describe, expect, it } from 'vitest';
import { defaultsFor } from './config.ts';
import { EMA_BASELINE_INIT } from './advantages.ts';
import { mtGrpoAdvantages, turnRewardsOf, type TurnCreditEpisode } from './turnCredit.ts';
import type { ShapedReward } from '../reward/shaping.ts';
import { computeAdvantages, perActionAdvantages } from '../update/batchAdvantages.ts';
import type { RolloutBatch } from '../update/batch.ts';
import { placeRewards } from '../update/positionRewards.ts';

const LAMBDA = 0.5;
const S3 = Math.sqrt(3);

/**
 * Group A: four two-action episodes (lookup, then answer).
 *   R^T = [1, 1, 0, 0]: mean 1/2, sample var (4 · 1/4)/3 = 1/3, std 1/√3 → Â^T = ±(1/2)·√3 = ±√3/2
 *   R^O = [1, 0, 0, 0]: mean 1/4, var (9/16 + 3/16)/3 = 1/4, std 1/2 → Â^O = [3/2, −1/2, −1/2, −1/2]
 * Group B: unequal depths, two with two intermediate actions, two with one.
 *   turn 1, all four: R^T = [1, 1, 0, 1]: mean 3/4, var (3/16 + 9/16)/3 = 1/4, std 1/2 → [1/2, 1/2, −3/2, 1/2]
 *   turn 2, episodes 0 and 1: R^T = [1, 0]: mean 1/2, std √(1/2) → [√2/2, −√2/2]
 *   R^O = [1, 0, 0, 1]: mean 1/2, var 1/3, std 1/√3 → Â^O = ±√3/2
 */
const GROUPS: TurnCreditEpisode[] = [
  { turnRewards: [1, 0], outcome: 1, actions: 2 },
  { turnRewards: [1, 0], outcome: 0, actions: 2 },
  { turnRewards: [0, 0], outcome: 0, actions: 2 },
  { turnRewards: [0, 0], outcome: 0, actions: 2 },
  { turnRewards: [1, 1, 1], outcome: 1, actions: 3 },
  { turnRewards: [1, 0, 0], outcome: 0, actions: 3 },
  { turnRewards: [0, 0], outcome: 0, actions: 2 },
  { turnRewards: [1, 0], outcome: 1, actions: 2 },
];
const h = S3 / 2;
const EXPECTED = [
  [h + LAMBDA * 1.5, 1.5],
  [h + LAMBDA * -0.5, -0.5],
  [-h + LAMBDA * -0.5, -0.5],
  [-h + LAMBDA * -0.5, -0.5],
  [0.5 + LAMBDA * h, Math.SQRT1_2 + LAMBDA * h, h],
  [0.5 - LAMBDA * h, -Math.SQRT1_2 - LAMBDA * h, -h],
  [-1.5 - LAMBDA * h, -h],
  [0.5 + LAMBDA * h, h],
];

function expectClose(got: readonly ArrayLike<number>[], want: readonly number[][]) {
  expect(got.map((a) => a.length)).toEqual(want.map((a) => a.length));
  got.forEach((a, i) => Array.from(a).forEach((x, k) => expect(x, `episode ${i} action ${k}`).toBeCloseTo(want[i][k], 9)));
}

describe('MT-GRPO advantages', () => {
  it('match the hand-worked group (turn term + λ·outcome before the last action, outcome alone on it)', () => {
    const r = mtGrpoAdvantages(GROUPS, 4, { lambda: LAMBDA, normalizeStd: true, eps: 0 });
    expectClose(r.perAction, EXPECTED);
    expectClose([r.outcomeAdv], [[1.5, -0.5, -0.5, -0.5, h, -h, -h, h]]);
    // Unequal groups (the adaptive budget) give the same numbers group by group.
    expectClose(mtGrpoAdvantages(GROUPS, [4, 4], { lambda: LAMBDA, normalizeStd: true, eps: 0 }).perAction, EXPECTED);
  });

  it('gives 0 turn terms where a turn has no spread or one episode, and 0 everywhere for an all-equal group', () => {
    const flat = mtGrpoAdvantages(
      [
        { turnRewards: [1, 1], outcome: 1, actions: 3 },
        { turnRewards: [1], outcome: 1, actions: 2 },
      ],
      2,
      { lambda: 1, normalizeStd: true, eps: 1e-6 },
    );
    expect(flat.perAction.map((a) => Array.from(a))).toEqual([[0, 0, 0], [0, 0]]);
  });

  it('reads the turn reward from the configured source', () => {
    const perStep = [0.25, 0, 1];
    const infos = [{ progress: 1 }, {}, { progress: 2 }];
    expect(Array.from(turnRewardsOf('reward', perStep, infos))).toEqual([0.25, 0, 1]);
    expect(Array.from(turnRewardsOf('progress', perStep, infos))).toEqual([1, 0, 2]);
    expect(Array.from(turnRewardsOf('reward+progress', perStep, infos))).toEqual([1.25, 0, 3]);
  });

  it('lands on each action\'s tokens through computeAdvantages (env tokens 0), from info.progress', () => {
    // Two sequences of length 8: [env, a, a, env, env, a, a, pad]: action 1 at 1–2, action 2 at 5–6.
    const T = 8;
    const row = [0, 1, 1, 0, 0, 1, 1, 0];
    const ends = [0, 0, 1, 0, 0, 0, 1, 0];
    const b: RolloutBatch = {
      n: 2, starts: Int32Array.from([0, T]), lengths: Int32Array.from([T, T]), size: 2 * T,
      mask: Float32Array.from([...row, ...row]), mu: new Float32Array(2 * T), versions: new Int32Array(2 * T), values: new Float32Array(2 * T),
      turnEnd: Uint8Array.from([...ends, ...ends]), bootstrap: new Float64Array(2), terminated: Uint8Array.from([1, 1]), groups: Int32Array.from([0, 0]), horizon: T,
      rewards: new Float64Array(2 * T), scores: new Float64Array(2), stepCounts: new Int32Array(2), termScores: {},
      feed: { kind: 'rows', D: 0, obs: new Float32Array(0), actions: new Int32Array(0) },
    };
    // Episode 0 found the key (progress 1) and answered right; episode 1 neither.
    const shaped: ShapedReward[] = [
      { total: 1, perStep: Float64Array.from([0, 1]), terms: {} as ShapedReward['terms'], raw: {} as ShapedReward['raw'] },
      { total: 0, perStep: Float64Array.from([0, 0]), terms: {} as ShapedReward['terms'], raw: {} as ShapedReward['raw'] },
    ];
    const algo = { ...defaultsFor('mt-grpo'), groupSize: 2, stdEps: 1e-12, turnCredit: { lambda: LAMBDA, source: 'progress' as const } };
    const r = computeAdvantages(algo, placeRewards(b, shaped), EMA_BASELINE_INIT, { groupSize: 2, turnInfos: [[{ progress: 1 }, {}], [{}, {}]] });
    // Two values ±1/2 around their mean, sample std √(1/2): Â = ±√2/2 for both the turn and the outcome.
    const a = Math.SQRT1_2;
    const first = [a + LAMBDA * a, -a - LAMBDA * a];
    const want = [0, first[0], first[0], 0, 0, a, a, 0, 0, first[1], first[1], 0, 0, -a, -a, 0];
    Array.from(r.adv).forEach((x, i) => expect(x, `position ${i}`).toBeCloseTo(want[i], 9));
    expectClose([r.episodeAdv], [[a, -a]]);
    expectClose(perActionAdvantages(b, r.adv), [first.slice(0, 1).concat([a]), first.slice(1).concat([-a])]);
  });

  it('the hand numbers reject the plausible wrong variants', () => {
    const z = (xs: number[], std: boolean) => {
      const m = xs.reduce((s, x) => s + x, 0) / xs.length;
      const sd = Math.sqrt(xs.reduce((s, x) => s + (x - m) ** 2, 0) / (xs.length - 1));
      return xs.map((x) => (x - m) / (std ? sd : 1));
    };
    const gA = GROUPS.slice(0, 4);
    const aT = z(gA.map((e) => e.turnRewards[0] as number), true);
    const aO = z(gA.map((e) => e.outcome), true);
    const differs = (wrong: number[][]) => wrong.some((acts, i) => acts.some((x, k) => Math.abs(x - EXPECTED[i][k]) > 1e-6));
    // λ on the turn term (Â^O + λ·Â^T on the first action).
    expect(differs(gA.map((_, i) => [aO[i] + LAMBDA * aT[i], aO[i]]))).toBe(true);
    // The turn advantage on every action, the last included.
    expect(differs(gA.map((_, i) => [aT[i] + LAMBDA * aO[i], aT[i] + LAMBDA * aO[i]]))).toBe(true);
    // No std division.
    const tRaw = z(gA.map((e) => e.turnRewards[0] as number), false);
    const oRaw = z(gA.map((e) => e.outcome), false);
    expect(differs(gA.map((_, i) => [tRaw[i] + LAMBDA * oRaw[i], oRaw[i]]))).toBe(true);
    // Normalised over the whole batch (both groups) instead of each group.
    const bT = z(GROUPS.map((e) => e.turnRewards[0] as number), true);
    const bO = z(GROUPS.map((e) => e.outcome), true);
    expect(differs(gA.map((_, i) => [bT[i] + LAMBDA * bO[i], bO[i]]))).toBe(true);
  });
});
