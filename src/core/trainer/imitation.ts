/**
 * Imitation warm start (behaviour cloning) for token policies: expert episodes written in the
 * exact context format of the agent loops (rollout/tokenEpisode.ts), and cross-entropy on their policy
 * tokens. The result is the RL starting point and the reference policy for the KL term.
 *
 * Expert data is unlimited (every env seed is a new task), so each train step sees fresh
 * episodes: no epochs, no overfitting to a fixed set; held-out evaluation uses seeds outside
 * the training stream.
 */
import { bucketFor, lengthBuckets, neededLengths, truncateRows } from '../update/sequenceScorer.ts';
import { aggregationWeightsOf } from '../update/batchAdvantages.ts';
import type { EnvKwargs } from '../envs/index.ts';
import { makeTextEnv } from '../envs/grid/textAdapter.ts';
import type { ToolEnv } from '../envs/types.ts';
import type { TransformerPolicy } from '../models/transformer.ts';
import type { Weights } from '../models/types.ts';
import { EOA, encode } from '../text/codec.ts';
import type { Engine } from '../engine/types.ts';
import { mixSeed } from '../util/rng.ts';
import { initialContext, observationTokens, type TokenEpisode } from '../rollout/tokenEpisode.ts';
import { paddedLayout, shiftedBatch } from '../update/batch.ts';

/** An expert episode as the policy would have produced it (log-probs 0, versions −1). */
export type ExpertEpisode = Pick<TokenEpisode, 'seed' | 'tokens' | 'lossMask' | 'success' | 'turns'> & {
  /** The transcript did not fit the context (not used for training). */
  clipped: boolean;
};

/**
 * Plays `env.expertAction()` from `seed` and writes the episode as token ids: <bos> <obs> task,
 * then per turn the action ids + <eoa> (loss mask 1) and <obs> + reply (mask 0, except after the
 * last action).
 */
export function expertEpisode(env: ToolEnv, seed: number, context: number): ExpertEpisode {
  const first = env.reset({ seed }).obs.text;
  const tokens = initialContext(first);
  const mask = tokens.map(() => 0);
  let turns = 0;
  let success = false;
  for (;;) {
    const a = env.expertAction();
    if (a === null) break;
    for (const id of [...encode(a), EOA]) {
      tokens.push(id);
      mask.push(1);
    }
    const r = env.step(a);
    turns++;
    if (r.terminated || r.truncated) {
      success = r.info.success === true;
      break;
    }
    for (const id of observationTokens(r.obs.text)) {
      tokens.push(id);
      mask.push(0);
    }
  }
  const clipped = tokens.length > context;
  return { seed, tokens: Int32Array.from(tokens.slice(0, context)), lossMask: Uint8Array.from(mask.slice(0, context)), success, turns, clipped };
}

export interface ImitationConfig {
  /** Env registry id (a tool env, or a grid env played as text, with an expert) and kwargs. */
  env: { id: string; kwargs?: EnvKwargs };
  /** Train steps. */
  steps: number;
  /** Expert sequences per step (the learner's static batch). */
  batch: number;
  /** Adam learning rate at the first step. */
  lr: number;
  /** Learning rate at the last step, as a fraction of `lr` (linear decay; 1 = constant). */
  finalLrRatio: number;
  /** Global gradient-norm clip (≤ 0 disables). */
  maxGradNorm: number;
  /** Master seed of the expert seed stream (held-out evaluation must use other seeds). */
  seed: number;
  /** Stop early once this wall-clock budget (s) is spent; Infinity = run all steps. */
  budgetS: number;
  /**
   * Weight of an auxiliary next-token loss on the env's tokens (the observations), relative to
   * the loss on the expert's action tokens (each a mean over its own tokens). 0 = actions only.
   * Predicting the transcript gives gradient to features a single rare decision token cannot
   * (grid/memory: its junction turn is 1 of ~16 action tokens and needs a cue ~300 tokens back).
   */
  observationWeight: number;
}

export const DEFAULT_IMITATION: Omit<ImitationConfig, 'env'> = {
  steps: 300,
  batch: 16,
  lr: 3e-3,
  finalLrRatio: 0.1,
  maxGradNorm: 1,
  seed: 0,
  budgetS: Infinity,
  observationWeight: 0,
};

export interface ImitationReport {
  step: number;
  /** Mean cross-entropy per policy token, nats (+ observationWeight × that of the env's tokens). */
  ceLoss: number;
  /** Mean probability of the expert token (over the env's tokens too when observationWeight > 0). */
  targetProb: number;
  wallS: number;
}

/** Seed of the k-th expert episode of the training stream (distinct from evaluation seeds). */
export function imitationSeed(seed: number, step: number, row: number): number {
  return mixSeed(seed, 0x1417, step, row);
}

