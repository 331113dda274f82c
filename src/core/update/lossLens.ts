/**
 * What each policy-gradient loss does to one token, in float64: the weight w_t with which the
 * token's ∇log π enters the update, ∂ℓ/∂log π_t = −A_t·w_t (per unit of its aggregation weight),
 * and whether the loss passed the token in full, cut it (clip), faded it (SAPO's gate took over
 * 10% of the plain weight r), bounded it (CISPO) or masked it (Clip-Cov). The same tokens can be read under any loss, which is what a
 * side-by-side view of two losses needs; the train graph (update/trainStep.ts, surrogates.ts) is
 * the implementation, this is its per-token reading:
 *   clip:  r·[not cut]                       cispo: clip(r, 1 − ε_low, 1 + ε_high)
 *   sapo:  4·σ(1 − σ)·r, σ = σ(τ(r − 1))      gspo:  s·[s not cut]   (s: the sequence's ratio)
 *   gmpo:  s·[log r not cut]  (s: the geometric mean of the sequence's sign-clipped ratios)
 * A token is cut where its ratio left the range in A's direction (A > 0 above, A < 0 below).
 */
import type { CovarianceMode, PgObjective } from './surrogates.ts';

/** The loss settings a reading needs (AlgoConfig's fields of the same meaning). */
export interface LensLoss {
  objective: PgObjective;
  clipLow: number;
  clipHigh: number;
  tauPos: number;
  tauNeg: number;
  covariance: CovarianceMode;
}

/** How the loss treated a token. */
export type LensState = 'full' | 'cut' | 'faded' | 'bounded' | 'masked';

export interface LensTokens {
  /** [n] log π_θ − log π_old of each token. */
  logRatio: ArrayLike<number>;
  /** [n] its advantage. */
  adv: ArrayLike<number>;
  /** [n] its sequence (episode) index, for the sequence objectives (gspo, gmpo). */
  seq: ArrayLike<number>;
  /** [n] Clip-Cov / KL-Cov selection (1 = selected); absent = none. */
  covMask?: ArrayLike<number>;
}

const cutBy = (A: number, x: number, lo: number, hi: number) => (A > 0 && x > hi) || (A < 0 && x < lo);

/** Each token's gradient weight w_t and state under `loss`. */
export function lensWeights(loss: LensLoss, t: LensTokens): { weight: Float64Array; state: LensState[] } {
  const n = t.logRatio.length;
  const weight = new Float64Array(n);
  const state: LensState[] = new Array<LensState>(n).fill('full');
  const seqRatio = loss.objective === 'gspo' || loss.objective === 'gmpo' ? sequenceRatios(loss, t) : null;
  for (let i = 0; i < n; i++) {
    const A = t.adv[i];
    const l = t.logRatio[i];
    const r = Math.exp(l);
    const lo = 1 - loss.clipLow;
    const hi = 1 + loss.clipHigh;
    let w: number;
    if (loss.objective === 'clip' || loss.objective === 'gspo') {
      const x = loss.objective === 'gspo' ? seqRatio!.get(t.seq[i])! : r;
      const cut = cutBy(A, x, lo, hi);
      w = cut ? 0 : x;
      if (cut) state[i] = 'cut';
    } else if (loss.objective === 'cispo') {
      w = Math.min(Math.max(r, lo), hi);
      if (w !== r) state[i] = 'bounded';
    } else if (loss.objective === 'sapo') {
      const tau = A > 0 ? loss.tauPos : loss.tauNeg;
      const s = 1 / (1 + Math.exp(-tau * (r - 1)));
      w = 4 * s * (1 - s) * r;
      if (w < 0.9 * r) state[i] = 'faded';
    } else {
      const cut = cutBy(A, l, -loss.clipLow, loss.clipHigh);
      w = cut ? 0 : seqRatio!.get(t.seq[i])!;
      if (cut) state[i] = 'cut';
    }
    if (loss.covariance === 'clip-cov' && t.covMask?.[i]) {
      w = 0;
      state[i] = 'masked';
    }
    weight[i] = w;
  }
  return { weight, state };
}

/** GSPO: exp(mean log r) per sequence; GMPO: exp(mean of the sign-clipped log r). */
function sequenceRatios(loss: LensLoss, t: LensTokens): Map<number, number> {
  const sum = new Map<number, number>();
  const cnt = new Map<number, number>();
  for (let i = 0; i < t.logRatio.length; i++) {
    let l = t.logRatio[i];
    if (loss.objective === 'gmpo') {
      const sgn = Math.sign(t.adv[i]);
      l = sgn * Math.min(sgn * l, sgn * Math.min(Math.max(l, -loss.clipLow), loss.clipHigh));
    }
    sum.set(t.seq[i], (sum.get(t.seq[i]) ?? 0) + l);
    cnt.set(t.seq[i], (cnt.get(t.seq[i]) ?? 0) + 1);
  }
  const out = new Map<number, number>();
  for (const [s, v] of sum) out.set(s, Math.exp(v / cnt.get(s)!));
  return out;
}
