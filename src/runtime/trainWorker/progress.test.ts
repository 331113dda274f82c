/**
 * The training worker's progress wrappers: a sliced scorer scores exactly what the whole-batch
 * call scores (a real QuickJS sandbox, a term with module state), reports between slices and
 * adapts the slice to the time per episode; the engine wrapper reports per session run and
 * leaves every member of the sessions as it was.
 */
import { describe, expect, it } from 'vitest';
import { makeEnv } from '../../core/envs/index.ts';
import type { GridEnv } from '../../core/envs/types.ts';
import { sampleGridEpisode } from '../../core/reward/stepRecord.ts';
import type { RawTermScores, RewardTermsScorer } from '../../core/reward/rewardTerms.ts';
import type { Engine, Learner, PolicyRunner, TokenDecoder } from '../../core/engine/types.ts';
import { createRewardSandbox } from '../rewardSandbox/quickjs.ts';
import { progressEngine, progressLab, slicedScorer } from './progress.ts';

const env = makeEnv('grid/empty-8x8') as GridEnv;
const episodes = Array.from({ length: 23 }, (_, i) => sampleGridEpisode(env, 'grid/empty-8x8', 100 + i, [2, 1, 2, 0, 2, 2, 2, 1, 2].slice(0, 3 + (i % 7))));
const CODE = `
let calls = 0;
export const order = (s) => ++calls;
export const closer = (s) => (s.state.goalDistance === null ? 0 : -0.1 * s.state.goalDistance) + 0.001 * s.episode.seed;
`;
const plain = (r: RawTermScores[]) => r.map((x) => ({ values: Object.fromEntries(Object.entries(x.values).map(([k, v]) => [k, Array.from(v)])), bad: x.bad }));

describe('slicedScorer', () => {
  it('scores what one whole-batch call scores, in order (module state included), reporting between slices', async () => {
    const whole = await createRewardSandbox(CODE);
    const want = plain(await whole.score(episodes));
    whole.close();
    const inner = await createRewardSandbox(CODE);
    const stages: string[] = [];
    const sizes: number[] = [];
    const counting: RewardTermsScorer = { ...inner, terms: inner.terms, lineOf: (t) => inner.lineOf(t), close: () => inner.close(), score: (eps) => (sizes.push(eps.length), inner.score(eps)) };
    // A fake clock: each slice "takes" 100 ms per episode, so with 250 ms slices the size settles at 2.
    let t = 0;
    const sliced = slicedScorer(counting, (s) => stages.push(s), { sliceMs: 250, firstSlice: 4, now: () => (t += 50) });
    expect(sliced.terms).toEqual(['order', 'closer']);
    expect(sliced.lineOf('closer')).toBe(4);
    const got = plain(await sliced.score(episodes));
    expect(got).toEqual(want);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(episodes.length);
    expect(sizes.length).toBeGreaterThan(1);
    expect(stages[0]).toBe(`scoring reward terms (episodes 1–${sizes[0]} of 23)`);
    expect(stages.at(-1)).toBe('scored reward terms (23 episodes)');
    expect(stages).toHaveLength(sizes.length + 1);
    sliced.close();
  });

  it('the slice adapts to the time per episode: slow terms, one episode a slice; fast ones, slices that grow (at most doubling)', async () => {
    const sizes: number[] = [];
    let msPerEpisode = 400;
    let t = 0;
    let last = 0;
    const fake: RewardTermsScorer = {
      terms: ['x'],
      lineOf: () => null,
      close: () => undefined,
      score: async (eps) => {
        sizes.push(eps.length);
        t += msPerEpisode * eps.length;
        return eps.map(() => ({ values: {}, bad: [] }));
      },
    };
    const sliced = slicedScorer(fake, () => undefined, { sliceMs: 250, firstSlice: 4, now: () => (last = t) });
    void last;
    await sliced.score(episodes.slice(0, 8));
    expect(sizes).toEqual([4, 1, 1, 1, 1]);
    sizes.length = 0;
    msPerEpisode = 1;
    await sliced.score(episodes);
    expect(sizes).toEqual([1, 2, 4, 8, 8]);
  });

  it('interrupt() reaches the sandbox: a slow batch stops at its next slice with ScoringInterrupted', async () => {
    // 4 ms a call, 23 episodes of 3–9 steps: seconds of scoring, in slices of ~60 ms.
    const inner = await createRewardSandbox('export const slow = (s) => { const t = Date.now(); while (Date.now() - t < 4) {} return 0; };');
    const sliced = slicedScorer(inner, () => undefined, { sliceMs: 60, firstSlice: 1 });
    const t0 = performance.now();
    const scoring = sliced.score(episodes);
    setTimeout(() => sliced.interrupt?.(), 100);
    await expect(scoring).rejects.toThrow(/scoring was interrupted/);
    expect(performance.now() - t0).toBeLessThan(1500);
    sliced.close();
  });

  it('a failing slice fails the whole score with its error; progressLab passes null through', async () => {
    const inner = await createRewardSandbox('export const boom = (s) => { if (s.episode.seed === 110) throw new Error("bad seed"); return 0; };');
    const sliced = slicedScorer(inner, () => undefined, { firstSlice: 2 });
    await expect(sliced.score(episodes)).rejects.toThrow(/bad seed/);
    sliced.close();
    expect(progressLab(null, () => undefined)).toBeNull();
    expect(progressLab(undefined, () => undefined)).toBeUndefined();
  });
});

