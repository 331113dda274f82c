/**
 * The token update's two shortcuts against the long way round (ort-web WASM, a tiny transformer):
 * - length buckets: a train step or a scoring pass over T' < context positions equals the full
 *   context's on every masked position (causal attention: later positions cannot matter);
 * - proximal 'self': π_old and the TIS weight taken from the learner's own forward pass equal
 *   feeding them (π_old = the learner's log-probs from a separate scoring pass, advantage ×
 *   min(π_old/μ, cap) computed in JS).
 */
import { describe, expect, it } from 'vitest';
import { defaultsFor } from '../../core/algos/config.ts';
import { truncatedIsWeights } from '../../core/update/importanceWeights.ts';
import { TransformerPolicy } from '../../core/models/transformer.ts';
import { initWeights, type Weights } from '../../core/models/types.ts';
import { PAD, VOCAB_SIZE } from '../../core/text/codec.ts';
import { trainStepOptions } from '../../core/update/hyper.ts';
import type { Feed, Learner, LearnerStep } from '../../core/engine/types.ts';
import { lengthBuckets, neededLengths, sequenceLogprobs, SequenceScorer, sharedPrefixes } from '../../core/update/sequenceScorer.ts';
import type { AlgoConfig } from '../../core/algos/config.ts';
import type { RolloutBatch } from '../../core/update/batch.ts';
import { runUpdate } from '../../core/update/update.ts';

/** Per-token rows of n sequences × T positions, as the cases below build them. */
interface TokenUpdateBatch {
  n: number;
  T: number;
  tokens: Int32Array;
  actions: Int32Array;
  mask: Float32Array;
  oldLogprobs: Float32Array;
  advantages: Float64Array;
  weights: Float64Array;
  refLogprobs: Float32Array | null;
  /** Equal groups of this many sequences sharing a prompt. */
  groupSize?: number;
  /** Further per-token train-graph inputs (e.g. `prox_mask`). */
  extra?: Record<string, Float32Array>;
}

/** The update phase on those sequences (a rollout batch fed as padded sequences). */
function runTokenUpdate(learner: Learner, algo: AlgoConfig, b: TokenUpdateBatch, rng: Rng) {
  const { n, T } = b;
  const batch: RolloutBatch = {
    n, starts: Int32Array.from({ length: n }, (_, s) => s * T), lengths: new Int32Array(n).fill(T), size: n * T, mask: b.mask, mu: b.oldLogprobs,
    versions: new Int32Array(n * T), values: new Float32Array(n * T), turnEnd: new Uint8Array(n * T), bootstrap: new Float64Array(n), terminated: new Uint8Array(n),
    groups: new Int32Array(n).fill(-1), horizon: T, rewards: new Float64Array(n * T), scores: new Float64Array(n), stepCounts: new Int32Array(n), termScores: {}, feed: { kind: 'sequences', T, V: VOCAB_SIZE, tokens: b.tokens, actions: b.actions, groupSize: b.groupSize },
  };
  return runUpdate(learner, algo, batch, { oldLogp: b.oldLogprobs, advantages: b.advantages, weights: b.weights, refLogp: b.refLogprobs, extra: b.extra }, rng, { logprobs: b.oldLogprobs, mask: b.mask });
}
import { Rng } from '../../core/util/rng.ts';
import { loadNodeEngine } from './node.ts';

const CTX = 64;
const model = new TransformerPolicy({ vocabSize: VOCAB_SIZE, dModel: 16, nLayers: 1, nHeads: 2, dFF: 32, context: CTX });

/** n sequences of the given lengths (tokens then PAD), every other position after the 4th masked. */
function batch(lengths: number[], seed: number): TokenUpdateBatch {
  const rng = new Rng(seed);
  const n = lengths.length;
  const T = CTX;
  const advantages = new Float64Array(n * T);
  const weights = new Float64Array(n * T);
  const b: TokenUpdateBatch = {
    n,
    T,
    tokens: new Int32Array(n * T).fill(PAD),
    actions: new Int32Array(n * T),
    mask: new Float32Array(n * T),
    oldLogprobs: new Float32Array(n * T),
    advantages,
    weights,
    refLogprobs: null,
  };
  lengths.forEach((L, s) => {
    const adv = rng.normal();
    for (let t = 0; t < L; t++) b.tokens[s * T + t] = rng.int(5, 45);
    for (let t = 0; t + 1 < L; t++) {
      const i = s * T + t;
      b.actions[i] = b.tokens[i + 1];
      if (t >= 4 && t % 2 === 0) {
        b.mask[i] = 1;
        advantages[i] = adv;
        weights[i] = 1 / 50;
        b.oldLogprobs[i] = -Math.log(VOCAB_SIZE) + 0.3 * rng.normal();
      }
    }
  });
  return b;
}

