/**
 * GAE for a token policy: PPO's advantages and value targets over an episode's policy tokens,
 * with discounting per turn (an action of several tokens is one env step).
 */
import type { Numbers } from '../algos/stats.ts';
import type { TokenEpisode } from '../rollout/tokenEpisode.ts';

/**
 * GAE(γ, λ) over one episode's policy tokens (PPO for a token policy), per context position.
 *
 * The timeline is the episode's policy tokens in order; environment tokens are not steps (they
 * are part of the transition from one action to the next). An action's tokens run from its
 * first token to the one that ends it (<eoa>, or the forced end), and the env's reward for that
 * turn lands on that last token. Discounting is per turn, so γ and λ mean what they mean for the
 * same env with the MLP: inside an action γ = λ = 1 (the next token is the same decision
 * continued, with no env step between), across a turn boundary γ and λ apply:
 *
 *   δ_k = r_k + γ_k·V_{k+1} − V_k,   A_k = δ_k + γ_k·λ_k·A_{k+1},   R_k = A_k + V_k
 *   γ_k, λ_k = γ, λ when token k ends an action, else 1, 1.
 *
 * After the last token: V = 0 if the episode terminated; otherwise (the env's time limit or the
 * context ran out) it bootstraps from the last token's own V, since the final observation was
 * never fed to the model (V of the state one action later is not available). A half-written
 * action cut by the context has no env step and earns no reward.
 *
 * @param ep lossMask [L] and values [L] (V of the state each policy token was sampled in).
 * @param turnRewards [turns] reward of each env step (e.g. ShapedReward.perStep).
 * @returns advantages [L] and returns [L], 0 on environment tokens.
 */
export function tokenGae(
  ep: Pick<TokenEpisode, 'lossMask' | 'terminated'> & { values: Float32Array },
  turnRewards: Numbers,
  gamma: number,
  lambda: number,
): { advantages: Float64Array; returns: Float64Array } {
  const L = ep.lossMask.length;
  if (ep.values.length !== L) throw new RangeError(`tokenGae: ${L} tokens but ${ep.values.length} values`);
  const idx: number[] = [];
  for (let i = 0; i < L; i++) if (ep.lossMask[i]) idx.push(i);
  const K = idx.length;
  // Token k ends an action when the next policy token is not adjacent (env tokens between) or k is last.
  const ends = idx.map((p, k) => k === K - 1 || idx[k + 1] !== p + 1);
  const actions = ends.filter(Boolean).length;
  const T = turnRewards.length;
  if (!(actions === T || (actions === T + 1 && !ep.terminated))) {
    throw new RangeError(`tokenGae: ${actions} actions in the context but ${T} turn rewards (the context may hold one unfinished action more)`);
  }
  const reward = new Float64Array(K);
  for (let k = 0, turn = 0; k < K; k++) if (ends[k] && turn < T) reward[k] = turnRewards[turn++];
  const advantages = new Float64Array(L);
  const returns = new Float64Array(L);
  let nextValue = ep.terminated || K === 0 ? 0 : ep.values[idx[K - 1]];
  let nextAdv = 0;
  for (let k = K - 1; k >= 0; k--) {
    const g = ends[k] ? gamma : 1;
    const l = ends[k] ? lambda : 1;
    const v = ep.values[idx[k]];
    const a = reward[k] + g * nextValue - v + g * l * nextAdv;
    advantages[idx[k]] = a;
    returns[idx[k]] = a + v;
    nextValue = v;
    nextAdv = a;
  }
  return { advantages, returns };
}
