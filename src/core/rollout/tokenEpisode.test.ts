/** The turn-end handling both token agent loops share, on hand-built records. */
import { describe, expect, it } from 'vitest';
import { EOA, OBS, encode } from '../text/codec.ts';
import { appendSample, applyReply, startEpisode, takeActionToken, truncateToContext } from './tokenEpisode.ts';

function rec() {
  const r = startEpisode('go');
  return { ...r, action: [] as number[], val: r.ctx.map(() => 0) };
}
const reply = (over: Partial<{ reward: number; terminated: boolean; truncated: boolean; text: string }> = {}) => ({
  obs: { text: over.text ?? 'ok' }, reward: over.reward ?? 0.5, terminated: over.terminated ?? false, truncated: over.truncated ?? false, info: {},
});

describe('takeActionToken', () => {
  it('collects ids until <eoa>, then returns the text and clears the action', () => {
    const r = rec();
    const [a, b] = encode('ab', { unknown: 'unk' });
    expect(takeActionToken(r, a, 8)).toBeNull();
    expect(takeActionToken(r, b, 8)).toBeNull();
    expect(takeActionToken(r, EOA, 8)).toBe('ab');
    expect(r.action).toEqual([]);
    expect(r.forcedEnds).toBe(0);
  });
  it('ends the action at maxActionTokens without <eoa> (a forced end, counted)', () => {
    const r = rec();
    const [a] = encode('a', { unknown: 'unk' });
    expect(takeActionToken(r, a, 2)).toBeNull();
    expect(takeActionToken(r, a, 2)).toBe('aa');
    expect(r.forcedEnds).toBe(1);
  });
});

describe('applyReply', () => {
  it('appends <obs> + the reply as environment tokens and records reward, info and text', () => {
    const r = rec();
    const n0 = r.ctx.length;
    expect(applyReply(r, reply(), 100)).toBe('nextTurn');
    const added = [OBS, ...encode('ok', { unknown: 'unk' })];
    expect(r.ctx.slice(n0)).toEqual(added);
    expect(r.mask.slice(n0)).toEqual(added.map(() => 0));
    expect(r.ver.slice(n0)).toEqual(added.map(() => -1));
    expect(r.val.slice(n0)).toEqual(added.map(() => 0));
    expect(r.rewards).toEqual([0.5]);
    expect(r.observations).toEqual(['go', 'ok']);
  });
  it("'ended' on termination (no tokens appended); 'contextFull' when the reply fills the context", () => {
    const r = rec();
    const n0 = r.ctx.length;
    expect(applyReply(r, reply({ terminated: true }), 100)).toBe('ended');
    expect(r.ctx.length).toBe(n0);
    expect(r.terminated).toBe(true);
    const s = rec();
    expect(applyReply(s, reply({ text: 'a long reply' }), s.ctx.length + 2)).toBe('contextFull');
    expect(s.ctx.length).toBe(n0 + 2);
  });
});

describe('appendSample and truncateToContext', () => {
  it('records a policy token, and truncation cuts every per-token list and marks the episode', () => {
    const r = rec();
    const n0 = r.ctx.length;
    appendSample(r, { action: 9, logprob: -0.5, entropy: 1 }, 3, 0.25);
    expect([r.ctx.at(-1), r.mask.at(-1), r.logp.at(-1), r.ent.at(-1), r.ver.at(-1), r.val.at(-1)]).toEqual([9, 1, -0.5, 1, 3, 0.25]);
    truncateToContext(r, n0);
    expect([r.ctx.length, r.mask.length, r.logp.length, r.ent.length, r.ver.length, r.val.length]).toEqual([n0, n0, n0, n0, n0, n0]);
    expect(r.truncated && r.contextLimited).toBe(true);
  });
});
