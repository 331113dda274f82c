/**
 * A batch of token episodes as the train step sees it: sequences padded to the context T, with
 * position t scored on the next id tokens[t+1] (next-token training, TITO: the exact ids the
 * rollout fed, never re-tokenized text).
 */
import { PAD } from '../text/codec.ts';
import type { TokenEpisode } from '../rollout/tokenEpisode.ts';
import { shapeEpisode, type EpisodeRecord, type ShapedReward, type ShapingConfig } from '../reward/shaping.ts';

/** Policy tokens of an episode (its loss-mask sum). */
export function policyTokenCount(ep: TokenEpisode): number {
  let n = 0;
  for (let i = 0; i < ep.lossMask.length; i++) n += ep.lossMask[i];
  return n;
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
 * The policy version of each training position, [n·T] in `shiftedBatch`'s layout (position t
 * holds the version that sampled tokens[t+1]); −1 on environment tokens and padding.
 */
export function shiftedVersions(episodes: readonly Pick<TokenEpisode, 'versions'>[], T: number): Int32Array {
  const ver = new Int32Array(episodes.length * T).fill(-1);
  episodes.forEach((ep, b) => {
    for (let t = 0; t + 1 < ep.versions.length; t++) ver[b * T + t] = ep.versions[t + 1];
  });
  return ver;
}

/** What the shaper and the episode metrics read from a token episode. */
export function tokenEpisodeRecord(ep: TokenEpisode): EpisodeRecord {
  return { rewards: ep.rewards, infos: ep.infos, terminated: ep.terminated, truncated: ep.truncated, policyTokens: policyTokenCount(ep) };
}

/** The score phase for one token episode: env reward + the named shaping terms. */
export function shapeTokenEpisode(ep: TokenEpisode, shaping: ShapingConfig): ShapedReward {
  return shapeEpisode(tokenEpisodeRecord(ep), shaping);
}
