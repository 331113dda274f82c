/**
 * Per-position rewards against a hand-worked token batch: two episodes of two actions each, env
 * rewards plus tool-cost and length shaping, placed at the position where each action ends.
 */
import { describe, expect, it } from 'vitest';
import { shapeTokenEpisode, type TokenEpisode } from '../rollout/tokenEpisode.ts';
import { tokenRolloutBatch } from './batch.ts';
import { placeRewards, stepRewardsOf, withOwnRewards } from './positionRewards.ts';

const T = 8;
/** A token episode with this loss mask (1 = policy token), env rewards and infos per step. */
function tokenEp(lossMask: number[], rewards: number[], toolCalls: boolean[], over: Partial<TokenEpisode> = {}): TokenEpisode {
  const L = lossMask.length;
  return {
    envId: 'x', seed: 0, group: 0, tokens: Int32Array.from({ length: L }, (_, i) => 3 + i), lossMask: Uint8Array.from(lossMask),
    logprobs: new Float32Array(L), entropies: new Float32Array(L), versions: new Int32Array(L), rewards: Float64Array.from(rewards),
    infos: toolCalls.map((call) => (call ? { toolCall: 'lookup' } : {})), actions: [], observations: [], forcedEnds: 0, turns: rewards.length,
    terminated: true, truncated: false, contextLimited: false, success: false, transcript: '', ...over,
  };
}
/** Outcome 1, −0.25 per tool call, −0.5 per policy token over 3 (added at the last step). */
const SHAPING: Parameters<typeof shapeTokenEpisode>[1] = {
  outcome: { weight: 1 }, progress: { weight: 0 }, format: { weight: 0 }, toolCost: { weight: 0.25 },
  length: { weight: 0.5, freeTokens: 3 }, potential: { weight: 0, gamma: 1 },
};

describe('placeRewards', () => {
  // Episode A, tokens 0–7: prompt 0–1, action 1 = tokens 2–3, env token 4, action 2 = tokens 5–7.
  // Position t is scored on token t + 1, so action 1 spans positions 1–2 and ends at 2; action 2
  // spans 4–6 and ends at 6. Steps: reward 0 with a tool call (−0.25), then reward 1; 5 policy
  // tokens, 2 over the free 3 (−1, on the last step): per step [−0.25, 0], total −0.25.
  const a = tokenEp([0, 0, 1, 1, 0, 1, 1, 1], [0, 1], [true, false]);
  // Episode B, tokens 0–5: action 1 = tokens 1–2 (positions 0–1, ends at 1), env token 3, action
  // 2 = tokens 4–5 (positions 3–4, ends at 4). Steps: 0.5, then 0 with a tool call (−0.25); 4
  // policy tokens, 1 over (−0.5): per step [0.5, −0.75], total −0.25.
  const b = tokenEp([0, 1, 1, 0, 1, 1], [0.5, 0], [false, true]);
  const shaped = [shapeTokenEpisode(a, SHAPING), shapeTokenEpisode(b, SHAPING)];

  it("puts each step's reward at the position where its action ends, zeros elsewhere ([n, T])", () => {
    expect(shaped.map((s) => Array.from(s.perStep))).toEqual([[-0.25, 0], [0.5, -0.75]]);
    const batch = placeRewards(tokenRolloutBatch([a, b], T, 16), shaped);
    // Action-first placement (the wrong variant) would give A [0, −0.25, 0, 0, 0, …] and B [0.5, 0, 0, −0.75, …].
    expect(Array.from(batch.rewards)).toEqual([
      0, 0, -0.25, 0, 0, 0, 0, 0,
      0, 0.5, 0, 0, -0.75, 0, 0, 0,
    ]);
    expect(Array.from(batch.scores)).toEqual([-0.25, -0.25]);
    expect(Array.from(batch.stepCounts)).toEqual([2, 2]);
    expect(Array.from(batch.termScores.toolCost)).toEqual([-0.25, -0.25]);
    expect(Array.from(batch.termScores.length)).toEqual([-1, -0.5]);
    expect(Array.from(stepRewardsOf(batch, 1))).toEqual([0.5, -0.75]);
  });

  it("is not the action's first position: a reward on every action's first token reads back as other values", () => {
    const batch = placeRewards(tokenRolloutBatch([a], T, 16), [{ total: 3, terms: {}, perStep: [1, 2] }]);
    // Action 1 spans positions 1–2, action 2 spans 4–6: the rewards sit on 2 and 6 only.
    expect([1, 2, 4, 6].map((i) => batch.rewards[i])).toEqual([0, 1, 0, 2]);
  });

  it('gives a half-written action the context cut no reward (it never reached the env)', () => {
    // One finished action (tokens 1–2, ends at position 1), env token 3, then tokens 4–7 of an
    // action the context cut: a second turn end at position 6 with no env step behind it.
    const cut = tokenEp([0, 1, 1, 0, 1, 1, 1, 1], [1], [false], { terminated: false, truncated: true, contextLimited: true });
    const batch = placeRewards(tokenRolloutBatch([cut], T, 16), [{ total: 1, terms: {}, perStep: [1] }]);
    expect(Array.from(batch.rewards)).toEqual([0, 1, 0, 0, 0, 0, 0, 0]);
  });

  it("refuses a reward list that is not the batch's sequences, and withOwnRewards leaves the placed rewards alone", () => {
    const batch = tokenRolloutBatch([a, b], T, 16);
    expect(() => placeRewards(batch, shaped.slice(0, 1))).toThrow(/1 episodes' rewards for a batch of 2/);
    placeRewards(batch, shaped);
    const own = withOwnRewards(batch);
    own.rewards[2] -= 1;
    own.scores[0] -= 1;
    expect([batch.rewards[2], batch.scores[0]]).toEqual([-0.25, -0.25]);
  });
});
