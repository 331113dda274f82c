/**
 * The multi-turn token agent loop on a real decoder (ort-web WASM in Node): what it records is
 * what the model was fed (TITO), environment tokens are masked, each token is fed once (no
 * re-prefill), rows reset independently, and the cached log-probs equal a full recompute by the
 * train-step graph.
 */
import { describe, expect, it } from 'vitest';
import { defaultsFor } from '../../core/algos/config.ts';
import { makeEnv } from '../../core/envs/index.ts';
import type { ToolEnv } from '../../core/envs/types.ts';
import { TransformerPolicy } from '../../core/models/transformer.ts';
import { initWeights, type Weights } from '../../core/models/types.ts';
import { BOS, EOA, OBS, VOCAB_SIZE, decode, encode } from '../../core/text/codec.ts';
import type { TokenDecoder } from '../../core/engine/types.ts';
import { expertEpisode } from '../../core/trainer/imitation.ts';
import { collectTokenEpisodes } from '../../core/rollout/tokenLockstep.ts';
import { DEFAULT_TOKEN_TRAINER } from '../../core/trainer/tokenConfig.ts';
import { createLockstepTrainer } from '../../core/trainer/lockstepCollector.ts';
import { shiftedBatch } from '../../core/update/batch.ts';
import { Rng } from '../../core/util/rng.ts';
import { loadNodeEngine } from './node.ts';

const CTX = 256;
const model = new TransformerPolicy({ vocabSize: VOCAB_SIZE, dModel: 16, nLayers: 2, nHeads: 2, dFF: 32, context: CTX });

/** Weights that make <eoa> and a few calculator characters likely, so random rollouts take several turns. */
function biasedWeights(seed: number): Weights {
  const w = initWeights(model, seed);
  // Larger than init so attention is far from uniform and numeric differences would show.
  for (const k of Object.keys(w)) if (!k.includes('ln')) w[k] = w[k].map((x) => x * 6);
  const b = w['head.b'];
  b[EOA] = 3;
  for (const id of encode('calc(answer(0123456789*)')) b[id] = 2;
  return w;
}

/** Records every call a decoder receives. */
function spy(dec: TokenDecoder): { dec: TokenDecoder; calls: { tokens: Int32Array; pos: Int32Array; step: number }[] } {
  const calls: { tokens: Int32Array; pos: Int32Array; step: number }[] = [];
  const wrapped: TokenDecoder = {
    get batch() {
      return dec.batch;
    },
    get steps() {
      return dec.steps;
    },
    get context() {
      return dec.context;
    },
    get vocab() {
      return dec.vocab;
    },
    get version() {
      return dec.version;
    },
    set version(v: number) {
      dec.version = v;
    },
    reset: (rows) => dec.reset(rows),
    next: (tokens, pos, step = 1) => {
      calls.push({ tokens: tokens.slice(), pos: pos.slice(), step });
      return dec.next(tokens, pos, step);
    },
    setWeights: (w, v) => dec.setWeights(w, v),
    release: () => dec.release(),
  };
  return { dec: wrapped, calls };
}

