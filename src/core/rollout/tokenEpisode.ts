/**
 * One text-env episode as an agent loop records it and the trainer consumes it (TITO: the ids
 * exactly as fed to the model, never re-tokenized text), and the turn-end handling both token
 * agent loops share (rollout/tokenLockstep.ts, rollout/tokenContinuous.ts): an action ends at
 * <eoa> or at `maxActionTokens` (a forced end), its text goes to the env, and the env's reply is
 * appended as <obs> + its tokens, cut where the context ends.
 *
 * Context layout of an episode (one row of the decoder):
 *
 *   <bos> <obs> task text…  calc(…)<eoa>  <obs> result: …  answer(…)<eoa>
 *   └──────── env ───────┘  └─ policy ─┘  └──── env ────┘  └── policy ──┘
 */
import type { Info, StepResult, ToolEnv, ToolObs } from '../envs/types.ts';
import { BOS, EOA, OBS, decode, encode } from '../text/codec.ts';
import { maskWords, matcherFor } from '../text/grammar.ts';
import { summarizeEpisode, type SampledEpisode } from '../metrics/iterationMetrics.ts';
import { shapeEpisode, weightsOf, type EpisodeRecord as ShapingRecord, type ShapedReward, type ShapingConfig, type ShapingWeights } from '../reward/shaping.ts';

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
  /**
   * Constrained decoding: [L · maskWords(V)] the packed vocabulary mask each token was drawn
   * under (text/grammar.ts), so the learner can score the same masked distribution; every bit set
   * on environment tokens. Absent when decoding was unconstrained.
   */
  allow?: Uint32Array;
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

/**
 * GiGPO's anchor state of each of an episode's first `turns` actions, for a token episode: the
 * observation text the action answered (the task, then the env's reply to the previous action),
 * as the grid's anchor is the observation the step was taken in (stepStateKeys). Episodes of a
 * group that meet the same reply are compared by their returns from there.
 */
