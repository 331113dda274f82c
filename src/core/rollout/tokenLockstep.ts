/**
 * The lockstep multi-turn token agent loop: B text-env episodes start together over one
 * KV-cached decoder and the call returns when the last one ends (see ARCHITECTURE.md for the
 * context layout and how it differs from the continuous loop).
 *
 * Every token is fed to the decoder exactly once, at its position, so its keys/values stay cached
 * and later turns attend to them without recomputing anything (no re-prefill of earlier turns).
 * All rows share every decoder call: each call feeds every row its next unfed tokens, up to S of
 * them in a prefill-chunk call (used while some row has several environment tokens pending), else
 * one. A row whose context is then fully fed samples its next token from the output at its last
 * fed position; a row still feeding ignores the output.
 */
import type { ToolEnv } from '../envs/types.ts';
import { PAD } from '../text/codec.ts';
import { sampleRow } from './categorical.ts';
import type { Rng } from '../util/rng.ts';
import type { TokenDecoder } from '../models/runners.ts';
import { appendSample, applyReply, finishEpisode, nextTokenMask, startEpisode, takeActionToken, truncateToContext, type EpisodeRecord, type TokenEpisode } from './tokenEpisode.ts';

export interface TokenRolloutRequest {
  /** One env per decoder row; length must equal decoder.batch. */
  envs: readonly ToolEnv[];
  /** Reset seed per row. */
  seeds: readonly number[];
  /** Group index per row. */
  groups: readonly number[];
  /** The decoder (its cache is reset at the start); its largest step is used to prefill. */
  decoder: TokenDecoder;
  /** Use a prefill chunk call when some row has at least this many tokens to feed. Default 4. */
  minChunk?: number;
  /** Sampling randomness (envs are seeded through reset). */
  rng: Rng;
  /** 1 = sample from π (training); 0 = greedy (evaluation). Default 1. */
  temperature?: number;
  /** Most tokens in one action, <eoa> included; reaching it ends the action (forced end). Default 32. */
  maxActionTokens?: number;
  /**
   * Constrained decoding: sample each policy token from the distribution masked to the env's
   * action grammar (every env needs `actionGrammar`), and record the masks. Default false.
   */
  constrained?: boolean;
  /** Per row, a record to continue instead of a reset (its env already brought to that state: tree rollouts' branches, rollout/treeRollout.ts). */
  prefixes?: readonly (EpisodeRecord | null)[];
}

export interface TokenRolloutResult {
  episodes: TokenEpisode[];
  /** Env steps over all rows. */
  envSteps: number;
  /** Decoder calls (one-token and prefill chunks). */
  decoderCalls: number;
  /** Tokens sampled by the policy over all rows. */
  policyTokens: number;
  /** Tokens fed to the decoder over all rows (each once). */
  fedTokens: number;
  /**
   * Share of each turn's context that came from the cache rather than being computed, summed
   * over turns: Σ cached / Σ context, where a turn's context is everything before its first
   * sampled token and "cached" is what earlier turns had already fed. A stateless server that
   * re-sends the conversation every turn scores 0.
   */
  kvCacheHitRate: number;
}

interface Row extends EpisodeRecord {
  val: number[];
  /** Context tokens already fed to the decoder (its cache holds positions 0..fed−1). */
  fed: number;
  /** Ids of the action being generated. */
  action: number[];
  done: boolean;
}

/** Running totals of one lockstep collection. */
interface Counters {
  calls: number;
  envSteps: number;
  policyTokens: number;
  fedTokens: number;
  /** Σ over turns of the context already cached at the turn's first sampled token, and of the context. */
  cachedSum: number;
  contextSum: number;
}

