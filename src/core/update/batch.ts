/**
 * The one rollout batch every phase after collect reads (score, advantages, off-policy weights,
 * update, metrics), for both env families. See ARCHITECTURE.md, 'The rollout batch'.
 *
 * A batch is n sequences (episodes) laid out by offsets: sequence s owns the positions
 * [starts[s], starts[s] + lengths[s]) of every per-position array. A grid episode is a sequence of
 * MLP positions (one per env step), packed back to back (no padding: an MLP row costs the same
 * whether or not its neighbours belong to the same episode). A token episode is a sequence of
 * training positions padded to the context T (starts = s·T, lengths = T; position t is scored on
 * token t + 1, TITO), since the transformer reads [n, T] anyway. `mask` marks the positions that
 * are trained (policy tokens; every grid step). The model's input lives in `feed`: packed rows for
 * the MLP, padded sequences for the transformer; only the update and the scorers read it.
 */
import { PAD } from '../text/codec.ts';
import { fullMask, maskWords } from '../text/grammar.ts';
import { stepFeatures, type StepEpisode } from '../rollout/stepEpisode.ts';
import type { TokenEpisode } from '../rollout/tokenEpisode.ts';

/** The MLP's input: one row per position, packed in position order. */
export interface RowFeed {
  kind: 'rows';
  /** Features per row. */
  D: number;
  /** [size·D] policy input of each position. */
  obs: Float32Array;
  /** [size] action taken. */
  actions: Int32Array;
}

/** The transformer's input: sequences padded to the context T, [n·T] each. */
export interface SequenceFeed {
  kind: 'sequences';
  T: number;
  /** [n·T] token ids fed (PAD after the episode). */
  tokens: Int32Array;
  /** [n·T] the id each position predicts (tokens[t + 1]). */
  actions: Int32Array;
  /** Vocabulary size (log-prob rows of the scorers). */
  V: number;
  /**
   * Sequences gN … gN + N − 1 form group g and share their prompt, so a learner or scorer may run
   * each group's common prefix once; undefined when groups differ in size or there are none.
   */
  groupSize?: number;
  /**
   * Constrained decoding: [n·T·W] the packed vocabulary mask position t's action was drawn under
   * (the episode's `allow` at token t + 1), W = maskWords(V) words per position, every bit set off
   * the policy tokens. The learner and the scorers renormalise over it. Absent when unconstrained.
   */
  allow?: Uint32Array;
}

export interface RolloutBatch {
  /** Sequences (episodes). */
  n: number;
  /** [n] first position of each sequence. */
  starts: Int32Array;
  /** [n] positions each sequence spans (its steps, or the context T for tokens). */
  lengths: Int32Array;
  /** Positions in all: the length of every per-position array. */
  size: number;
  /** [size] 1 on trained positions (every grid step, each policy token), 0 on env tokens and padding. */
  mask: Float32Array;
  /** [size] behaviour log-prob μ of the action at each position (0 off the mask). */
  mu: Float32Array;
  /** [size] policy version that sampled each position (−1 off the mask). */
  versions: Int32Array;
  /** [size] V at rollout time (critic); zeros when the policy has no value head. */
  values: Float32Array;
  /** [size] 1 where a position ends an env step (turn): that step's reward lands there, and γ, λ discount across it. */
  turnEnd: Uint8Array;
  /** [n] V after the last position (0 when terminated; V(s_T) of a truncated grid episode, the last policy token's own V for tokens; NaN when unknown). */
  bootstrap: Float64Array;
  /** [n] 1 when the episode truly ended (no bootstrap), 0 when cut by a time limit or the context. */
  terminated: Uint8Array;
  /** [n] each sequence's group id (−1 without groups). */
  groups: Int32Array;
  /**
   * [size] per-position rewards (veRL's token_level_rewards; [n, T] for tokens): each env step's
   * reward (env reward + shaping + user terms) at the position where that step's action ends (its
   * last trained position, a turn end), 0 elsewhere. Zeros until the score phase's rewards are
   * placed (update/positionRewards.ts); the KL-as-reward penalty and DAPO's overlong term land here.
   */
  rewards: Float64Array;
  /**
   * [n] each sequence's total reward as the score phase summed it (by term), what episode-level
   * estimators compare; equal to its rewards' sum up to float rounding.
   */
  scores: Float64Array;
  /** [n] env steps each sequence's rewards cover (one fewer than its actions when the context cut a half-written one). */
  stepCounts: Int32Array;
  /** Each reward term's episode contribution [n], by term name (GDPO normalises each); empty until placed. */
  termScores: Record<string, Float64Array>;
  /** The longest a sequence can be: the env's time limit (steps) or the context T; 'constant' aggregation's default length. */
  horizon: number;
  feed: RowFeed | SequenceFeed;
}

