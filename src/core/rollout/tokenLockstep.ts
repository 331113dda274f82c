/**
 * The multi-turn token agent loop (DESIGN §3): B text-env episodes in lockstep over one
 * KV-cached decoder.
 *
 * Context layout of an episode (one row of the decoder):
 *
 *   <bos> <obs> task text…  calc(…)<eoa>  <obs> result: …  answer(…)<eoa>
 *   └──────── env ───────┘  └─ policy ─┘  └──── env ────┘  └── policy ──┘
 *
 * The policy samples tokens until <eoa> (or `maxActionTokens`, a forced end: the text so far goes
 * to the env, which usually calls it malformed); the decoded text is the action; the env's reply
 * is appended as <obs> + its tokens. Every token is fed to the decoder exactly once, at its
 * position, so its keys/values stay cached and later turns attend to them without recomputing
 * anything (no re-prefill of earlier turns).
 *
 * Scheduling: all rows share every decoder call, whatever phase they are in. Each call feeds every
 * row its next unfed tokens: up to S of them in a prefill-chunk call (used while some row has
 * several environment tokens pending), else one. A row whose context is then fully fed samples
 * its next token from the output at its last fed position; a row still feeding ignores the output.
 *
 * What is recorded per token is what the trainer consumes (TITO): the ids exactly as fed to the
 * model, the loss mask (1 = sampled by the policy, <eoa> included; 0 = environment), the
 * behaviour log-probability and the policy version. The trainer never re-tokenizes text.
 */
import type { Info, ToolEnv } from '../envs/types.ts';
import { BOS, EOA, OBS, PAD, decode, encode } from '../text/codec.ts';
import { sampleRow } from './categorical.ts';
import type { Rng } from '../util/rng.ts';
import type { TokenDecoder } from '../engine/types.ts';

export interface TokenEpisode {
  envId: string;
  /** Reset seed: episodes with the same seed start from the same state (a GRPO group). */
  seed: number;
  /** Group index within the iteration (−1 when not grouped). */
  group: number;
  /** [L] context ids as fed to the model; tokens[0] = <bos>. L ≤ decoder context. */
  tokens: Int32Array;
  /** [L] 1 where the policy sampled tokens[i] (its <eoa> included), 0 for environment tokens. */
  lossMask: Uint8Array;
  /** [L] behaviour log π(tokens[i] | tokens[<i]) on policy tokens, 0 elsewhere. */
  logprobs: Float32Array;
  /** [L] entropy (nats) of the distribution tokens[i] was drawn from, 0 on env tokens. */
  entropies: Float32Array;
  /** [L] policy version that sampled tokens[i]; −1 on environment tokens. */
  versions: Int32Array;
  /**
   * [L] the critic's V of the state tokens[i] was sampled in (the decoder's value output at
   * position i − 1, beside the distribution it was drawn from); 0 on environment tokens.
   * Present only when the decoder has a value head (PPO).
   */
  values?: Float32Array;
  /** [turns] env reward after each action. */
  rewards: Float64Array;
  /** [turns] the env's info after each action. */
  infos: Info[];
  /** [turns] action texts as the env received them. */
  actions: string[];
  /** Observation texts: the first (task) and the env's reply after each action. */
  observations: string[];
  /** Actions cut at `maxActionTokens` without <eoa>. */
  forcedEnds: number;
  /** Env steps taken. */
  turns: number;
  terminated: boolean;
  /** Env time limit, or the context ran out (then `contextLimited`). */
  truncated: boolean;
  /** The episode stopped because the context was full (not the env's time limit). */
  contextLimited: boolean;
  success: boolean;
  /** The env's human-readable transcript (when the env offers one). */
  transcript: string;
}

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

/** Context ids an episode starts with: <bos> <obs> task. */
export function initialContext(firstObservation: string): number[] {
  return [BOS, OBS, ...encode(firstObservation, { unknown: 'unk' })];
}

