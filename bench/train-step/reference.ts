/**
 * Independent float64 reference for the train step, written as plain loops with no autodiff:
 * the forward pass and loss directly from the definitions in models.ts, gradients by central
 * finite differences, and Adam by its textbook formula. Only for the tiny models of the peer
 * test (finite differences cost two forwards per parameter).
 */
import { HYPER, paramSpecs } from './models.ts';
import type { Batch, MlpConfig, ModelConfig, TransformerConfig } from './models.ts';

/** Parameters as float64 arrays by name. */
export type Params64 = Map<string, Float64Array>;

/** erf to ~1e-14: Taylor series near 0, continued fraction for erfc in the tails. */
export function erf(x: number): number {
  const ax = Math.abs(x);
  if (ax < 2.5) {
    // erf(x) = 2/sqrt(pi) * sum_n (-1)^n x^(2n+1) / (n! (2n+1))
    let term = ax;
    let sum = ax;
    for (let n = 1; n < 80; n++) {
      term *= (-ax * ax) / n;
      const add = term / (2 * n + 1);
      sum += add;
      if (Math.abs(add) < 1e-17 * Math.abs(sum)) break;
    }
    return Math.sign(x) * (2 / Math.sqrt(Math.PI)) * sum;
  }
  // erfc(x) = exp(-x^2)/sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/(x + ...)))), evaluated bottom-up.
  let k = ax;
  for (let n = 60; n >= 1; n--) k = ax + n / 2 / k;
  const erfc = Math.exp(-ax * ax) / Math.sqrt(Math.PI) / k;
  return Math.sign(x) * (1 - erfc);
}

const gelu = (x: number): number => 0.5 * x * (1 + erf(x / Math.SQRT2));

/** y[n, out] = x[n, in] @ w[in, out] + b[out]. */
function linear(x: Float64Array, n: number, inDim: number, w: Float64Array, b: Float64Array, outDim: number): Float64Array {
  const y = new Float64Array(n * outDim);
  for (let r = 0; r < n; r++) {
    for (let o = 0; o < outDim; o++) {
      let s = b[o];
      for (let i = 0; i < inDim; i++) s += x[r * inDim + i] * w[i * outDim + o];
      y[r * outDim + o] = s;
    }
  }
  return y;
}

function layerNorm(x: Float64Array, n: number, d: number, g: Float64Array, b: Float64Array): Float64Array {
  const y = new Float64Array(n * d);
  for (let r = 0; r < n; r++) {
    let mu = 0;
    for (let i = 0; i < d; i++) mu += x[r * d + i];
    mu /= d;
    let v = 0;
    for (let i = 0; i < d; i++) v += (x[r * d + i] - mu) ** 2;
    v /= d; // biased variance, as in PyTorch / ONNX LayerNormalization
    const inv = 1 / Math.sqrt(v + HYPER.lnEps);
    for (let i = 0; i < d; i++) y[r * d + i] = (x[r * d + i] - mu) * inv * g[i] + b[i];
  }
  return y;
}

/** Log-probability of `action` under softmax(logits[row]). */
function logProb(logits: Float64Array, row: number, k: number, action: number): number {
  let m = -Infinity;
  for (let j = 0; j < k; j++) m = Math.max(m, logits[row * k + j]);
  let s = 0;
  for (let j = 0; j < k; j++) s += Math.exp(logits[row * k + j] - m);
  return logits[row * k + action] - m - Math.log(s);
}

/** Mean over rows of the negated clipped surrogate, -min(r A, clip(r) A). */
function clippedPg(logp: Float64Array, oldLogp: Float32Array, adv: Float32Array): number {
  let s = 0;
  for (let i = 0; i < logp.length; i++) {
    const r = Math.exp(logp[i] - oldLogp[i]);
    const rc = Math.min(Math.max(r, 1 - HYPER.clip), 1 + HYPER.clip);
    s -= Math.min(r * adv[i], rc * adv[i]);
  }
  return s / logp.length;
}

function mlpLoss(cfg: MlpConfig, p: Params64, batch: Batch): number {
  if (batch.kind !== 'mlp') throw new Error('mlpLoss: token batch given');
  const B = cfg.batch;
  let h = Float64Array.from(batch.obs);
  let width = cfg.obsDim;
  cfg.hidden.forEach((hd, i) => {
    h = linear(h, B, width, p.get(`l${i}.w`)!, p.get(`l${i}.b`)!, hd).map(Math.tanh);
    width = hd;
  });
  const logits = linear(h, B, width, p.get('pi.w')!, p.get('pi.b')!, cfg.numActions);
  const value = linear(h, B, width, p.get('v.w')!, p.get('v.b')!, 1);
  const logp = new Float64Array(B);
  for (let r = 0; r < B; r++) logp[r] = logProb(logits, r, cfg.numActions, batch.actions[r]);
  let vf = 0;
  for (let r = 0; r < B; r++) vf += (value[r] - batch.returns[r]) ** 2;
  return clippedPg(logp, batch.oldLogp, batch.advantages) + HYPER.valueCoef * 0.5 * (vf / B);
}