/** Grid episodes as one batch, packed; `D` = the policy's observation size, `horizon` the env's maxSteps. */
export function stepRolloutBatch(episodes: readonly StepEpisode[], D: number, horizon: number): RolloutBatch {
  const n = episodes.length;
  const size = episodes.reduce((s, ep) => s + ep.actions.length, 0);
  const b = emptyBatch(n, size, horizon);
  const obs = new Float32Array(size * D);
  const actions = new Int32Array(size);
  let o = 0;
  for (const [e, ep] of episodes.entries()) {
    const T = ep.actions.length;
    b.starts[e] = o;
    b.lengths[e] = T;
    b.groups[e] = ep.group;
    b.terminated[e] = ep.terminated ? 1 : 0;
    b.bootstrap[e] = ep.terminated ? 0 : (ep.bootstrapValue ?? NaN);
    for (let t = 0; t < T; t++) stepFeatures(ep, t, obs, (o + t) * D);
    actions.set(ep.actions, o);
    b.mu.set(ep.logprobs, o);
    b.values.set(ep.values, o);
    b.versions.set(ep.versions, o);
    b.mask.fill(1, o, o + T);
    b.turnEnd.fill(1, o, o + T);
    o += T;
  }
  b.feed = { kind: 'rows', D, obs, actions };
  return b;
}

/**
 * Token episodes as one batch padded to the context T (`shiftedBatch`'s layout). A policy token
 * ends a turn when the next policy token is not adjacent (env tokens between) or it is the last.
 * @param groupSize equal groups of this many sequences (shared prompts), or undefined.
 */
export function tokenRolloutBatch(episodes: readonly TokenEpisode[], T: number, V: number, groupSize?: number): RolloutBatch {
  const n = episodes.length;
  const b = emptyBatch(n, n * T, T);
  const rows = shiftedBatch(episodes, T);
  b.mask.set(rows.mask);
  b.mu.set(rows.oldLogprobs);
  b.versions.fill(-1);
  episodes.forEach((ep, s) => {
    const o = s * T;
    b.starts[s] = o;
    b.lengths[s] = T;
    b.groups[s] = ep.group;
    let last = -1;
    for (let t = 0; t + 1 < ep.tokens.length; t++) {
      b.versions[o + t] = ep.versions[t + 1];
      if (!ep.lossMask[t + 1]) continue;
      if (ep.values) b.values[o + t] = ep.values[t + 1];
      if (!ep.lossMask[t + 2]) b.turnEnd[o + t] = 1;
      last = t;
    }
    b.terminated[s] = ep.terminated ? 1 : 0;
    b.bootstrap[s] = ep.terminated || last < 0 ? 0 : b.values[o + last];
  });
  const allow = shiftedMasks(episodes, T, V);
  b.feed = { kind: 'sequences', T, V, tokens: rows.tokens, actions: rows.actions, groupSize, ...(allow ? { allow } : {}) };
  return b;
}

/**
 * The episodes' per-token masks shifted like the actions (position t holds token t + 1's), [n·T·W]
 * with every bit set where no mask applies; undefined when no episode was constrained. A batch
 * mixing constrained and unconstrained episodes is refused: one policy cannot be both.
 */
function shiftedMasks(episodes: readonly TokenEpisode[], T: number, V: number): Uint32Array | undefined {
  const withMask = episodes.filter((ep) => ep.allow).length;
  if (withMask === 0) return undefined;
  if (withMask !== episodes.length) throw new Error(`tokenRolloutBatch: ${withMask} of ${episodes.length} episodes were decoded constrained; a batch is all or none`);
  const W = maskWords(V);
  const out = new Uint32Array(episodes.length * T * W);
  const full = fullMask(V);
  episodes.forEach((ep, s) => {
    const L = ep.tokens.length;
    for (let t = 0; t < T; t++) {
      const o = (s * T + t) * W;
      if (t + 1 < L) out.set(ep.allow!.subarray((t + 1) * W, (t + 2) * W), o);
      else out.set(full, o);
    }
  });
  return out;
}

function emptyBatch(n: number, size: number, horizon: number): RolloutBatch {
  return {
    n,
    starts: new Int32Array(n),
    lengths: new Int32Array(n),
    size,
    mask: new Float32Array(size),
    mu: new Float32Array(size),
    versions: new Int32Array(size),
    values: new Float32Array(size),
    turnEnd: new Uint8Array(size),
    bootstrap: new Float64Array(n),
    terminated: new Uint8Array(n),
    groups: new Int32Array(n),
    rewards: new Float64Array(size),
    scores: new Float64Array(n),
    stepCounts: new Int32Array(n),
    termScores: {},
    horizon,
    feed: { kind: 'rows', D: 0, obs: new Float32Array(0), actions: new Int32Array(0) },
  };
}

/** Where a batch's sequences sit in its per-position arrays and which positions are trained: what the per-position helpers below read. */
export type PositionLayout = Pick<RolloutBatch, 'n' | 'starts' | 'lengths' | 'mask' | 'size' | 'horizon'>;