/** Ids appended after an action: <obs> and the reply. */
export function observationTokens(text: string): number[] {
  return [OBS, ...encode(text, { unknown: 'unk' })];
}

/** The env's reading of the policy's action ids (<eoa> excluded; specials shown as <name>). */
export function actionText(ids: readonly number[]): string {
  return decode(ids);
}

interface Row extends EpisodeRecord {
  val: number[];
  /** Context tokens already fed to the decoder (its cache holds positions 0..fed−1). */
  fed: number;
  /** Ids of the action being generated. */
  action: number[];
  done: boolean;
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
    const rec = startEpisode(env.reset({ seed: req.seeds[i] }).obs.text);
    const r: Row = { ...rec, val: rec.ctx.map(() => 0), fed: 0, action: [], done: false };
    if (r.ctx.length >= Tmax) endByContext(r, Tmax);
    return r;
  });

  const tokens = new Int32Array(B);
  const pos = new Int32Array(B);
  let calls = 0;
  let envSteps = 0;
  let policyTokens = 0;
  let fedTokens = 0;
  let cachedSum = 0;
  let contextSum = 0;
  // Each row's first turn: nothing cached yet.
  for (const r of rows) if (!r.done) contextSum += r.ctx.length;

  const S = Math.max(...decoder.steps);
  const chunkTokens = new Int32Array(B * S);
  const take = new Int32Array(B);
  // Value-head decoders also return V at every fed position: recorded beside each sample.
  let withValues = false;
  while (rows.some((r) => !r.done)) {
    // Call size: a prefill chunk when some row has several environment tokens to feed and
    // every row's chunk fits the context; otherwise one token per row.
    let maxPending = 0;
    let fits = true;
    for (const r of rows) {
      if (r.done) continue;
      maxPending = Math.max(maxPending, r.ctx.length - r.fed);
      if (r.fed + S > Tmax) fits = false;
    }
    const step = S > 1 && fits && maxPending >= (req.minChunk ?? 4) ? S : 1;
    const feed = step === 1 ? tokens : chunkTokens;
    feed.fill(PAD);
    for (let i = 0; i < B; i++) {
      const r = rows[i];
      if (r.done) {
        // Finished rows ride along at position 0; their output is ignored.
        take[i] = 0;
        pos[i] = 0;
        continue;
      }
      // A row's real tokens first; the padding after them lands in slots that the causal mask
      // hides and that the row's next tokens overwrite.
      take[i] = Math.min(step, r.ctx.length - r.fed);
      for (let k = 0; k < take[i]; k++) feed[i * step + k] = r.ctx[r.fed + k];
      pos[i] = r.fed;
    }
    const out = await decoder.next(feed, pos, step);
    if (out.value) withValues = true;
    calls++;
    for (let i = 0; i < B; i++) {
      const r = rows[i];
      if (r.done) continue;
      r.fed += take[i];
      fedTokens += take[i];
      if (r.fed < r.ctx.length) continue; // still feeding environment tokens
      // The whole context is in the cache: sample the next policy token.
      // The distribution after the row's last fed token: output position take−1 of row i.
      const at = i * step + take[i] - 1;
      const s = sampleRow(out.logprobs, at, V, req.rng, scratch, temperature);
      r.ctx.push(s.action);
      r.mask.push(1);
      r.logp.push(s.logprob);
      r.ent.push(s.entropy);
      r.ver.push(decoder.version);
      r.val.push(out.value ? out.value[at] : 0);
      policyTokens++;
      const isEoa = s.action === EOA;
      if (!isEoa) r.action.push(s.action);
      if (!isEoa && r.action.length < maxAct) {
        // Room for the next token? Position ctx.length must exist to feed it.
        if (r.ctx.length >= Tmax) endByContext(r, Tmax);
        continue;
      }
      if (!isEoa) r.forcedEnds++;
      // End of the action: the env acts on its text.
      const text = actionText(r.action);
      r.action = [];
      const res = envs[i].step(text);
      envSteps++;
      r.actions.push(text);
      r.rewards.push(res.reward);
      r.infos.push(res.info);
      r.observations.push(res.obs.text);
      if (res.terminated || res.truncated) {
        r.terminated = res.terminated;
        r.truncated = res.truncated;
        r.done = true;
        continue;
      }
      // Next turn: its context is the cached prefix (r.fed tokens: all but the <eoa> just
      // sampled) plus the new tokens.
      for (const id of observationTokens(res.obs.text).slice(0, Tmax - r.ctx.length)) {
        r.ctx.push(id);
        r.mask.push(0);
        r.logp.push(0);
        r.ent.push(0);
        r.ver.push(-1);
        r.val.push(0);
      }
      // The policy needs a position to act from: the context must end below Tmax.
      if (r.ctx.length >= Tmax) endByContext(r, Tmax);
      else {
        cachedSum += r.fed;
        contextSum += r.ctx.length;
      }
    }
  }

  const episodes = rows.map((r, i) => finishEpisode(r, envs[i], req.seeds[i], req.groups[i], withValues ? r.val : undefined));
  return {
    episodes,
    envSteps,
    decoderCalls: calls,
    policyTokens,
    fedTokens,
    kvCacheHitRate: contextSum > 0 ? cachedSum / contextSum : 0,
  };
}

