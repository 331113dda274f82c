/**
 * Shared by the paper-exactness tests of the losses (sapo, gmpo, covariance): a small MLP policy,
 * float64 log-probs of given rows under any weights (the policy graph, a separate model from the
 * train graph), and central finite differences of a paper objective against the train graph's
 * exposed gradient.
 */
import * as ortNode from 'onnxruntime-node';
import { buildPolicyGraph } from '../../../core/models/policyGraph.ts';
import { MlpPolicy } from '../../../core/models/mlp.ts';
import { initWeights, type Weights } from '../../../core/models/types.ts';
import { Rng } from '../../../core/util/rng.ts';
import { PolicySession, type OrtModule } from '../session.ts';

export const ort = ortNode as unknown as OrtModule;
export const A = 4;
export const D = 6;
export const mlp = () => new MlpPolicy({ obsDim: D, hidden: [8, 8], numActions: A, activation: 'tanh', valueHead: false, policyHeadGain: 1 });

/** log π_θ(a_r | s_r) of every row, float64, for weights `w` (one policy session, weights swapped). */
export async function logprobsOf(m: MlpPolicy, obs: Float32Array, actions: Int32Array) {
  const n = actions.length;
  const sess = await PolicySession.create(ort, buildPolicyGraph(m, n), initWeights(m, 1));
  return {
    async at(w: Weights): Promise<Float64Array> {
      sess.setWeights(w);
      const r = await sess.run({ obs });
      return Float64Array.from({ length: n }, (_, i) => r.logprobs[i * A + actions[i]]);
    },
    release: () => sess.release(),
  };
}

/**
 * Central differences of `f` at w on `entries` random parameter entries, against `grads` (the
 * graph's `grad.<param>`); the worst |fd − analytic| / (|fd| + |analytic| + 1e-3), and the
 * largest |analytic| seen (so a test can insist the gradient is not trivially 0).
 */
export async function fdCheck(m: MlpPolicy, w: Weights, grads: Record<string, Float32Array>, f: (w: Weights) => Promise<number>, entries: number, seed: number) {
  const rng = new Rng(seed);
  const h = 1e-2;
  let worst = 0;
  let scale = 0;
  for (let k = 0; k < entries; k++) {
    const p = m.params[rng.int(0, m.params.length)];
    const i = rng.int(0, w[p.name].length);
    const at = (d: number) => {
      const c: Weights = { ...w, [p.name]: Float32Array.from(w[p.name]) };
      c[p.name][i] += d;
      return f(c);
    };
    // Float32 weights: the step actually taken is what was stored.
    const up = Math.fround(w[p.name][i] + h) - w[p.name][i];
    const down = w[p.name][i] - Math.fround(w[p.name][i] - h);
    const fd = ((await at(up)) - (await at(-down))) / (up + down);
    const an = grads[`grad.${p.name}`][i];
    scale = Math.max(scale, Math.abs(an));
    worst = Math.max(worst, Math.abs(fd - an) / (Math.abs(fd) + Math.abs(an) + 1e-3));
  }
  return { worst, scale };
}

/** A batch of `lengths` episodes packed as MLP rows: random observations and actions, its rows' episode index. */
export function randomEpisodes(lengths: readonly number[], seed: number) {
  const rng = new Rng(seed);
  const S = lengths.reduce((a, b) => a + b, 0);
  const episode = new Int32Array(S);
  lengths.reduce((o, T, e) => (episode.fill(e, o, o + T), o + T), 0);
  const obs = Float32Array.from({ length: S * D }, () => rng.random() * 2 - 1);
  const actions = Int32Array.from({ length: S }, () => rng.int(0, A));
  return { S, episode, obs, actions, rng };
}

/**
 * A paper test's scene: the MLP at init seed `wSeed`, random episodes of `lengths` (seed `epSeed`),
 * their log-probs under those weights (`lp0`), and `feedOf`, the train graph's feed where every row
 * carries its episode's advantage and the sequence weight 1/(G·|o_i|) (with `seq_ids` for losses
 * that reduce per episode).
 */
export async function paperScene(lengths: readonly number[], wSeed: number, epSeed: number) {
  const m = mlp();
  const w = initWeights(m, wSeed);
  const eps = randomEpisodes(lengths, epSeed);
  const policy = await logprobsOf(m, eps.obs, eps.actions);
  const G = lengths.length;
  const { S, episode } = eps;
  const feedOf = (epAdv: readonly number[], oldLogp: Float32Array, withSeqIds = false) => ({
    obs: eps.obs,
    actions: eps.actions,
    advantages: Float32Array.from({ length: S }, (_, r) => epAdv[episode[r]]),
    old_logprobs: oldLogp,
    weights: Float32Array.from({ length: S }, (_, r) => 1 / (G * lengths[episode[r]])),
    mask: new Float32Array(S).fill(1),
    ...(withSeqIds ? { seq_ids: Int32Array.from(episode) } : {}),
  });
  return { m, w, ...eps, G, policy, lp0: await policy.at(w), feedOf };
}