export function tokenStateKeys(ep: Pick<TokenEpisode, 'observations'>, turns: number): string[] {
  if (ep.observations.length < turns) throw new RangeError(`tokenStateKeys: ${turns} turns but ${ep.observations.length} observations`);
  return ep.observations.slice(0, turns);
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
  /** V beside each token (0 on environment tokens), kept only by a loop whose decoder has a value head. */
  val?: number[];
  /** The mask each token was drawn under (null on environment tokens), kept only by a constrained loop. */
  allow?: (Uint32Array | null)[];
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
    ...(r.allow ? { allow: packMasks(r.allow) } : {}),
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

/** Packs per-position masks into [L · W]; environment positions (null) get every bit set. */
function packMasks(masks: readonly (Uint32Array | null)[]): Uint32Array {
  // Words per position: the decoder's vocabulary sized the masks (the codec's when none was drawn).
  const W = masks.find((m) => m !== null)?.length ?? maskWords();
  const full = new Uint32Array(W).fill(0xffffffff);
  const out = new Uint32Array(masks.length * W);
  masks.forEach((m, i) => out.set(m ?? full, i * W));
  return out;
}

/**
 * Constrained decoding: the mask for the next token of row `r`, from its env's grammar at this
 * turn and the action written so far (`action`: its ids, <eoa> excluded), within the action's
 * token budget. Starts the record's mask list on first use (environment tokens before it get null).
 */
export function nextTokenMask(r: EpisodeRecord & { action: number[] }, env: ToolEnv, vocab: number, maxActionTokens: number): Uint32Array {
  if (!r.allow) r.allow = r.ctx.map(() => null);
  if (typeof env.actionGrammar !== 'function') throw new Error(`constrained decoding: ${env.spec.id} has no action grammar`);
  return matcherFor(env.actionGrammar(), vocab).mask(actionText(r.action), maxActionTokens - r.action.length);
}

/** Appends one sampled policy token (with its behaviour log-prob, entropy, version, V and the mask it was drawn under). */
export function appendSample(r: EpisodeRecord, s: { action: number; logprob: number; entropy: number }, version: number, value = 0, allowed: Uint32Array | null = null): void {
  r.ctx.push(s.action);
  r.mask.push(1);
  r.logp.push(s.logprob);
  r.ent.push(s.entropy);
  r.ver.push(version);
  r.val?.push(value);
  r.allow?.push(allowed);
}

/**
 * Takes a sampled token into the action being written (`action`: its ids so far, <eoa>
 * excluded). Returns the action's text when the token ends it (<eoa>, or the action reached
 * `maxActionTokens`: a forced end, counted), and clears `action`; null while it goes on.
 */
export function takeActionToken(r: EpisodeRecord & { action: number[] }, token: number, maxActionTokens: number): string | null {
  const isEoa = token === EOA;
  if (!isEoa) r.action.push(token);
  if (!isEoa && r.action.length < maxActionTokens) return null;
  if (!isEoa) r.forcedEnds++;
  const text = actionText(r.action);
  r.action = [];
  return text;
}

/**
 * Records the env's reply to an action. 'ended': the env terminated or truncated the episode;
 * 'contextFull': the reply filled the context (tokens past `context` are dropped), so the policy
 * has no position left to act from; 'nextTurn': the next action can be sampled.
 */
export function applyReply(r: EpisodeRecord, res: StepResult<ToolObs>, context: number): 'ended' | 'contextFull' | 'nextTurn' {
  r.rewards.push(res.reward);
  r.infos.push(res.info);
  r.observations.push(res.obs.text);
  if (res.terminated || res.truncated) {
    r.terminated = res.terminated;
    r.truncated = res.truncated;
    return 'ended';
  }
  for (const id of observationTokens(res.obs.text).slice(0, context - r.ctx.length)) {
    r.ctx.push(id);
    r.mask.push(0);
    r.logp.push(0);
    r.ent.push(0);
    r.ver.push(-1);
    r.val?.push(0);
    r.allow?.push(null);
  }
  return r.ctx.length >= context ? 'contextFull' : 'nextTurn';
}

/**
 * The context is full: the episode ends as truncated (the env's clock did not run out, the
 * agent's memory did). Tokens past `context` are dropped; a half-written action stays in the
 * context (its tokens were sampled and are trained on) but never reaches the env.
 */
export function truncateToContext(r: EpisodeRecord, context: number): void {
  for (const a of [r.ctx, r.mask, r.logp, r.ent, r.ver, r.val, r.allow]) if (a) a.length = Math.min(a.length, context);
  r.truncated = true;
  r.contextLimited = true;
}

/** Policy tokens of an episode (its loss-mask sum). */
export function policyTokenCount(ep: Pick<TokenEpisode, 'lossMask'>): number {
  let n = 0;
  for (let i = 0; i < ep.lossMask.length; i++) n += ep.lossMask[i];
  return n;
}

/** What the shaper and the episode metrics read from a token episode. */
export function tokenEpisodeRecord(ep: TokenEpisode): ShapingRecord {
  return { rewards: ep.rewards, infos: ep.infos, terminated: ep.terminated, truncated: ep.truncated, policyTokens: policyTokenCount(ep) };
}

/** The score phase for one token episode: env reward + the named shaping terms. */
export function shapeTokenEpisode(ep: TokenEpisode, shaping: ShapingConfig, weights: ShapingWeights = weightsOf(shaping)): ShapedReward {
  return shapeEpisode(tokenEpisodeRecord(ep), shaping, weights);
}

/** The metrics' view of a sampled token episode (metrics/batchMetrics.ts). */
export function sampledTokenEpisode(ep: TokenEpisode, shaped: ShapedReward): SampledEpisode {
  const entropies: number[] = [];
  for (let i = 0; i < ep.lossMask.length; i++) if (ep.lossMask[i]) entropies.push(ep.entropies[i]);
  return { summary: summarizeEpisode(tokenEpisodeRecord(ep), shaped), entropies, actionKey: ep.actions.join('\u0000'), forcedEnd: ep.forcedEnds > 0, contextLimited: ep.contextLimited };
}
