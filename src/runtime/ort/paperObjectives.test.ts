/**
 * The objectives as their papers write them, differentiated by central finite differences in
 * float64 over the policy graph's log-probs, against the train graph's gradient on the feeds the
 * trainers build, so each loss is the one its paper states, not an approximation of it:
 *
 * - GSPO on grid steps (Zheng et al. 2025): an episode is the sequence y_i, and a minibatch of k
 *   episodes is trained on −J(θ) = −(1/k) Σ_i min(s_i·Â_i, clip(s_i, 1 − ε_low, 1 + ε_high)·Â_i),
 *   s_i(θ) = exp((1/|y_i|) Σ_t log(π_θ(y_i,t)/π_old(y_i,t))) over all of the episode's steps.
 *   The feeds come from runUpdate (update/update.ts, packed rows: update/rowFeed.ts) with GSPO's default aggregation.
 * - Decoupled PPO (Hilton et al. 2022; AReaL): −J(θ) = −Σ_t w_t·min(r_t·A′_t, clip(r_t)·A′_t),
 *   r_t = π_θ/π_prox, A′_t = A_t·min(π_prox/μ_t, cap) on stale steps, π_prox the weights before
 *   the update for every minibatch. Checked at the second minibatch, after one step has moved
 *   the weights: there the learner's own forward pass (proximal 'self') is no longer π_prox.
 */
import { describe, expect, it } from 'vitest';
import { defaultsFor } from '../../core/algos/config.ts';
import type { Feed, Learner } from '../../core/engine/types.ts';
import { initWeights, type Weights } from '../../core/models/types.ts';
import { packedRowsBatch } from '../../core/update/batch.ts';
import { aggregationWeightsOf } from '../../core/update/batchAdvantages.ts';
import { runUpdate } from '../../core/update/update.ts';
import { buildTrainStep, next } from '../../core/update/trainStep.ts';
import { Rng } from '../../core/util/rng.ts';
import { rawTrainRunner } from './test/util.ts';
import { A, D, fdCheck, logprobsOf, mlp as model, ort } from './test/paperFd.ts';


