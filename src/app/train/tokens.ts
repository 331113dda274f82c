/**
 * Token transcripts for the trajectory inspector, as data: a token episode's context split into
 * the task, then per turn the policy's action and the env's reply; and the colour scales a token
 * is painted with (log-prob, entropy, advantage, loss mask). Pure (no DOM, no React), tested.
 *
 * Context layout (rollout/tokenEpisode.ts): <bos> <obs> task… | action₁… <eoa> | <obs> reply₁… | action₂…
 * Policy tokens have loss mask 1, environment tokens 0; so turn k is the k-th maximal run of
 * mask-1 tokens plus the mask-0 run that follows it.
 */
import { SPECIAL_TOKENS, tokenText } from '../../core/text/codec.ts';
import type { TokenEpisodeView } from '../../runtime/trainWorker/types.ts';

export type Channel = 'logprob' | 'entropy' | 'advantage' | 'mask';

export const CHANNELS: readonly { id: Channel; label: string; help: string }[] = [
  { id: 'logprob', label: 'probability', help: 'π(token): how likely the policy found the token it sampled. Pale = sure, deep orange = a surprising pick.' },
  { id: 'entropy', label: 'entropy', help: 'Entropy of the distribution the token was drawn from (nats). Deep purple = the policy was torn between options here.' },
  { id: 'advantage', label: 'advantage', help: 'The advantage each policy token was trained with: GRPO gives every token of an episode the episode\'s advantage, MT-GRPO and GiGPO one per turn (the number beside each turn). Green = made more likely, red = less.' },
  { id: 'mask', label: 'loss mask', help: 'Which tokens the loss trains on: the policy\'s own tokens (mask 1, blue). Environment tokens (mask 0, grey) are context only.' },
];

/** One context token as the inspector draws it. */
export interface TokenCell {
  /** Position in the context. */
  pos: number;
  id: number;
  /** Printable form: the character / word, or the special's name without brackets ("eoa"). */
  text: string;
  special: boolean;
  /** Loss mask 1: sampled by the policy. */
  policy: boolean;
}

export interface Turn {
  /** 1-based turn number (the action that opens it). */
  n: number;
  /** The policy's tokens, <eoa> included (a forced end has none). */
  action: TokenCell[];
  /** The env's reply tokens (<obs> included); empty when the context ended first. */
  reply: TokenCell[];
  /** Env reward after this action; NaN when the env never received it (the context ran out). */
  reward: number;
  /** The action text as the env received it ('' when it never did). */
  actionText: string;
  /** The advantage the action's tokens were trained with (the episode's when no per-turn one came; NaN when neither). */
  advantage: number;
}

export interface Transcript {
  /** <bos>, <obs> and the task text: everything before the first policy token. */
  task: TokenCell[];
  turns: Turn[];
}

export function tokenCell(pos: number, id: number, mask: number): TokenCell {
  const special = id >= 0 && id < SPECIAL_TOKENS.length;
  const raw = tokenText(id);
  return { pos, id, text: special ? raw.slice(1, -1) : raw, special, policy: mask === 1 };
}

/** Splits a token episode's context into task and turns (see the file comment). */
export function toTranscript(ep: Pick<TokenEpisodeView, 'tokens' | 'lossMask' | 'rewards' | 'actions'> & Partial<Pick<TokenEpisodeView, 'advantage' | 'turnAdvantages'>>): Transcript {
  const L = ep.tokens.length;
  if (ep.lossMask.length !== L) throw new RangeError(`toTranscript: ${L} tokens but ${ep.lossMask.length} mask entries`);
  const task: TokenCell[] = [];
  const turns: Turn[] = [];
  let i = 0;
  for (; i < L && ep.lossMask[i] !== 1; i++) task.push(tokenCell(i, ep.tokens[i], 0));
  while (i < L) {
    const k = turns.length;
    const advantage = ep.turnAdvantages && k < ep.turnAdvantages.length ? ep.turnAdvantages[k] : (ep.advantage ?? NaN);
    const turn: Turn = { n: k + 1, action: [], reply: [], reward: k < ep.rewards.length ? ep.rewards[k] : NaN, actionText: ep.actions[k] ?? '', advantage };
    for (; i < L && ep.lossMask[i] === 1; i++) turn.action.push(tokenCell(i, ep.tokens[i], 1));
    for (; i < L && ep.lossMask[i] !== 1; i++) turn.reply.push(tokenCell(i, ep.tokens[i], 0));
    turns.push(turn);
  }
  return { task, turns };
}

// ---------------------------------------------------------------- colour scales

/** The numeric range a channel's colours span, for the legend and for scaling. */
export interface ScaleRange {
  lo: number;
  hi: number;
}

const clamp01 = (x: number) => (x < 0 ? 0 : x > 1 ? 1 : x);

/**
 * Range of a channel over the policy tokens of an episode (env tokens carry no log-prob or
 * entropy). logprob: [min log π, 0]; entropy: [0, max H]; advantage: symmetric [−a, a] with a
 * the largest |advantage| of the batch (so episodes compare); mask: [0, 1].
 */