/**
 * A train batch of expert episodes: inputs, next-token targets, loss mask and aggregation
 * weights, all [n, T]. Action tokens weigh 1/(action tokens in the batch); with
 * `observationWeight` w > 0 the env's tokens after the first (every position whose next token
 * is not the policy's) are trained too, with weight w/(such tokens in the batch).
 */
export function imitationRows(
  eps: readonly Pick<ExpertEpisode, 'tokens' | 'lossMask'>[],
  T: number,
  observationWeight: number,
): { tokens: Int32Array; actions: Int32Array; mask: Float32Array; weights: Float32Array } {
  const rows = shiftedBatch(eps.map((e) => ({ ...e, logprobs: new Float32Array(e.tokens.length) })), T);
  const weights = Float32Array.from(aggregationWeightsOf(paddedLayout(eps.length, T, rows.mask), { aggregation: 'token', aggregationLen: null }));
  if (observationWeight > 0) {
    let nObs = 0;
    eps.forEach((e, b) => {
      for (let t = 0; t + 1 < e.tokens.length; t++) if (rows.mask[b * T + t] === 0) nObs++;
    });
    const w = observationWeight / Math.max(1, nObs);
    eps.forEach((e, b) => {
      for (let t = 0; t + 1 < e.tokens.length; t++) {
        if (rows.mask[b * T + t] !== 0) continue;
        rows.mask[b * T + t] = 1;
        weights[b * T + t] = w;
      }
    });
  }
  return { tokens: rows.tokens, actions: rows.actions, mask: rows.mask, weights };
}

/**
 * Cross-entropy on expert tokens. Returns the trained weights (the warm start and the KL
 * reference) and the learning curve. `onStep` sees every step's report (for progress output);
 * when it returns a promise the next step waits for it (a paused warm start), and that wait is
 * not counted in `wallS` or against the time budget.
 */
export async function trainImitation(
  engine: Engine,
  model: TransformerPolicy,
  initial: Weights,
  cfg: ImitationConfig,
  onStep?: (r: ImitationReport) => void | Promise<void>,
): Promise<{ weights: Weights; curve: ImitationReport[]; clippedEpisodes: number }> {
  const T = model.config.context;
  // Each step runs at the shortest length bucket that holds its episodes (update/sequenceScorer.ts).
  const lens = lengthBuckets(T);
  const learner = await engine.createLearner(model, { batch: cfg.batch, loss: { kind: 'imitation', entropyCoef: 0 }, adam: { lr: cfg.lr, maxGradNorm: cfg.maxGradNorm } }, initial, lens);
  const env = makeTextEnv(cfg.env.id, cfg.env.kwargs);
  const curve: ImitationReport[] = [];
  let clippedEpisodes = 0;
  const t0 = performance.now();
  /** Ms spent waiting on onStep (paused), left out of wallS. */
  let waited = 0;
  try {
    for (let s = 0; s < cfg.steps; s++) {
      const eps: ExpertEpisode[] = [];
      for (let k = 0; eps.length < cfg.batch; k++) {
        const ep = expertEpisode(env, imitationSeed(cfg.seed, s, k), T);
        if (ep.clipped) clippedEpisodes++;
        else eps.push(ep);
        if (k > 4 * cfg.batch) throw new Error(`trainImitation: expert episodes of ${cfg.env.id} do not fit a context of ${T} tokens`);
      }
      const rows = imitationRows(eps, T, cfg.observationWeight);
      const weights = rows.weights;
      learner.hyper.lr = cfg.lr * (1 - (1 - cfg.finalLrRatio) * (cfg.steps > 1 ? s / (cfg.steps - 1) : 0));
      const L = bucketFor(lens, Math.max(...neededLengths(rows.mask, cfg.batch, T)), T);
      const cut = <A extends Int32Array | Float32Array>(a: A) => truncateRows(a, cfg.batch, T, L);
      const res = await learner.step({ tokens: cut(rows.tokens), actions: cut(rows.actions), weights: cut(weights), mask: cut(rows.mask) }, L === T ? undefined : L);
      const rep: ImitationReport = {
        step: s,
        ceLoss: res.metrics['imitation/ce_loss'],
        targetProb: res.metrics['imitation/target_prob_mean'],
        wallS: (performance.now() - t0 - waited) / 1000,
      };
      curve.push(rep);
      const w0 = performance.now();
      await onStep?.(rep);
      waited += performance.now() - w0;
      if (rep.wallS > cfg.budgetS) break;
    }
    return { weights: await learner.getWeights(), curve, clippedEpisodes };
  } finally {
    await learner.release();
  }
}