describe('GSPO on grid steps: the paper objective, whole episodes', () => {
  it("each minibatch's gradient is ∇ of −(1/k) Σ_i min(s_i·Â_i, clip(s_i)·Â_i), s_i over the whole episode", { timeout: 60_000 }, async () => {
    const m = model();
    const w = initWeights(m, 3);
    const rng = new Rng(4);
    const lengths = [3, 5, 2, 6, 4, 4];
    const S = lengths.reduce((a, b) => a + b, 0);
    const B = 8; // three minibatches of whole episodes
    const episode = new Int32Array(S);
    lengths.reduce((o, T, e) => (episode.fill(e, o, o + T), o + T), 0);
    const obs = Float32Array.from({ length: S * D }, () => rng.random() * 2 - 1);
    const actions = Int32Array.from({ length: S }, () => rng.int(0, A));
    const policy = await logprobsOf(m, obs, actions);
    const lp0 = await policy.at(w);
    // π_old: each episode's log-probs shifted as a whole, so its ratio s_i lands on a chosen side
    // of the clip range: s = exp(−shift) ≈ 1.35, 1.35, 1.02, 0.98, 0.74, 0.74.
    const clip = { low: 0.05, high: 0.08 };
    const shifts = [-0.3, -0.3, -0.02, 0.02, 0.3, 0.3];
    // Cut (no gradient): episode 0 (s > 1 + ε, Â > 0) and 5 (s < 1 − ε, Â < 0); the others flow.
    const epAdv = [1, -1, 0.5, -0.8, 1.2, -0.7];
    const oldLogp = Float32Array.from(lp0, (x, r) => x + shifts[episode[r]] + 0.02 * rng.normal());
    const advantages = Float64Array.from({ length: S }, (_, r) => epAdv[episode[r]]);
    const batch = packedRowsBatch(lengths, { D, obs, actions }, oldLogp, 100);
    const algo = { ...defaultsFor('gspo'), clipLow: clip.low, clipHigh: clip.high, entropyCoef: 0 };
    const weights = aggregationWeightsOf(batch, algo);
    const feeds: Record<string, Feed>[] = [];
    const recorder: Learner = {
      batch: B, hyper: {},
      async step(b) {
        feeds.push(Object.fromEntries(Object.entries(b).map(([k, v]) => [k, (v as Float32Array | Int32Array).slice()])));
        return { metrics: {}, applied: true, logprobs: new Float32Array(B) };
      },
      async getWeights() { return {}; },
      setWeights() {},
      async release() {},
    };
    await runUpdate(recorder, algo, batch, { oldLogp, advantages, weights, refLogp: null }, new Rng(7), { logprobs: oldLogp, mask: new Float32Array(S) });
    expect(feeds.length).toBeGreaterThanOrEqual(3);

    const spec = buildTrainStep(m, { batch: B, loss: { kind: 'policy-gradient', objective: 'gspo', clipLow: clip.low, clipHigh: clip.high, entropyCoef: 0 }, exposeGradients: true });
    const run = await rawTrainRunner(ort, spec);
    let cutSeen = 0;
    for (const f of feeds) {
      const eps = [...new Set(Array.from({ length: B }, (_, j) => j).filter((j) => (f.mask as Float32Array)[j]).map((j) => episode[rowOf(obs, f.obs as Float32Array, j)]))];
      // The paper's objective over these episodes, every ratio over all of its episode's steps.
      const negJ = async (wt: Weights) => {
        const lp = await policy.at(wt);
        let J = 0;
        for (const i of eps) {
          let sum = 0;
          for (let r = 0; r < S; r++) if (episode[r] === i) sum += lp[r] - oldLogp[r];
          const s = Math.exp(sum / lengths[i]);
          J += Math.min(s * epAdv[i], Math.min(Math.max(s, 1 - clip.low), 1 + clip.high) * epAdv[i]);
        }
        return -J / eps.length;
      };
      const got = await run({ weights: w }, f);
      expect(got.pg_loss[0]).toBeCloseTo(await negJ(w), 5);
      const { worst, scale } = await fdCheck(m, w, got, negJ, 24, eps[0]);
      expect(worst).toBeLessThan(5e-3);
      if (eps.some((i) => i === 0 || i === 5)) cutSeen++;
      if (!eps.every((i) => i === 0 || i === 5)) expect(scale).toBeGreaterThan(1e-3);
    }
    expect(cutSeen).toBeGreaterThan(0);
    await policy.release();
  });
});

/** Which row of the full batch a fed row is (rows carry distinct observations). */
function rowOf(all: Float32Array, fed: Float32Array, j: number): number {
  const S = all.length / D;
  for (let r = 0; r < S; r++) {
    let same = true;
    for (let d = 0; d < D && same; d++) same = all[r * D + d] === fed[j * D + d];
    if (same) return r;
  }
  throw new Error(`fed row ${j} is not in the batch`);
}

