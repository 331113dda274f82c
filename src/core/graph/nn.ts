/**
 * Composite layers built from the primitive ops in builder.ts. Their gradients come from the
 * primitives' VJPs, so they need no rules of their own.
 */
import type { Graph, Tensor } from './builder.ts';

/**
 * log softmax over the last axis, decomposed as (x − max) − log Σ exp(x − max). No LogSoftmax
 * node: the native WebGPU EP has no kernel for it and would silently run it on the CPU.
 * The max is a constant for autodiff (the result does not depend on it).
 */
export function logSoftmax(g: Graph, x: Tensor): Tensor {
  const m = g.stopGradient(g.reduceMax(x, [-1], true));
  const sh = g.sub(x, m);
  return g.sub(sh, g.log(g.reduceSum(g.exp(sh), [-1], true)));
}

/** Layer norm over the last axis with learned gain and bias [D] (biased variance, like PyTorch). */
export function layerNorm(g: Graph, x: Tensor, gain: Tensor, bias: Tensor, eps = 1e-5): Tensor {
  const mu = g.reduceMean(x, [-1], true);
  const xc = g.sub(x, mu);
  const variance = g.reduceMean(g.mul(xc, xc), [-1], true);
  const xn = g.div(xc, g.sqrt(g.add(variance, eps)));
  return g.add(g.mul(xn, gain), bias);
}

/** Exact GELU: 0.5·x·(1 + erf(x/√2)). */
export function gelu(g: Graph, x: Tensor): Tensor {
  return g.mul(g.mul(x, g.add(g.erf(g.mul(x, Math.SQRT1_2)), 1)), 0.5);
}

/** x @ W + b, for x [..., In], W [In, Out], b [Out]. */
export function linear(g: Graph, x: Tensor, w: Tensor, b?: Tensor): Tensor {
  const y = g.matmul(x, w);
  return b ? g.add(y, b) : y;
}

/** Log-probability of the chosen index: Σ_a logp[..., a]·onehot(idx)[..., a] → [...]. */
export function selectLogprob(g: Graph, logp: Tensor, idx: Tensor): Tensor {
  const A = logp.shape[logp.shape.length - 1];
  return g.reduceSum(g.mul(logp, g.oneHot(idx, A)), [-1]);
}

/** Entropy −Σ p log p over the last axis, from log-probabilities. */
export function entropyFromLogp(g: Graph, logp: Tensor): Tensor {
  return g.neg(g.reduceSum(g.mul(g.exp(logp), logp), [-1]));
}

/** Σ mask·x / max(Σ mask, 1): mean over masked entries, 0 when nothing is masked in. */
export function maskedMean(g: Graph, x: Tensor, mask: Tensor): Tensor {
  return g.div(g.reduceSum(g.mul(x, mask)), g.maximum(g.reduceSum(mask), 1));
}

/** 1.0 where cond holds, else 0.0. */
export function indicator(g: Graph, cond: Tensor): Tensor {
  return g.cast(cond, 'float32');
}
