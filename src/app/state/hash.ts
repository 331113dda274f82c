/**
 * The view's settings in the URL hash, tensorflow/playground style, so a link reproduces what
 * a person sees: `#env=grid/door-key-6x6&seed=7&k.maxSteps=40`.
 *
 * Parsing never throws: every problem becomes a message that says what was wrong and what is
 * used instead (bad input never loses the rest), and the caller falls back to defaults.
 */
import type { EnvKwargs } from '../../core/envs/registry.ts';
import { overflowMessage, overflowsNumber } from '../../core/util/numberText.ts';

/** Largest seed we accept: the env RNG takes the seed as an unsigned 32-bit integer. */
export const MAX_SEED = 0xffffffff;

export interface HashState {
  /** Env id as written in the link (not yet checked against the registry). */
  env: string | null;
  /** Episode seed, or null when absent or invalid. */
  seed: number | null;
  /** Env keyword arguments from `k.<name>=<value>` pairs. */
  kwargs: EnvKwargs;
}

export interface ParsedHash {
  state: HashState;
  /** Human-readable problems found in the hash; empty when it was clean. */
  problems: string[];
}

/** A seed from text, or an explanation of why it is not one. */
export function parseSeed(text: string): { seed: number } | { error: string } {
  const t = text.trim();
  if (!/^\d+$/.test(t)) return { error: `seed ${JSON.stringify(text)} is not a whole number ≥ 0` };
  const n = Number(t);
  if (!Number.isSafeInteger(n) || n > MAX_SEED) return { error: `seed ${t} is larger than ${MAX_SEED}` };
  return { seed: n };
}

/** `true`/`false`/numbers become JSON values; anything else stays a string. */
function parseKwargValue(raw: string): unknown {
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  if (raw !== '' && /^-?(\d+\.?\d*|\.\d+)(e-?\d+)?$/i.test(raw)) return Number(raw);
  return raw;
}

function decode(part: string): string | null {
  try {
    return decodeURIComponent(part.replace(/\+/g, ' '));
  } catch {
    return null;
  }
}

export function parseHash(hash: string): ParsedHash {
  const state: HashState = { env: null, seed: null, kwargs: {} };
  const problems: string[] = [];
  const body = hash.startsWith('#') ? hash.slice(1) : hash;
  if (!body) return { state, problems };
  for (const part of body.split('&')) {
    if (!part) continue;
    const eq = part.indexOf('=');
    const key = decode(eq < 0 ? part : part.slice(0, eq));
    const value = decode(eq < 0 ? '' : part.slice(eq + 1));
    if (key === null || value === null) {
      problems.push(`could not decode ${JSON.stringify(part)} in the link`);
      continue;
    }
    if (key === 'env') {
      if (value) state.env = value;
      else problems.push('the link has an empty env=');
    } else if (key === 'seed') {
      const s = parseSeed(value);
      if ('seed' in s) state.seed = s.seed;
      else problems.push(`the link's ${s.error}`);
    } else if (key.startsWith('k.') && key.length > 2) {
      // An overflowing number would become Infinity here and null in the next link: named and left out.
      if (overflowsNumber(value)) problems.push(`the link's ${key}=${overflowMessage(value)}; left out`);
      else state.kwargs[key.slice(2)] = parseKwargValue(value);
    } else {
      problems.push(`the link has an unknown setting ${JSON.stringify(key)} (known: env, seed, k.<name>)`);
    }
  }
  return { state, problems };
}

/** Keeps `/` readable in env ids; escapes everything that would break the `&`/`=` structure. */
function encode(text: string): string {
  return encodeURIComponent(text).replace(/%2F/gi, '/');
}

export function formatHash(state: { env: string; seed: number; kwargs?: EnvKwargs }): string {
  const parts = [`env=${encode(state.env)}`, `seed=${state.seed}`];
  for (const [k, v] of Object.entries(state.kwargs ?? {})) {
    parts.push(`k.${encode(k)}=${encode(typeof v === 'string' ? v : JSON.stringify(v))}`);
  }
  return '#' + parts.join('&');
}

/**
 * A hash's `key=value` parts, URI-decoded, in order (`#` and empty parts skipped; a part without
 * `=` has the value ''); a part that does not decode is a problem, not a pair.
 */
export function hashPairs(hash: string): { pairs: [string, string][]; problems: string[] } {
  const pairs: [string, string][] = [];
  const problems: string[] = [];
  const body = hash.startsWith('#') ? hash.slice(1) : hash;
  for (const part of body.split('&')) {
    if (!part) continue;
    const eq = part.indexOf('=');
    try {
      pairs.push([decodeURIComponent(eq < 0 ? part : part.slice(0, eq)), decodeURIComponent(eq < 0 ? '' : part.slice(eq + 1))]);
    } catch {
      problems.push(`could not decode ${JSON.stringify(part.slice(0, 40))}`);
    }
  }
  return { pairs, problems };
}