describe('progressEngine', () => {
  it('reports every build and session run, and leaves the sessions as they were (fields, setters, optional members)', async () => {
    const stages: string[] = [];
    class FakeLearner {
      readonly batch = 8;
      readonly hyper = { lr: 0.1 };
      private steps = 0;
      async step() {
        this.steps++;
        return { metrics: { n: this.steps }, applied: true, logprobs: new Float32Array(1) };
      }
      async getWeights() {
        return {};
      }
      setWeights() {}
      async release() {}
    }
    const policy = { batch: 4, version: 0, setWeights() {}, run: async () => ({ logprobs: new Float32Array(4) }), release: async () => undefined };
    const decoder = { batch: 2, steps: [1], context: 8, vocab: 3, version: 0, reset() {}, next: async () => ({ logprobs: new Float32Array(6) }), setWeights() {}, release: async () => undefined };
    const engine: Engine = {
      name: 'fake',
      createLearner: async () => new FakeLearner() as unknown as Learner,
      createPolicy: async () => policy as PolicyRunner,
      createDecoder: async () => decoder as unknown as TokenDecoder,
    };
    const wrapped = progressEngine(engine, (s) => stages.push(s));
    expect(wrapped.name).toBe('fake');
    const l = await wrapped.createLearner(null as never, null as never, {});
    expect(stages).toEqual(['building the learner session', 'building the learner session']);
    const lr = l.hyper;
    lr.lr = 0.5;
    expect(l.hyper).toBe(lr);
    expect((await l.step({})).metrics.n).toBe(1);
    expect((await l.step({})).metrics.n).toBe(2);
    expect(stages.slice(2)).toEqual(['train step', 'train step', 'train step', 'train step']);
    expect(l.batch).toBe(8);
    const p = await wrapped.createPolicy(null as never, 4, {});
    p.version = 7;
    expect(policy.version).toBe(7);
    await p.run({});
    expect(stages.slice(-4)).toEqual(['building a policy session', 'building a policy session', 'policy inference', 'policy inference']);
    const d = await wrapped.createDecoder(null as never, 2, {});
    expect(d.copyPrefix).toBeUndefined();
    expect('copyPrefix' in d).toBe(false);
    await d.next(new Int32Array(2), new Int32Array(2));
    expect(stages.at(-1)).toBe('decoding');
  });
});
