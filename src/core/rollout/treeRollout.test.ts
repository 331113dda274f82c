/**
 * Tree rollouts: the shared-prefix advantage on a hand-built tree (worked out below, by hand),
 * the branch points, and that replaying a prefix's actions on a fresh env from the same seed
 * reproduces the env's state (so a branch continues from where its trunk was).
 */
import { describe, expect, it } from 'vitest';
import { makeEnv } from '../envs/index.ts';
import type { Info, ToolEnv } from '../envs/types.ts';
import { EOA, encode } from '../text/codec.ts';
import { sharedPrefixSegments } from '../algos/treeAdvantages.ts';
import { sharePrefixes } from '../update/batchAdvantages.ts';
import { branchPoints, resumeRecord } from './treeRollout.ts';
import { initialContext, observationTokens, type TokenEpisode } from './tokenEpisode.ts';

/**
 * Plays `actions` on a fresh env from `seed`, with the expert's action where an entry is null, and
 * records the episode as a token context: the trunk a branch replays.
 */
function play(id: string, seed: number, actions: (string | null)[]): { ep: TokenEpisode; starts: number[]; infos: Info[] } {
  const env = makeEnv(id) as ToolEnv & { expertAction(): string | null };
  const first = env.reset({ seed }).obs.text;
  const ctx = initialContext(first);
  const mask = ctx.map(() => 0);
  const observations = [first];
  const done: string[] = [];
  const rewards: number[] = [];
  const infos: Info[] = [];
  const starts: number[] = [];
  for (const a of actions) {
    const text = a ?? env.expertAction()!;
    starts.push(ctx.length);
    const ids = [...encode(text, { unknown: 'unk' }), EOA];
    ctx.push(...ids);
    mask.push(...ids.map(() => 1));
    const res = env.step(text);
    done.push(text);
    rewards.push(res.reward);
    infos.push(res.info);
    observations.push(res.obs.text);
    if (res.terminated || res.truncated) break;
    const obs = observationTokens(res.obs.text);
    ctx.push(...obs);
    mask.push(...obs.map(() => 0));
  }
  const L = ctx.length;
  const ep = {
    envId: id, seed, group: 0, tokens: Int32Array.from(ctx), lossMask: Uint8Array.from(mask), logprobs: new Float32Array(L), entropies: new Float32Array(L),
    versions: new Int32Array(L), rewards: Float64Array.from(rewards), infos, actions: done, observations, forcedEnds: 0, turns: done.length,
    terminated: true, truncated: false, contextLimited: false, success: false, transcript: '',
  } satisfies TokenEpisode;
  return { ep, starts, infos };
}

describe('tree rollouts', () => {
  it('a shared prefix takes the mean advantage of the leaves that contain it (hand-built tree)', () => {
    // Trunk 0 (advantage 1.0); branches 1 and 2 from token 10 (−1.0, 0.5); branch 3 from token 20 (2.0).
    //   tokens [0, 10): in leaves 0, 1, 2, 3 → (1 − 1 + 0.5 + 2) / 4 = 0.625
    //   tokens [10, 20): in leaves 0, 3 → (1 + 2) / 2 = 1.5
    //   tokens from 20 on: the trunk's own, 1.0
    const adv = [1, -1, 0.5, 2];
    const links = [
      { trunk: 0, branch: 1, at: 10 },
      { trunk: 0, branch: 2, at: 10 },
      { trunk: 0, branch: 3, at: 20 },
    ];
    expect(sharedPrefixSegments(links, adv)).toEqual([
      { trunk: 0, from: 0, to: 10, advantage: 0.625 },
      { trunk: 0, from: 10, to: 20, advantage: 1.5 },
    ]);
    // On a batch row of 30 positions, trained where mask = 1 (token t is trained at position t − 1).
    const T = 30;
    const mask = Float32Array.from({ length: 4 * T }, (_, i) => (i < T ? (i % 3 === 0 ? 0 : 1) : 1));
    const a = new Float64Array(4 * T);
    for (let s = 0; s < 4; s++) a.fill(adv[s], s * T, (s + 1) * T);
    for (let i = 0; i < T; i++) if (!mask[i]) a[i] = 0;
    sharePrefixes({ starts: Int32Array.from([0, T, 2 * T, 3 * T]), mask }, a, adv, links);
    for (let t = 1; t < T; t++) {
      const want = !mask[t - 1] ? 0 : t < 10 ? 0.625 : t < 20 ? 1.5 : 1;
      expect(a[t - 1], `trunk token ${t}`).toBe(want);
    }
    // The branches' own rows are left alone (their prefix copies are untrained: see the next test).
    expect([a[T], a[2 * T], a[3 * T]]).toEqual([-1, 0.5, 2]);
  });

  it('a branch replays its trunk: same replies, the prefix untrained in the branch, so each shared token is trained once', () => {
    let replayed = 0;
    for (const id of ['tools/kv-lookup', 'tools/flaky-api', 'tools/calculator']) {
      for (const seed of [3, 11]) {
        const full = play(id, seed, [null, null, null, null, null, null]);
        if (full.starts.length < 2) continue;
        replayed++;
        const at = full.starts[1];
        const env = makeEnv(id) as ToolEnv;
        const r = resumeRecord(env, full.ep, at);
        expect(r.ctx, `${id} seed ${seed}`).toEqual(Array.from(full.ep.tokens.subarray(0, at)));
        expect(r.mask.every((m) => m === 0)).toBe(true);
        expect(r.observations).toEqual(full.ep.observations.slice(0, 2));
        expect(r.rewards).toEqual([full.ep.rewards[0]]);
        // The resumed env is in the trunk's state: the trunk's next action gets the trunk's reply.
        const res = env.step(full.ep.actions[1]);
        expect(res.obs.text, `${id} seed ${seed}`).toBe(full.ep.observations[2]);
        expect(res.reward).toBe(full.ep.rewards[1]);
      }
    }
    // The expert takes two or more turns on every one of these seeds.
    expect(replayed).toBe(6);
  });

  it('refuses to branch when the replay disagrees with the trunk (an env that is not deterministic)', () => {
    const full = play('tools/kv-lookup', 5, [null, null, null]);
    const tampered = { ...full.ep, observations: [full.ep.observations[0], 'result: something else', ...full.ep.observations.slice(2)] };
    expect(() => resumeRecord(makeEnv('tools/kv-lookup') as ToolEnv, tampered, full.starts[1])).toThrow(/replied .* the trunk saw/);
  });

  it('branch points: first tokens of turns after a tool reply above the threshold, the highest ones, in order', () => {
    const full = play('tools/kv-lookup', 7, ['lookup(nobody)', 'lookup(nobody again)', 'lookup(still nobody)', 'answer(oslo)']);
    const e = full.ep.entropies;
    // The first turn follows the task, not a tool reply: never a branch point, however unsure.
    e[full.starts[0]] = 3;
    e[full.starts[1]] = 1.2;
    e[full.starts[2]] = 0.4;
    e[full.starts[3]] = 2.5;
    e[full.starts[1] + 1] = 5; // not a turn's first token
    expect(branchPoints(full.ep, { entropyThreshold: 1, maxPoints: 4 })).toEqual([full.starts[1], full.starts[3]]);
    expect(branchPoints(full.ep, { entropyThreshold: 1, maxPoints: 1 })).toEqual([full.starts[3]]);
    expect(branchPoints(full.ep, { entropyThreshold: 3, maxPoints: 4 })).toEqual([]);
  });
});