describe('decoupled PPO: π_prox fixed for the whole update', () => {
  it('the second minibatch, after a step: gradient of Hilton et al.\'s objective with π_prox = the pre-update weights; the learner\'s own forward pass is not it', { timeout: 60_000 }, async () => {
    const m = model();
    const B = 16;
    const rng = new Rng(9);
    const wBehaviour = initWeights(m, 5); // the stale rows' sampler
    const w0 = initWeights(m, 6); // the learner at version V: π_prox
    const obs = Float32Array.from({ length: 2 * B * D }, () => rng.random() * 2 - 1);
    const actions = Int32Array.from({ length: 2 * B }, () => rng.int(0, A));
    const policy = await logprobsOf(m, obs, actions);
    const prox = await policy.at(w0);
    const behaviour = await policy.at(wBehaviour);
    // Odd rows stale (sampled by older weights), even rows fresh (μ = π_prox).
    const mu = Float32Array.from({ length: 2 * B }, (_, r) => (r % 2 ? behaviour[r] : prox[r]));
    const adv = Float64Array.from({ length: 2 * B }, () => rng.normal());
    const cap = 1.5;
    const clip = { low: 0.2, high: 0.28 };
    // The trainer's feeds (π_prox computed once): π_old = π_prox, A′ = A·min(π_prox/μ, cap).
    const isW = Float64Array.from(mu, (x, r) => Math.min(Math.exp(prox[r] - x), cap));
    const feed = (c: number, oldOf: (r: number) => number, advOf: (r: number) => number, proxMask?: (r: number) => number): Record<string, Feed> => ({
      obs: obs.slice(c * B * D, (c + 1) * B * D),
      actions: actions.slice(c * B, (c + 1) * B),
      advantages: Float32Array.from({ length: B }, (_, j) => advOf(c * B + j)),
      old_logprobs: Float32Array.from({ length: B }, (_, j) => oldOf(c * B + j)),
      weights: new Float32Array(B).fill(1 / B),
      mask: new Float32Array(B).fill(1),
      ...(proxMask ? { prox_mask: Float32Array.from({ length: B }, (_, j) => proxMask(c * B + j)) } : {}),
    });
    const exact = (c: number) => feed(c, (r) => prox[r], (r) => adv[r] * isW[r]);
    const loss = { kind: 'policy-gradient' as const, clipLow: clip.low, clipHigh: clip.high, entropyCoef: 0 };
    const fed = await rawTrainRunner(ort, buildTrainStep(m, { batch: B, loss, adam: { lr: 0.05, maxGradNorm: 0 }, exposeGradients: true }));
    // Step 1 moves the weights: w1.
    const s1 = await fed({ weights: w0 }, exact(0));
    const w1: Weights = Object.fromEntries(m.params.map((p) => [p.name, s1[next(p.name)]]));
    // Step 2 at w1, π_prox still the weights before the update.
    const got = await fed({ weights: w1 }, exact(1));
    const hilton = (proxLp: Float64Array) => async (wt: Weights) => {
      const lp = await policy.at(wt);
      let J = 0;
      for (let r = B; r < 2 * B; r++) {
        const ratio = Math.exp(lp[r] - proxLp[r]);
        const a = adv[r] * Math.min(Math.exp(proxLp[r] - mu[r]), cap);
        J += Math.min(ratio * a, Math.min(Math.max(ratio, 1 - clip.low), 1 + clip.high) * a) / B;
      }
      return -J;
    };
    const negJ = hilton(prox);
    expect(got.pg_loss[0]).toBeCloseTo(await negJ(w1), 5);
    const { worst, scale } = await fdCheck(m, w1, got, negJ, 24, 11);
    expect(worst).toBeLessThan(5e-3);
    expect(scale).toBeGreaterThan(1e-3);
    // The step moved the weights enough that some stale ratios left the trust region.
    const lp1 = await policy.at(w1);
    let outside = 0;
    for (let r = B + 1; r < 2 * B; r += 2) if (Math.abs(lp1[r] - prox[r]) > Math.log(1 + clip.low)) outside++;
    expect(outside).toBeGreaterThan(0);

    // Proximal 'self' at w1 takes π_old = π_{w1} on the stale rows: ratio 1, never clipped. It
    // computes Hilton's objective for π_prox = π_{w1}, a different one (what one minibatch gets right).
    const self = await rawTrainRunner(ort, buildTrainStep(m, { batch: B, loss: { ...loss, proximal: 'self', tisCap: cap }, exposeGradients: true }));
    const selfGot = await self({ weights: w1 }, feed(1, (r) => mu[r], (r) => adv[r], (r) => r % 2));
    const moved = Float64Array.from(lp1, (x, r) => (r % 2 ? x : prox[r]));
    expect(selfGot.pg_loss[0]).toBeCloseTo(await hilton(moved)(w1), 5);
    expect(Math.abs(selfGot.pg_loss[0] - got.pg_loss[0])).toBeGreaterThan(1e-3);
    await policy.release();
  });
});