/** Records the sequence length of every step. */
function spy(l: Learner): Learner & { lens: (number | undefined)[]; prefixes: (number | undefined)[] } {
  const lens: (number | undefined)[] = [];
  const prefixes: (number | undefined)[] = [];
  return {
    lens,
    prefixes,
    batch: l.batch,
    seqLens: l.seqLens,
    prefixGroups: l.prefixGroups,
    hyper: l.hyper,
    step: (f: Readonly<Record<string, Feed>>, T?: number, P?: number): Promise<LearnerStep> => {
      lens.push(T);
      prefixes.push(P);
      return l.step(f, T, P);
    },
    getWeights: () => l.getWeights(),
    setWeights: (w, r) => l.setWeights(w, r),
    release: () => l.release(),
  };
}

/**
 * ‖(b − w0) − (a − w0)‖ / ‖a − w0‖ over all parameters: how far two updates from w0 differ.
 * (Adam's first step is ≈ lr·sign(g), so single elements with |g| near 0 may flip between two
 * float-equivalent gradients; the update as a whole must not move.)
 */
function updateDiff(w0: Weights, a: Weights, b: Weights): number {
  let num = 0, den = 0;
  for (const k of Object.keys(w0)) {
    for (let i = 0; i < w0[k].length; i++) {
      num += (b[k][i] - a[k][i]) ** 2;
      den += (a[k][i] - w0[k][i]) ** 2;
    }
  }
  return Math.sqrt(num / den);
}

function maxRelDiff(a: Weights, b: Weights): number {
  let worst = 0;
  for (const k of Object.keys(a)) for (let i = 0; i < a[k].length; i++) worst = Math.max(worst, Math.abs(a[k][i] - b[k][i]) / (1e-3 + Math.abs(a[k][i])));
  return worst;
}