export function channelRange(channel: Channel, ep: Pick<TokenEpisodeView, 'lossMask' | 'logprobs' | 'entropies'>, batchAbsAdvantage: number): ScaleRange {
  if (channel === 'mask') return { lo: 0, hi: 1 };
  if (channel === 'advantage') {
    const a = batchAbsAdvantage > 1e-12 ? batchAbsAdvantage : 1;
    return { lo: -a, hi: a };
  }
  let lo = 0;
  let hi = 0;
  for (let i = 0; i < ep.lossMask.length; i++) {
    if (ep.lossMask[i] !== 1) continue;
    if (channel === 'logprob') lo = Math.min(lo, ep.logprobs[i]);
    else hi = Math.max(hi, ep.entropies[i]);
  }
  // A fully certain episode still gets a visible scale (and no division by zero).
  if (channel === 'logprob') return { lo: Math.min(lo, -1e-3), hi: 0 };
  return { lo: 0, hi: Math.max(hi, 1e-3) };
}

/** Per channel, the value a policy token at `pos` is coloured by; `turnAdvantage`: its turn's advantage (default the episode's). */
export function channelValue(channel: Channel, ep: Pick<TokenEpisodeView, 'lossMask' | 'logprobs' | 'entropies' | 'advantage'>, pos: number, turnAdvantage = ep.advantage): number {
  if (channel === 'mask') return ep.lossMask[pos];
  if (channel === 'advantage') return ep.lossMask[pos] === 1 ? turnAdvantage : 0;
  return channel === 'logprob' ? ep.logprobs[pos] : ep.entropies[pos];
}

/** A colour on a light-to-deep ramp in one hue: t = 0 → nearly white, t = 1 → deep. */
function ramp(hue: number, t: number): string {
  const u = clamp01(t);
  return `hsl(${hue} ${Math.round(30 + 55 * u)}% ${Math.round(96 - 50 * u)}%)`;
}

/**
 * Background colour of a policy token. logprob: pale at log π = 0 (certain), deep orange at the
 * episode's least likely token; entropy: pale at 0, deep purple at the range's top; advantage:
 * diverging, red below 0, green above, pale at 0; mask: blue (policy) / grey (env).
 */
export function tokenColor(channel: Channel, value: number, range: ScaleRange): string {
  if (!Number.isFinite(value)) return 'hsl(0 0% 90%)';
  switch (channel) {
    case 'logprob':
      return ramp(24, value / range.lo);
    case 'entropy':
      return ramp(275, value / range.hi);
    case 'advantage':
      return value >= 0 ? ramp(140, value / range.hi) : ramp(0, value / range.lo);
    case 'mask':
      return value >= 1 ? 'hsl(215 80% 82%)' : 'hsl(0 0% 90%)';
  }
}

/** WCAG relative luminance of an `hsl(h s% l%)` colour as tokenColor writes it (0 = black, 1 = white). */
export function hslLuminance(css: string): number {
  const m = /^hsl\((\d+(?:\.\d+)?) (\d+(?:\.\d+)?)% (\d+(?:\.\d+)?)%\)$/.exec(css);
  if (!m) throw new RangeError(`hslLuminance: not an hsl() colour: ${css}`);
  const [h, sat, l] = [Number(m[1]), Number(m[2]) / 100, Number(m[3]) / 100];
  const a = sat * Math.min(l, 1 - l);
  const f = (n: number) => {
    const k = (n + h / 30) % 12;
    return l - a * Math.max(-1, Math.min(k - 3, 9 - k, 1));
  };
  const lin = (c: number) => (c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
  return 0.2126 * lin(f(0)) + 0.7152 * lin(f(8)) + 0.0722 * lin(f(4));
}

/**
 * Text colour on `tokenColor`'s background: black or white, whichever contrasts more (every
 * background then reaches WCAG's 4.5:1; the crossover is at luminance √(1.05 · 0.06) − 0.05 ≈ 0.179).
 */
export function tokenInk(channel: Channel, value: number, range: ScaleRange): string {
  if (channel === 'mask' || !Number.isFinite(value)) return 'inherit';
  return hslLuminance(tokenColor(channel, value, range)) > 0.179 ? '#000' : '#fff';
}

/** `n` evenly spaced stops of a channel's scale, lo → hi, for the legend gradient. */
export function legendStops(channel: Channel, range: ScaleRange, n = 7): { value: number; color: string }[] {
  return Array.from({ length: n }, (_, k) => {
    const value = range.lo + ((range.hi - range.lo) * k) / (n - 1);
    return { value, color: tokenColor(channel, value, range) };
  });
}

/** Mean of `xs` over a turn's policy tokens (NaN for a turn without any). */
export function meanOver(cells: readonly TokenCell[], xs: ArrayLike<number>): number {
  if (cells.length === 0) return NaN;
  let s = 0;
  for (const c of cells) s += xs[c.pos];
  return s / cells.length;
}

/** The largest |advantage| of a batch, per-turn ones included: the advantage scale's half-width. */
export function batchAbsAdvantage(episodes: readonly { advantage: number; turnAdvantages?: ArrayLike<number> }[]): number {
  let a = 0;
  for (const e of episodes) {
    if (Number.isFinite(e.advantage)) a = Math.max(a, Math.abs(e.advantage));
    for (const x of Array.from(e.turnAdvantages ?? [])) if (Number.isFinite(x)) a = Math.max(a, Math.abs(x));
  }
  return a;
}
