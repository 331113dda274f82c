/**
 * GAE(γ, λ) over one sequence's trained positions, with discounting per env step (turn), for
 * every policy: a grid episode's positions are its steps (each ends a turn), a token episode's
 * are its policy tokens (an action of several tokens is one env step).
 *
 * The timeline is the sequence's trained positions in order; masked-out positions (environment
 * tokens) are not steps (they are part of the transition from one action to the next). A turn's
 * reward lands on the position that ends it. Inside an action γ = λ = 1 (the next token is the
 * same decision continued, with no env step between), across a turn boundary γ and λ apply:
 *
 *   δ_k = r_k + γ_k·V_{k+1} − V_k,   A_k = δ_k + γ_k·λ_k·A_{k+1},   R_k = A_k + V_k
 *   γ_k, λ_k = γ, λ when position k ends a turn, else 1, 1.
 *
 * After the last position V = `bootstrap`: 0 if the episode terminated; otherwise the value of
 * the state after it (a grid episode's V(s_T); for tokens the last policy token's own V, since
 * the final observation was never fed to the model). With one position per turn this is the
 * textbook GAE (Schulman et al. 2016) step for step; `stepGae` is that case.
 */
import type { Numbers } from './stats.ts';

export interface GaeSequence {
  /** First position and span of the sequence in the per-position arrays. */
  start: number;
  length: number;
  /** [·] 1 on trained positions. */
  mask: Numbers;
  /** [·] 1 where a position ends a turn. */
  turnEnd: Numbers;
  /** [·] reward at each position (a turn's reward on its last position, 0 elsewhere). */
  rewards: Numbers;
  /** [·] V at each position. */
  values: Numbers;
  /** V after the last position (see above); must be finite. */
  bootstrap: number;
}

/** Writes advantages and returns of the sequence's trained positions into `adv` and `ret` (same layout). */
export function sequenceGae(s: GaeSequence, gamma: number, lambda: number, adv: Float64Array, ret: Float64Array): void {
  if (!(gamma >= 0 && gamma <= 1)) throw new RangeError(`gae: gamma must be in [0, 1], got ${gamma}`);
  if (!(lambda >= 0 && lambda <= 1)) throw new RangeError(`gae: lambda must be in [0, 1], got ${lambda}`);
  if (!Number.isFinite(s.bootstrap)) throw new RangeError('gae: a truncated (or unfinished) episode needs a finite bootstrap value V(s_T)');
  let nextValue = s.bootstrap;
  let nextAdv = 0;
  for (let k = s.start + s.length - 1; k >= s.start; k--) {
    if (s.mask[k] === 0) continue;
    const g = s.turnEnd[k] ? gamma : 1;
    const l = s.turnEnd[k] ? lambda : 1;
    const v = s.values[k];
    const a = s.rewards[k] + g * nextValue - v + g * l * nextAdv;
    adv[k] = a;
    ret[k] = a + v;
    nextValue = v;
    nextAdv = a;
  }
}

/**
 * GAE over an episode whose every position is one env step (one action per turn): `sequenceGae`
 * with every position trained and ending a turn, i.e. the textbook recursion
 *   δ_t = r_t + γ·V_{t+1} − V_t,   A_t = δ_t + γλ·A_{t+1},   R_t = A_t + V_t,   V_T = bootstrap.
 * λ = 1 gives Monte Carlo returns minus V; λ = 0 the one-step TD error.
 * @param rewards [T] reward after step t's action.
 * @param values [T] V(s_t).
 * @param bootstrap V(s_T) after the last step: 0 when the episode terminated.
 * @returns advantages [T] and returns (value targets) [T].
 */
export function stepGae(rewards: Numbers, values: Numbers, bootstrap: number, gamma: number, lambda: number): { advantages: Float64Array; returns: Float64Array } {
  const T = rewards.length;
  if (values.length !== T) throw new RangeError(`gae: ${T} rewards vs ${values.length} values`);
  const ones = new Uint8Array(T).fill(1);
  const advantages = new Float64Array(T);
  const returns = new Float64Array(T);
  sequenceGae({ start: 0, length: T, mask: ones, turnEnd: ones, rewards, values, bootstrap }, gamma, lambda, advantages, returns);
  return { advantages, returns };
}