function transformerLoss(cfg: TransformerConfig, p: Params64, batch: Batch): number {
  if (batch.kind !== 'transformer') throw new Error('transformerLoss: MLP batch given');
  const { batch: B, context: T, dModel: d, heads: H, ffn: F, vocab: V } = cfg;
  const dh = d / H;
  const N = B * T;
  const tok = p.get('tok_emb')!;
  const pos = p.get('pos_emb')!;
  let x = new Float64Array(N * d);
  for (let r = 0; r < N; r++) {
    const t = r % T;
    for (let i = 0; i < d; i++) x[r * d + i] = tok[batch.tokens[r] * d + i] + pos[t * d + i];
  }
  for (let l = 0; l < cfg.layers; l++) {
    const g = (k: string): Float64Array => p.get(`h${l}.${k}`)!;
    const h = layerNorm(x, N, d, g('ln1.g'), g('ln1.b'));
    const qkv = new Float64Array(N * 3 * d); // rows [q | k | v]
    ['q', 'k', 'v'].forEach((name, j) => {
      const y = linear(h, N, d, g(`attn.w${name}`), g(`attn.b${name}`), d);
      for (let r = 0; r < N; r++) for (let i = 0; i < d; i++) qkv[r * 3 * d + j * d + i] = y[r * d + i];
    });
    const att = new Float64Array(N * d);
    for (let b = 0; b < B; b++) {
      for (let hd = 0; hd < H; hd++) {
        for (let t = 0; t < T; t++) {
          const q = (b * T + t) * 3 * d + hd * dh;
          const scores = new Float64Array(t + 1); // causal: keys 0..t only
          let m = -Infinity;
          for (let s = 0; s <= t; s++) {
            const k = (b * T + s) * 3 * d + d + hd * dh;
            let dot = 0;
            for (let i = 0; i < dh; i++) dot += qkv[q + i] * qkv[k + i];
            scores[s] = dot / Math.sqrt(dh);
            m = Math.max(m, scores[s]);
          }
          let z = 0;
          for (let s = 0; s <= t; s++) z += (scores[s] = Math.exp(scores[s] - m));
          for (let s = 0; s <= t; s++) {
            const v = (b * T + s) * 3 * d + 2 * d + hd * dh;
            for (let i = 0; i < dh; i++) att[(b * T + t) * d + hd * dh + i] += (scores[s] / z) * qkv[v + i];
          }
        }
      }
    }
    const y = linear(att, N, d, g('attn.wo'), g('attn.bo'), d);
    x = x.map((xi, i) => xi + y[i]);
    const h2 = layerNorm(x, N, d, g('ln2.g'), g('ln2.b'));
    const u = linear(h2, N, d, g('mlp.w1'), g('mlp.b1'), F).map(gelu);
    const m = linear(u, N, F, g('mlp.w2'), g('mlp.b2'), d);
    x = x.map((xi, i) => xi + m[i]);
  }
  const hf = layerNorm(x, N, d, p.get('ln_f.g')!, p.get('ln_f.b')!);
  const logits = linear(hf, N, d, p.get('head.w')!, p.get('head.b')!, V);
  const logp = new Float64Array(N);
  for (let r = 0; r < N; r++) logp[r] = logProb(logits, r, V, batch.actions[r]);
  return clippedPg(logp, batch.oldLogp, batch.advantages);
}

/** The loss of one step at parameters `p` (float64 throughout). */
export function referenceLoss(cfg: ModelConfig, p: Params64, batch: Batch): number {
  return cfg.kind === 'mlp' ? mlpLoss(cfg, p, batch) : transformerLoss(cfg, p, batch);
}

export function toFloat64(p: Map<string, Float32Array>): Params64 {
  return new Map([...p].map(([k, v]) => [k, Float64Array.from(v)]));
}

/** Central finite-difference gradient of `referenceLoss`. */
export function referenceGrad(cfg: ModelConfig, p: Params64, batch: Batch, h = 1e-6): Params64 {
  const g: Params64 = new Map();
  for (const spec of paramSpecs(cfg)) {
    const w = p.get(spec.name)!;
    const gw = new Float64Array(w.length);
    for (let i = 0; i < w.length; i++) {
      const w0 = w[i];
      w[i] = w0 + h;
      const up = referenceLoss(cfg, p, batch);
      w[i] = w0 - h;
      const down = referenceLoss(cfg, p, batch);
      w[i] = w0;
      gw[i] = (up - down) / (2 * h);
    }
    g.set(spec.name, gw);
  }
  return g;
}

/**
 * Runs `steps` reference train steps from `init` and returns the loss seen by each step
 * (step k reports the loss at the parameters before its own update, like `TrainStep.step`).
 */
export function referenceLosses(cfg: ModelConfig, init: Map<string, Float32Array>, batch: Batch, steps: number): number[] {
  const { lr, beta1, beta2, eps } = HYPER;
  const p = toFloat64(init);
  const m = new Map([...p].map(([k, v]) => [k, new Float64Array(v.length)]));
  const v = new Map([...p].map(([k, w]) => [k, new Float64Array(w.length)]));
  const losses: number[] = [];
  for (let t = 1; t <= steps; t++) {
    losses.push(referenceLoss(cfg, p, batch));
    if (t === steps) break; // the last update would not be observed
    const g = referenceGrad(cfg, p, batch);
    for (const [name, w] of p) {
      const gw = g.get(name)!;
      const mw = m.get(name)!;
      const vw = v.get(name)!;
      for (let i = 0; i < w.length; i++) {
        mw[i] = beta1 * mw[i] + (1 - beta1) * gw[i];
        vw[i] = beta2 * vw[i] + (1 - beta2) * gw[i] * gw[i];
        const mHat = mw[i] / (1 - beta1 ** t);
        const vHat = vw[i] / (1 - beta2 ** t);
        w[i] -= (lr * mHat) / (Math.sqrt(vHat) + eps);
      }
    }
  }
  return losses;
}