/**
 * The layout of n sequences padded to the context T (sequence s at positions [s·T, (s+1)·T),
 * horizon T), for rows built without a rollout batch (the imitation warm start).
 * @param mask [n·T] 1 on trained positions.
 */
export function paddedLayout(n: number, T: number, mask: Float32Array): PositionLayout {
  if (mask.length !== n * T) throw new RangeError(`paddedLayout: mask has ${mask.length} entries, expected n·T = ${n}·${T}`);
  return { n, starts: Int32Array.from({ length: n }, (_, s) => s * T), lengths: new Int32Array(n).fill(T), mask, size: n * T, horizon: T };
}

/** Trained positions per sequence ([n]: its steps, or its policy tokens). */
export function positionCounts(b: Pick<RolloutBatch, 'n' | 'starts' | 'lengths' | 'mask'>): Int32Array {
  const out = new Int32Array(b.n);
  for (let s = 0; s < b.n; s++) {
    let c = 0;
    for (let i = b.starts[s]; i < b.starts[s] + b.lengths[s]; i++) if (b.mask[i] !== 0) c++;
    out[s] = c;
  }
  return out;
}

/** One value per sequence onto its trained positions, [size] (0 off the mask). */
export function broadcast(b: Pick<RolloutBatch, 'n' | 'starts' | 'lengths' | 'mask' | 'size'>, perSeq: ArrayLike<number>): Float64Array {
  const out = new Float64Array(b.size);
  for (let s = 0; s < b.n; s++) for (let i = b.starts[s]; i < b.starts[s] + b.lengths[s]; i++) if (b.mask[i] !== 0) out[i] = perSeq[s];
  return out;
}

/** Positions where `pred` holds and the mask is on, ascending. */
export function maskedPositions(b: Pick<RolloutBatch, 'mask' | 'size'>, pred: (i: number) => boolean = () => true): number[] {
  const out: number[] = [];
  for (let i = 0; i < b.size; i++) if (b.mask[i] !== 0 && pred(i)) out.push(i);
  return out;
}

/** Share of sequences whose trained positions were sampled by more than one policy version (partial rollouts). */
export function partialShare(b: Pick<RolloutBatch, 'n' | 'starts' | 'lengths' | 'mask' | 'versions'>): number {
  if (b.n === 0) return 0;
  let partial = 0;
  for (let s = 0; s < b.n; s++) {
    let first: number | null = null;
    for (let i = b.starts[s]; i < b.starts[s] + b.lengths[s]; i++) {
      if (b.mask[i] === 0) continue;
      if (first === null) first = b.versions[i];
      else if (b.versions[i] !== first) {
        partial++;
        break;
      }
    }
  }
  return partial / b.n;
}

/**
 * Next-token training rows for sequences padded to T: position t predicts tokens[t+1].
 * Returns int32 tokens/actions [n·T] and the shifted loss mask / behaviour log-probs [n·T].
 */
export function shiftedBatch(episodes: readonly Pick<TokenEpisode, 'tokens' | 'lossMask' | 'logprobs'>[], T: number): {
  tokens: Int32Array;
  actions: Int32Array;
  mask: Float32Array;
  oldLogprobs: Float32Array;
} {
  const n = episodes.length;
  const tokens = new Int32Array(n * T).fill(PAD);
  const actions = new Int32Array(n * T);
  const mask = new Float32Array(n * T);
  const oldLogprobs = new Float32Array(n * T);
  episodes.forEach((ep, b) => {
    const L = ep.tokens.length;
    if (L > T) throw new RangeError(`shiftedBatch: episode ${b} has ${L} tokens, the context is ${T}`);
    tokens.set(ep.tokens, b * T);
    for (let t = 0; t + 1 < L; t++) {
      actions[b * T + t] = ep.tokens[t + 1];
      mask[b * T + t] = ep.lossMask[t + 1];
      oldLogprobs[b * T + t] = ep.logprobs[t + 1];
    }
  });
  return { tokens, actions, mask, oldLogprobs };
}

/**
 * A packed-row batch from rows already featurised (episodes of `lengths` rows, in order, every
 * row trained and ending a turn, each episode terminated): what a grid batch is without its
 * episodes. Tests and benches feed the update phase with it.
 */
export function packedRowsBatch(lengths: readonly number[], feed: { D: number; obs: Float32Array; actions: Int32Array }, mu: Float32Array, horizon: number, versions?: Int32Array): RolloutBatch {
  const size = lengths.reduce((a, b) => a + b, 0);
  const b = emptyBatch(lengths.length, size, horizon);
  lengths.reduce((o, T, e) => ((b.starts[e] = o), (b.lengths[e] = T), o + T), 0);
  b.mask.fill(1);
  b.turnEnd.fill(1);
  b.terminated.fill(1);
  b.groups.fill(-1);
  b.mu.set(mu);
  if (versions) b.versions.set(versions);
  b.feed = { kind: 'rows', ...feed };
  return b;
}