/** The per-episode record an agent loop keeps while an episode runs. */
export interface EpisodeRecord {
  ctx: number[];
  mask: number[];
  logp: number[];
  ent: number[];
  ver: number[];
  rewards: number[];
  infos: Info[];
  actions: string[];
  observations: string[];
  forcedEnds: number;
  terminated: boolean;
  truncated: boolean;
  contextLimited: boolean;
}

/** A record at reset: the context <bos> <obs> task, all environment tokens. */
export function startEpisode(firstObservation: string): EpisodeRecord {
  const ctx = initialContext(firstObservation);
  return {
    ctx,
    mask: ctx.map(() => 0),
    logp: ctx.map(() => 0),
    ent: ctx.map(() => 0),
    ver: ctx.map(() => -1),
    rewards: [],
    infos: [],
    actions: [],
    observations: [firstObservation],
    forcedEnds: 0,
    terminated: false,
    truncated: false,
    contextLimited: false,
  };
}

/** A finished record as the trainer consumes it (typed arrays; success needs a non-truncated context). */
export function finishEpisode(r: EpisodeRecord, env: ToolEnv, seed: number, group: number, values?: readonly number[]): TokenEpisode {
  const last = r.infos[r.infos.length - 1];
  const e = env as ToolEnv & { renderText?: () => string };
  return {
    envId: env.spec.id,
    seed,
    group,
    tokens: Int32Array.from(r.ctx),
    lossMask: Uint8Array.from(r.mask),
    logprobs: Float32Array.from(r.logp),
    entropies: Float32Array.from(r.ent),
    versions: Int32Array.from(r.ver),
    ...(values ? { values: Float32Array.from(values) } : {}),
    rewards: Float64Array.from(r.rewards),
    infos: r.infos,
    actions: r.actions,
    observations: r.observations,
    forcedEnds: r.forcedEnds,
    turns: r.rewards.length,
    terminated: r.terminated,
    truncated: r.truncated,
    contextLimited: r.contextLimited,
    success: !r.contextLimited && last?.success === true,
    transcript: typeof e.renderText === 'function' ? e.renderText() : '',
  };
}

/**
 * The context is full: the episode ends as truncated (the env's clock did not run out, the
 * agent's memory did). Tokens past Tmax are dropped; a half-written action is kept in the
 * context (its tokens were sampled and are trained on) but never reaches the env.
 */
function endByContext(r: Row, Tmax: number): void {
  for (const a of [r.ctx, r.mask, r.logp, r.ent, r.ver, r.val]) a.length = Math.min(a.length, Tmax);
  r.truncated = true;
  r.contextLimited = true;
  r.done = true;
}
