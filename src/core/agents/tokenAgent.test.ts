/** A token agent's plan: the turns and token probabilities of one decoded episode. */
import { describe, expect, it } from 'vitest';
import '../envs/index.ts';
import type { TokenDecoder } from '../engine/types.ts';
import { makeEnv } from '../envs/index.ts';
import type { ToolEnv } from '../envs/types.ts';
import type { TokenEpisode } from '../rollout/tokenEpisode.ts';
import { EOA, OBS, VOCAB_SIZE, encode } from '../text/codec.ts';
import { envActionOf, planFromEpisode, playTokenAgent } from './tokenAgent.ts';

const id = (s: string) => encode(s)[0];

/**
 * A decoder whose next token depends only on the token just fed: 'answer(' → '1' → ')' → <eoa>,
 * anything else (the task's last '.') → 'answer('. The scripted token gets probability 0.9, the
 * rest share 0.1, so sampling usually (greedy always) writes `answer(1)`.
 */
function scriptedDecoder(): TokenDecoder & { calls: number } {
  const after = new Map([
    [id('answer('), id('1')],
    [id('1'), id(')')],
    [id(')'), EOA],
  ]);
  return {
    batch: 1,
    steps: [1],
    context: 128,
    vocab: VOCAB_SIZE,
    version: 0,
    calls: 0,
    reset() {},
    next(tokens) {
      this.calls++;
      const want = after.get(tokens[0]) ?? id('answer(');
      const lp = new Float32Array(VOCAB_SIZE).fill(Math.log(0.1 / (VOCAB_SIZE - 1)));
      lp[want] = Math.log(0.9);
      return Promise.resolve({ logprobs: lp });
    },
    setWeights() {},
    release: () => Promise.resolve(),
  };
}

describe('playTokenAgent', () => {
  it('greedy: decodes answer(1) on the calculator, with each token and its probability, and the env ends the episode', async () => {
    const env = makeEnv('tools/calculator') as ToolEnv;
    const plan = await playTokenAgent(scriptedDecoder(), env, 5, 'greedy', 32);
    expect(plan.turns.map((t) => t.action)).toEqual(['answer(1)']);
    expect(plan.turns[0].tokens.map((t) => t.text)).toEqual(['answer(', '1', ')', '<eoa>']);
    for (const t of plan.turns[0].tokens) expect(t.prob).toBeCloseTo(0.9, 5);
    expect(plan.success).toBe(false); // 6089 * 9202 is not 1
    expect(plan).toMatchObject({ seed: 5, mode: 'greedy', contextLimited: false });
  });

  it('sampled: the same seed gives the same plan (the stream is seeded by the episode seed)', async () => {
    const env = makeEnv('tools/calculator') as ToolEnv;
    const a = await playTokenAgent(scriptedDecoder(), env, 11, 'sampled', 8);
    const b = await playTokenAgent(scriptedDecoder(), env, 11, 'sampled', 8);
    expect(b).toEqual(a);
    expect(a.turns.length).toBeGreaterThan(0);
  });
});

describe('planFromEpisode', () => {
  it('splits policy tokens into turns at <eoa> and at environment tokens (an action cut at the limit)', () => {
    const env = [1, OBS, id('x')];
    const t1 = [id('a'), id('b')]; // cut at maxActionTokens 2: no <eoa>
    const t2 = [id('c'), EOA];
    const tokens = [...env, ...t1, OBS, id('y'), ...t2];
    const mask = [0, 0, 0, 1, 1, 0, 0, 1, 1];
    const ep = {
      seed: 3,
      tokens: Int32Array.from(tokens),
      lossMask: Uint8Array.from(mask),
      logprobs: Float32Array.from(mask.map((m) => (m ? Math.log(0.5) : 0))),
      actions: ['ab', 'c'],
      success: true,
      contextLimited: false,
    } as unknown as TokenEpisode;
    const plan = planFromEpisode(ep, 'sampled');
    expect(plan.turns.map((t) => [t.action, t.tokens.map((k) => k.text).join('|')])).toEqual([
      ['ab', 'a|b'],
      ['c', 'c|<eoa>'],
    ]);
    expect(plan.turns[1].tokens[0].prob).toBeCloseTo(0.5, 6);
  });
});

describe('envActionOf', () => {
  it('a grid agent\'s letters become grid actions (malformed: done, as the text adapter plays it); a tool env gets the text', () => {
    expect(['l', 'r', 'f', 'p', 'd', 't', 'n'].map((c) => envActionOf('grid', c))).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(envActionOf('grid', 'F')).toBe(6);
    expect(envActionOf('grid', '')).toBe(6);
    expect(envActionOf('tool', 'answer(1)')).toBe('answer(1)');
  });
});