export async function collectTokenEpisodes(req: TokenRolloutRequest): Promise<TokenRolloutResult> {
  const { decoder, envs } = req;
  const B = envs.length;
  if (B !== decoder.batch) throw new RangeError(`collectTokenEpisodes: ${B} envs but the decoder batch is ${decoder.batch}`);
  if (decoder.steps[0] !== 1) throw new RangeError(`collectTokenEpisodes: the decoder must support one-token calls (has ${decoder.steps.join(', ')})`);
  const Tmax = decoder.context;
  const V = decoder.vocab;
  const maxAct = req.maxActionTokens ?? 32;
  const temperature = req.temperature ?? 1;
  const scratch = new Float64Array(V);
  decoder.reset();

  const rows: Row[] = envs.map((env, i) => {
    const rec = req.prefixes?.[i] ?? startEpisode(env.reset({ seed: req.seeds[i] }).obs.text);
    const r: Row = { ...rec, val: rec.ctx.map(() => 0), fed: 0, action: [], done: false };
    if (r.ctx.length >= Tmax) endByContext(r, Tmax);
    return r;
  });
  const n: Counters = { calls: 0, envSteps: 0, policyTokens: 0, fedTokens: 0, cachedSum: 0, contextSum: 0 };
  // Each row's first turn: nothing cached yet.
  for (const r of rows) if (!r.done) n.contextSum += r.ctx.length;

  const S = Math.max(...decoder.steps);
  const feeds = { 1: new Int32Array(B), [S]: new Int32Array(B * S) };
  const pos = new Int32Array(B);
  const take = new Int32Array(B);
  // Value-head decoders also return V at every fed position: recorded beside each sample.
  let withValues = false;
  while (rows.some((r) => !r.done)) {
    const step = callSize(rows, S, Tmax, req.minChunk ?? 4);
    const feed = feeds[step];
    fillFeed(rows, feed, step, take, pos);
    const out = await decoder.next(feed, pos, step);
    if (out.value) withValues = true;
    n.calls++;
    for (let i = 0; i < B; i++) {
      const r = rows[i];
      if (r.done) continue;
      r.fed += take[i];
      n.fedTokens += take[i];
      if (r.fed < r.ctx.length) continue; // still feeding environment tokens
      // The whole context is in the cache: sample the next policy token from the distribution
      // after the row's last fed token (output position take − 1 of row i).
      const at = i * step + take[i] - 1;
      const allowed = req.constrained ? nextTokenMask(r, envs[i], V, maxAct) : null;
      const s = sampleRow(out.logprobs, at, V, req.rng, scratch, temperature, allowed ?? undefined);
      appendSample(r, s, decoder.version, out.value ? out.value[at] : 0, allowed);
      n.policyTokens++;
      const text = takeActionToken(r, s.action, maxAct);
      if (text === null) {
        // Room for the next token? Position ctx.length must exist to feed it.
        if (r.ctx.length >= Tmax) endByContext(r, Tmax);
      } else endTurn(r, envs[i], text, Tmax, n);
    }
  }

  const episodes = rows.map((r, i) => finishEpisode(r, envs[i], req.seeds[i], req.groups[i], withValues ? r.val : undefined));
  return {
    episodes,
    envSteps: n.envSteps,
    decoderCalls: n.calls,
    policyTokens: n.policyTokens,
    fedTokens: n.fedTokens,
    kvCacheHitRate: n.contextSum > 0 ? n.cachedSum / n.contextSum : 0,
  };
}

/**
 * Tokens per row in the next call: a prefill chunk (S) when some row has at least `minChunk`
 * environment tokens to feed and every row's chunk fits the context; otherwise 1.
 */
function callSize(rows: readonly Row[], S: number, Tmax: number, minChunk: number): number {
  let maxPending = 0;
  let fits = true;
  for (const r of rows) {
    if (r.done) continue;
    maxPending = Math.max(maxPending, r.ctx.length - r.fed);
    if (r.fed + S > Tmax) fits = false;
  }
  return S > 1 && fits && maxPending >= minChunk ? S : 1;
}

/** Fills the feed [B·step], each row's position and how many real tokens it takes. */
function fillFeed(rows: readonly Row[], feed: Int32Array, step: number, take: Int32Array, pos: Int32Array): void {
  feed.fill(PAD);
  rows.forEach((r, i) => {
    if (r.done) {
      // Finished rows ride along at position 0; their output is ignored.
      take[i] = 0;
      pos[i] = 0;
      return;
    }
    // A row's real tokens first; the padding after them lands in slots that the causal mask
    // hides and that the row's next tokens overwrite.
    take[i] = Math.min(step, r.ctx.length - r.fed);
    for (let k = 0; k < take[i]; k++) feed[i * step + k] = r.ctx[r.fed + k];
    pos[i] = r.fed;
  });
}

/** An action ended: the env acts on its text, and its reply starts the next turn (or ends the row). */
function endTurn(r: Row, env: ToolEnv, text: string, Tmax: number, n: Counters): void {
  const res = env.step(text);
  n.envSteps++;
  r.actions.push(text);
  const next = applyReply(r, res, Tmax);
  if (next === 'ended') r.done = true;
  else if (next === 'contextFull') endByContext(r, Tmax);
  else {
    // The next turn's context is the cached prefix (r.fed tokens: all but the <eoa> just
    // sampled) plus the reply's tokens.
    n.cachedSum += r.fed;
    n.contextSum += r.ctx.length;
  }
}

/** The context is full: truncated (see truncateToContext), and the row stops. */
function endByContext(r: Row, Tmax: number): void {
  truncateToContext(r, Tmax);
  r.done = true;
}