describe('token agent loop (ort-web WASM)', () => {
  it('records exactly the ids fed to the model, once each, with env tokens masked', async () => {
    const engine = await loadNodeEngine('ort-web-wasm');
    const B = 4;
    const raw = await engine.createDecoder(model, B, biasedWeights(5), 8);
    raw.version = 7;
    const { dec, calls } = spy(raw);
    const envs = Array.from({ length: B }, () => makeEnv('tools/calculator', { minDigits: 1, maxDigits: 2 }) as ToolEnv);
    const r = await collectTokenEpisodes({ envs, seeds: [1, 1, 2, 3], groups: [0, 0, 1, 2], decoder: dec, rng: new Rng(3), maxActionTokens: 12 });
    let multiTurn = 0;
    let chunked = 0;
    r.episodes.forEach((ep, b) => {
      const L = ep.tokens.length;
      expect(L).toBeLessThanOrEqual(CTX);
      // What the model saw for this row, position by position (a chunk's padding is seen
      // too, then overwritten by the row's next real tokens). Positions only move forward:
      // nothing is fed twice (no re-prefill). A finished row idles at position 0.
      const seen: number[] = [];
      let last = -1;
      for (let c = 0; c < calls.length; c++) {
        const { tokens, pos, step } = calls[c];
        if (c > 0 && pos[b] === 0) break;
        expect(pos[b]).toBeGreaterThan(last);
        last = pos[b];
        for (let k = 0; k < step; k++) seen[pos[b] + k] = tokens[b * step + k];
      }
      // Each policy token was sampled after exactly the episode's ids before it were fed.
      const lastPolicy = ep.lossMask.lastIndexOf(1);
      expect(seen.slice(0, lastPolicy)).toEqual(Array.from(ep.tokens.subarray(0, lastPolicy)));
      chunked += calls.filter((c) => c.step > 1).length;
      // Env tokens: <bos> <obs> task, then <obs> reply after each non-final action.
      expect(ep.tokens[0]).toBe(BOS);
      expect(ep.tokens[1]).toBe(OBS);
      const segs: { mask: number; ids: number[] }[] = [];
      for (let i = 0; i < L; i++) {
        if (segs.length === 0 || segs[segs.length - 1].mask !== ep.lossMask[i]) segs.push({ mask: ep.lossMask[i], ids: [] });
        segs[segs.length - 1].ids.push(ep.tokens[i]);
      }
      const envSegs = segs.filter((s) => s.mask === 0).map((s) => s.ids);
      const polSegs = segs.filter((s) => s.mask === 1).map((s) => s.ids);
      expect(envSegs[0]).toEqual([BOS, OBS, ...encode(ep.observations[0])]);
      for (let k = 1; k < envSegs.length; k++) {
        const want = [OBS, ...encode(ep.observations[k])];
        // The last reply may be clipped by the context.
        expect(envSegs[k]).toEqual(ep.contextLimited && k === envSegs.length - 1 ? want.slice(0, envSegs[k].length) : want);
      }
      // Policy segments are the actions (joined: one segment may hold several <eoa>-ended
      // actions only if the env reply were empty, which it never is).
      ep.actions.forEach((a, k) => {
        const ids = polSegs[k].filter((id, j) => !(id === EOA && j === polSegs[k].length - 1));
        expect(decode(ids)).toBe(a);
      });
      for (let i = 0; i < L; i++) {
        expect(ep.versions[i]).toBe(ep.lossMask[i] ? 7 : -1);
        if (!ep.lossMask[i]) expect(ep.logprobs[i]).toBe(0);
        else expect(ep.logprobs[i]).toBeLessThan(0);
      }
      if (ep.turns >= 2) multiTurn++;
    });
    expect(multiTurn).toBeGreaterThan(0);
    expect(r.decoderCalls).toBe(calls.length);
    expect(chunked).toBeGreaterThan(0); // the task prompt is prefilled in chunks
    expect(r.fedTokens).toBeLessThanOrEqual(r.episodes.reduce((n, ep) => n + ep.tokens.length, 0));
    // Cache hit rate against its definition, recomputed from the episodes' masks: each turn's
    // context ends where the policy starts writing; what earlier turns fed (everything up to the
    // previous <eoa>, exclusive) was cached.
    let cached = 0, context = 0;
    for (const ep of r.episodes) {
      for (let i = 1; i < ep.tokens.length; i++) {
        if (ep.lossMask[i] === 1 && ep.lossMask[i - 1] === 0) {
          context += i;
          let j = i - 1;
          while (j >= 0 && ep.lossMask[j] === 0) j--;
          cached += j < 0 ? 0 : j; // j = index of the previous <eoa>
        }
      }
    }
    expect(r.kvCacheHitRate).toBeCloseTo(cached / context, 12);
    expect(r.kvCacheHitRate).toBeGreaterThan(0);
    await raw.release();
  });

  it('cached rollout log-probs equal the full causal pass (≤ 1e-4) and restarting a row at 0 resets it', async () => {
    const engine = await loadNodeEngine('ort-web-wasm');
    const w = biasedWeights(11);
    const B = 3;
    const dec = await engine.createDecoder(model, B, w, 8);
    const envs = Array.from({ length: B }, () => makeEnv('tools/calculator', { minDigits: 1, maxDigits: 2 }) as ToolEnv);
    // Two batches on the same decoder without a full reset in between would be the per-row case;
    // collectTokenEpisodes resets all, so first dirty the cache with a different batch.
    await collectTokenEpisodes({ envs, seeds: [5, 6, 7], groups: [0, 1, 2], decoder: dec, rng: new Rng(1), maxActionTokens: 10 });
    const r = await collectTokenEpisodes({ envs, seeds: [8, 9, 10], groups: [0, 1, 2], decoder: dec, rng: new Rng(2), maxActionTokens: 10 });
    const full = await engine.createPolicy(model, B, w);
    const rows = shiftedBatch(r.episodes, CTX);
    const ref = await full.run({ tokens: rows.tokens });
    let worst = 0;
    let n = 0;
    for (let i = 0; i < B * CTX; i++) {
      if (!rows.mask[i]) continue;
      worst = Math.max(worst, Math.abs(ref.logprobs[i * VOCAB_SIZE + rows.actions[i]] - rows.oldLogprobs[i]));
      n++;
    }
    expect(n).toBeGreaterThan(20);
    expect(worst).toBeLessThanOrEqual(1e-4);

    // Per-row reset without clearing the cache: row 1 restarts at position 0 with other tokens
    // while rows 0 and 2 stay put; its log-probs must match a fresh full pass.
    const rng = new Rng(4);
    const seq = Int32Array.from({ length: 12 }, () => rng.int(5, VOCAB_SIZE));
    const fresh = await engine.createPolicy(model, 1, w);
    const padded = new Int32Array(CTX);
    padded.set(seq);
    const want = await fresh.run({ tokens: padded });
    let rowWorst = 0;
    for (let t = 0; t < seq.length; t++) {
      const out = await dec.next(Int32Array.from([0, seq[t], 0]), Int32Array.from([CTX - 1, t, CTX - 1]));
      for (let v = 0; v < VOCAB_SIZE; v++) rowWorst = Math.max(rowWorst, Math.abs(out.logprobs[VOCAB_SIZE + v] - want.logprobs[t * VOCAB_SIZE + v]));
    }
    expect(rowWorst).toBeLessThanOrEqual(1e-4);
    await Promise.all([dec.release(), full.release(), fresh.release()]);
  });

  it('lockstep token trainer: first-iteration mismatch ≤ 1e-4 (TITO), the registry metric keys present, expert episodes use the same format', async () => {
    const engine = await loadNodeEngine('ort-web-wasm');
    const trainer = await createLockstepTrainer(
      {
        ...DEFAULT_TOKEN_TRAINER,
        model: { kind: 'transformer', dModel: 16, nLayers: 1, nHeads: 2, dFF: 32, context: CTX },
        env: { id: 'tools/calculator', kwargs: { minDigits: 1, maxDigits: 2 } },
        algo: { ...defaultsFor('grpo'), groupSize: 4, klCoef: 0.01 },
        groups: 2,
        learnerBatch: 8,
        maxActionTokens: 10,
      },
      engine,
      biasedWeights(2),
    );
    const rep = await trainer.step();
    const m = rep.metrics;
    expect(m['mismatch/logprob_abs_diff_max']).toBeLessThanOrEqual(1e-4);
    for (const k of ['reward/mean', 'episode/success_rate', 'episode/turns_mean', 'adv/std', 'groups/frac_zero_std', 'actor/entropy', 'actor/pg_loss', 'actor/grad_norm', 'actor/kl_ref', 'perf/kv_cache_hit_rate', 'perf/tokens_per_s']) {
      expect(Number.isFinite(m[k as keyof typeof m]), k).toBe(true);
    }
    expect(m['actor/kl_ref']).toBeLessThan(1e-6); // the reference is the starting policy
    expect(rep.episodes).toHaveLength(8);
    expect(trainer.version).toBe(1);
    await trainer.release();
    // The expert's transcript in the loop's layout: it fits and replays its own actions.
    const env = makeEnv('tools/calculator') as ToolEnv;
    const ex = expertEpisode(env, 4, 128);
    expect(ex.success).toBe(true);
    expect(ex.clipped).toBe(false);
    const actions = decode(Array.from(ex.tokens).filter((_, i) => ex.lossMask[i]))
      .split('<eoa>')
      .filter((s) => s);
    env.reset({ seed: 4 });
    const first = env.expertAction();
    expect(actions[0]).toBe(first);
    expect(actions).toHaveLength(2);
  });
});