describe('token update shortcuts (ort-web WASM)', () => {
  it('lengthBuckets and neededLengths', () => {
    expect(lengthBuckets(256)).toEqual([32, 64, 96, 128, 160, 192, 224, 256]);
    expect(lengthBuckets(100, 32)).toEqual([32, 64, 96, 100]);
    const mask = Float32Array.from([0, 1, 0, 0, /**/ 0, 0, 0, 0, /**/ 1, 0, 0, 1]);
    expect([...neededLengths(mask, 3, 4)]).toEqual([2, 1, 4]);
  });

  it('length buckets: the same step and scores as the full context', async () => {
    const engine = await loadNodeEngine('ort-web-wasm');
    const w = initWeights(model, 7);
    const algo = { ...defaultsFor('grpo'), lr: 1e-2 };
    const opts = trainStepOptions({ ...algo, valueCoef: 0 }, 4);
    const b = batch([20, 30, 12, 25], 1); // all ≤ 32: one minibatch at T' = 32
    const full = spy(await engine.createLearner(model, opts, w));
    const short = spy(await engine.createLearner(model, opts, w, [32, 48]));
    expect(short.seqLens).toEqual([32, 48, CTX]);
    const rf = await runTokenUpdate(full, algo, b, new Rng(3));
    const rs = await runTokenUpdate(short, algo, b, new Rng(3));
    expect(full.lens).toEqual([undefined]);
    expect(short.lens).toEqual([32]);
    for (const k of ['actor/pg_loss', 'actor/entropy', 'actor/grad_norm']) expect(rs.metrics[k]).toBeCloseTo(rf.metrics[k], 5);
    expect(maxRelDiff(await full.getWeights(), await short.getWeights())).toBeLessThan(1e-4);
    for (let i = 0; i < b.n * b.T; i++) if (b.mask[i]) expect(Math.abs(rs.stepLogprobs[i] - rf.stepLogprobs[i])).toBeLessThan(1e-5);

    // Mixed lengths over two minibatches: grouped by bucket, each at the shortest that holds it.
    const mixed = batch([60, 10, 40, 20, 30, 50, 15, 33], 2);
    const s2 = spy(await engine.createLearner(model, opts, w, [32, 48]));
    await runTokenUpdate(s2, algo, mixed, new Rng(4));
    expect(s2.lens).toEqual([32, undefined]); // lengths 10, 15, 20, 30 | 33, 40, 50, 60

    // Scoring: every masked position equals the full-context pass; unscored rows stay 0.
    const scorer = new SequenceScorer(engine, model, 3, w, [32, 48, CTX]);
    const runner = await engine.createPolicy(model, 3, w);
    const want = await sequenceLogprobs(runner, mixed.tokens, mixed.actions, mixed.n, CTX, VOCAB_SIZE);
    const got = await scorer.logprobs({ tokens: mixed.tokens, actions: mixed.actions, mask: mixed.mask, n: mixed.n, T: CTX, V: VOCAB_SIZE }, [0, 1, 2, 4, 5, 6, 7]);
    let on = 0;
    for (let i = 0; i < mixed.n * CTX; i++) {
      if (!mixed.mask[i]) continue;
      if (Math.floor(i / CTX) === 3) expect(got[i]).toBe(0);
      else {
        expect(Math.abs(got[i] - want[i])).toBeLessThan(1e-5);
        on++;
      }
    }
    expect(on).toBeGreaterThan(100);
    await Promise.all([full.release(), short.release(), s2.release(), scorer.release(), runner.release()]);
  });

  it('shared prefixes: each group runs its prompt once, for the same step as whole sequences', async () => {
    // Two layers: the prefix's keys/values come from a full block (layer 0) and from the last
    // layer's projections alone (layer 1).
    const deep = new TransformerPolicy({ vocabSize: VOCAB_SIZE, dModel: 16, nLayers: 2, nHeads: 2, dFF: 32, context: CTX });
    const engine = await loadNodeEngine('ort-web-wasm');
    const w = initWeights(deep, 11);
    const algo = { ...defaultsFor('grpo'), lr: 1e-2, minibatches: 1 };
    const opts = trainStepOptions({ ...algo, valueCoef: 0 }, 8);
    // Groups of 4 with prompts of 20 and 13 tokens; the first policy token follows the prompt
    // (mask from position prompt − 1), and one sequence of group 0 repeats its sibling's first
    // policy tokens (the shared prefix must still stop at the first masked position).
    const prompts = [20, 13];
    const lengths = [40, 55, 33, 47, 30, 60, 25, 44];
    const rng = new Rng(5);
    const b: TokenUpdateBatch = { ...batch(lengths, 6), groupSize: 4 };
    const adv = b.advantages as Float64Array;
    const wts = b.weights as Float64Array;
    for (let g = 0; g < 2; g++) {
      const prompt = Array.from({ length: prompts[g] }, () => rng.int(5, 45));
      for (let k = 0; k < 4; k++) b.tokens.set(prompt, (g * 4 + k) * CTX);
      if (g === 0) b.tokens.copyWithin(prompts[0], CTX + prompts[0], CTX + prompts[0] + 6);
      for (let k = 0; k < 4; k++) {
        const s = g * 4 + k;
        for (let t = 0; t + 1 < lengths[s]; t++) {
          const i = s * CTX + t;
          b.actions[i] = b.tokens[i + 1];
          if (t < prompts[g] - 1) {
            // Prompt positions: off the loss, as a trainer's batch has them.
            b.mask[i] = 0;
            adv[i] = wts[i] = b.oldLogprobs[i] = 0;
          } else if (t === prompts[g] - 1) {
            b.mask[i] = 1;
            adv[i] = adv[i + 1] || 0.5;
            wts[i] = 1 / 50;
            b.oldLogprobs[i] = -Math.log(VOCAB_SIZE);
          }
        }
      }
    }
    expect([...sharedPrefixes(b, 4, 48)]).toEqual([19, 12]);
    const whole = spy(await engine.createLearner(deep, opts, w, [32, 48]));
    const shared = spy(await engine.createLearner(deep, opts, w, [32, 48], 2));
    const rw = await runTokenUpdate(whole, algo, b, new Rng(3));
    const rs = await runTokenUpdate(shared, algo, b, new Rng(3));
    expect(whole.lens).toEqual([undefined]); // up to 60 positions: the whole context
    expect(shared.lens).toEqual([48]); // suffixes of ≤ 60 − 12 positions …
    expect(shared.prefixes).toEqual([32]); // … after prefixes of ≤ 19 tokens
    for (const k of ['actor/pg_loss', 'actor/entropy', 'actor/grad_norm', 'actor/approx_kl']) expect(rs.metrics[k]).toBeCloseTo(rw.metrics[k], 5);
    expect(updateDiff(w, await whole.getWeights(), await shared.getWeights())).toBeLessThan(1e-3);
    let on = 0;
    for (let i = 0; i < b.n * b.T; i++) {
      if (!b.mask[i]) continue;
      expect(Math.abs(rs.stepLogprobs[i] - rw.stepLogprobs[i])).toBeLessThan(1e-5);
      on++;
    }
    expect(on).toBeGreaterThan(100);
    expect(rs.mismatch!.absDiffMax).toBeCloseTo(rw.mismatch!.absDiffMax, 5);

    // Scoring whole groups (the reference policy's pass): the same log-probs as whole sequences,
    // for 3 groups on a runner of 2 (the last call pads with an empty group).
    const three: TokenUpdateBatch = { ...b, n: 12, tokens: new Int32Array(12 * CTX), actions: new Int32Array(12 * CTX), mask: new Float32Array(12 * CTX) };
    for (const k of ['tokens', 'actions', 'mask'] as const) {
      three[k].set(b[k]);
      three[k].set(b[k].subarray(0, 4 * CTX), 8 * CTX);
    }
    const byGroup = new SequenceScorer(engine, deep, 8, w, [32, 48, CTX]);
    const plain = new SequenceScorer(engine, deep, 8, w, [32, 48, CTX]);
    const sb = { tokens: three.tokens, actions: three.actions, mask: three.mask, n: 12, T: CTX, V: VOCAB_SIZE };
    const [got, want] = await Promise.all([byGroup.logprobs({ ...sb, groupSize: 4 }), plain.logprobs(sb)]);
    let scored = 0;
    for (let i = 0; i < 12 * CTX; i++) {
      if (!three.mask[i]) continue;
      expect(Math.abs(got[i] - want[i])).toBeLessThan(1e-5);
      scored++;
    }
    expect(scored).toBeGreaterThan(150);
    await Promise.all([whole.release(), shared.release(), byGroup.release(), plain.release()]);
  });

  it("proximal 'self': the learner's own π_old and TIS weight equal feeding them", async () => {
    const engine = await loadNodeEngine('ort-web-wasm');
    const w = initWeights(model, 9);
    const algo = { ...defaultsFor('grpo'), lr: 1e-2, tis: { enabled: true, cap: 1.5 } };
    const b = batch([40, 50, 30, 64], 5);
    // Tokens of sequences 1 and 3 are "stale": their π_old is the learner's π, TIS-weighted.
    const prox = new Float32Array(b.n * b.T);
    for (const s of [1, 3]) for (let t = 0; t < b.T; t++) prox[s * b.T + t] = b.mask[s * b.T + t];
    const base = trainStepOptions({ ...algo, valueCoef: 0 }, 4);
    const self = await engine.createLearner(model, { ...base, loss: { ...base.loss!, kind: 'policy-gradient', proximal: 'self', tisCap: 1.5 } }, w);
    const fed = await engine.createLearner(model, base, w);
    const rs = await runTokenUpdate(self, algo, { ...b, extra: { prox_mask: prox } }, new Rng(1));

    const runner = await engine.createPolicy(model, 4, w);
    const pi = await sequenceLogprobs(runner, b.tokens, b.actions, b.n, b.T, VOCAB_SIZE);
    const old = b.oldLogprobs.slice();
    const adv = Float64Array.from(b.advantages);
    const tis = truncatedIsWeights(pi, b.oldLogprobs, b.mask, 1.5);
    let clipped = 0;
    for (let i = 0; i < b.n * b.T; i++) {
      if (!prox[i]) continue;
      old[i] = pi[i];
      adv[i] *= tis.weights[i];
      if (tis.weights[i] === 1.5) clipped++;
    }
    expect(clipped).toBeGreaterThan(0); // the cap is exercised
    const rf = await runTokenUpdate(fed, algo, { ...b, oldLogprobs: old, advantages: adv }, new Rng(1));
    expect(rs.metrics['actor/pg_loss']).toBeCloseTo(rf.metrics['actor/pg_loss'], 5);
    expect(rs.metrics['actor/approx_kl']).toBeCloseTo(rf.metrics['actor/approx_kl'], 6);
    const wFed = await fed.getWeights();
    expect(updateDiff(w, wFed, await self.getWeights())).toBeLessThan(1e-3);
    // And it is not a no-op: training stale tokens against μ instead gives another update.
    const mu = await engine.createLearner(model, base, w);
    await runTokenUpdate(mu, algo, b, new Rng(1));
    expect(updateDiff(w, wFed, await mu.getWeights())).toBeGreaterThan(0.05);
    await Promise.all([self.release(), fed.release(), mu.release(), runner.release()]);
  });
});
