/**
 * The train step in jax-js 0.1.25 on its WASM backend: the loss written with jax.numpy,
 * `valueAndGrad`, and the Adam update inside one `jit`, so the whole step is one compiled,
 * fused program (the idiomatic fast path, as in JAX).
 *
 * Threads: jax-js parallelises WASM kernels with Web Workers only when a global `Worker` and
 * `SharedArrayBuffer` both exist. Node 20 has no global `Worker`, so here it runs on one thread,
 * the same as the other WASM implementations.
 *
 * jax-js follows move semantics: every Array passed to a function is consumed, `.ref` takes an
 * extra reference. The helpers below keep that bookkeeping in one place.
 */
import { blockUntilReady, defaultDevice, init, jit, nn, numpy as np, scipySpecial, tree, valueAndGrad } from '@jax-js/jax';
import { HYPER, paramSpecs } from './models.ts';
import { withoutWorker } from './worker-guard.ts';
import type { Batch, ModelConfig, Params, TrainStep } from './models.ts';

type Arr = np.Array;
type Tree = Record<string, Arr>;

let ready: Promise<void> | undefined;

export function initJaxWasm(): Promise<void> {
  ready ??= withoutWorker(async () => {
    const devices = await init('wasm');
    if (!devices.includes('wasm')) throw new Error(`jax-js: the wasm device is unavailable (got ${devices.join(', ')})`);
    defaultDevice('wasm');
  });
  return ready;
}

/** Mean of -min(r A, clip(r) A); all arguments [N]. */
function clippedPg(logp: Arr, oldLogp: Arr, adv: Arr): Arr {
  const ratio = np.exp(logp.sub(oldLogp));
  const clipped = np.clip(ratio.ref, 1 - HYPER.clip, 1 + HYPER.clip);
  return np.negative(np.minimum(ratio.mul(adv.ref), clipped.mul(adv)).mean());
}

/** log softmax(logits)[action] per row; actions one-hot [N, K]. */
const pickLogp = (logits: Arr, actionsOneHot: Arr): Arr => nn.logSoftmax(logits, -1).mul(actionsOneHot).sum(-1);

const dense = (x: Arr, w: Arr, b: Arr): Arr => np.matmul(x, w).add(b);

function layerNorm(x: Arr, g: Arr, b: Arr): Arr {
  const xc = x.ref.sub(x.mean(-1, { keepdims: true }));
  const v = np.square(xc.ref).mean(-1, { keepdims: true });
  return xc.mul(np.reciprocal(np.sqrt(v.add(HYPER.lnEps)))).mul(g).add(b);
}

/** The loss as a function of (params, inputs); consumes both trees. */
function makeLoss(cfg: ModelConfig): (p: Tree, d: Tree) => Arr {
  if (cfg.kind === 'mlp') {
    return (p, d) => {
      let h = d.obs;
      cfg.hidden.forEach((_, i) => (h = np.tanh(dense(h, p[`l${i}.w`], p[`l${i}.b`]))));
      const logp = pickLogp(dense(h.ref, p['pi.w'], p['pi.b']), d.act);
      const value = dense(h, p['v.w'], p['v.b']).reshape([cfg.batch]);
      const vf = np.square(value.sub(d.ret)).mean();
      return clippedPg(logp, d.old, d.adv).add(vf.mul(0.5 * HYPER.valueCoef));
    };
  }
  const { batch: B, context: T, dModel: dm, heads: H } = cfg;
  const N = B * T;
  const dh = dm / H;
  return (p, d) => {
    const g = (l: number, k: string): Arr => p[`h${l}.${k}`];
    let x = np.matmul(d.tok, p.tok_emb).reshape([B, T, dm]).add(p.pos_emb).reshape([N, dm]);
    for (let l = 0; l < cfg.layers; l++) {
      const h = layerNorm(x.ref, g(l, 'ln1.g'), g(l, 'ln1.b'));
      const split = (n: string): Arr => dense(h.ref, g(l, `attn.w${n}`), g(l, `attn.b${n}`)).reshape([B, T, H, dh]).transpose([0, 2, 1, 3]);
      const [q, k, v] = [split('q'), split('k'), split('v')]; // [B, H, T, dh]
      h.dispose();
      const scores = np.matmul(q, k.transpose([0, 1, 3, 2])).mul(1 / Math.sqrt(dh)).add(d.mask.ref);
      const att = np.matmul(nn.softmax(scores, -1), v); // [B, H, T, dh]
      const merged = att.transpose([0, 2, 1, 3]).reshape([N, dm]);
      x = x.add(dense(merged, g(l, 'attn.wo'), g(l, 'attn.bo')));
      const u = dense(layerNorm(x.ref, g(l, 'ln2.g'), g(l, 'ln2.b')), g(l, 'mlp.w1'), g(l, 'mlp.b1'));
      const gelu = u.ref.mul(0.5).mul(scipySpecial.erf(u.mul(Math.SQRT1_2)).add(1)); // exact GELU
      x = x.add(dense(gelu, g(l, 'mlp.w2'), g(l, 'mlp.b2')));
    }
    d.mask.dispose();
    const hf = layerNorm(x, p['ln_f.g'], p['ln_f.b']);
    return clippedPg(pickLogp(dense(hf, p['head.w'], p['head.b']), d.act), d.old, d.adv);
  };
}

/** Host data into a jax-js array (jax-js types want an ArrayBuffer-backed view). */
const arr = (a: Float32Array): Arr => np.array(a as Float32Array<ArrayBuffer>);

function oneHot(ids: Int32Array, k: number): Arr {
  const a = new Float32Array(ids.length * k);
  ids.forEach((id, i) => (a[i * k + id] = 1));
  return arr(a).reshape([ids.length, k]);
}

export function createJaxTrainStep(cfg: ModelConfig, initial: Params, batch: Batch): Promise<TrainStep> {
  return withoutWorker(() => createUnguarded(cfg, initial, batch));
}

async function createUnguarded(cfg: ModelConfig, initial: Params, batch: Batch): Promise<TrainStep> {
  await initJaxWasm();
  const specs = paramSpecs(cfg);
  let params: Tree = {};
  let m: Tree = {};
  let v: Tree = {};
  for (const s of specs) {
    params[s.name] = arr(initial.get(s.name)!).reshape(s.shape);
    m[s.name] = np.zeros(s.shape);
    v[s.name] = np.zeros(s.shape);
  }
  let data: Tree;
  if (batch.kind === 'mlp') {
    if (cfg.kind !== 'mlp') throw new Error('jax-js: token model needs a token batch');
    data = {
      obs: arr(batch.obs).reshape([cfg.batch, cfg.obsDim]),
      act: oneHot(batch.actions, cfg.numActions),
      adv: arr(batch.advantages),
      old: arr(batch.oldLogp),
      ret: arr(batch.returns),
    };
  } else {
    if (cfg.kind !== 'transformer') throw new Error('jax-js: MLP model needs an MLP batch');
    const T = cfg.context;
    const causal = new Float32Array(T * T);
    for (let t = 0; t < T; t++) for (let s = t + 1; s < T; s++) causal[t * T + s] = -1e9;
    data = {
      tok: oneHot(batch.tokens, cfg.vocab),
      act: oneHot(batch.actions, cfg.vocab),
      adv: arr(batch.advantages),
      old: arr(batch.oldLogp),
      mask: arr(causal).reshape([T, T]),
    };
  }

  const loss = makeLoss(cfg);
  const { lr, beta1, beta2, eps } = HYPER;
  // bc1 = 1 - beta1^t and bc2 = 1 - beta2^t are traced scalars, so one compiled program
  // serves every step.
  const trainStep = jit((p: Tree, m0: Tree, v0: Tree, d: Tree, bc1: Arr, bc2: Arr) => {
    const [value, grads] = valueAndGrad(loss)(tree.ref(p), d);
    const newP: Tree = {};
    const newM: Tree = {};
    const newV: Tree = {};
    for (const name of Object.keys(p)) {
      const gr = grads[name];
      const mt = m0[name].mul(beta1).add(gr.ref.mul(1 - beta1));
      const vt = v0[name].mul(beta2).add(np.square(gr).mul(1 - beta2));
      const mHat = mt.ref.div(bc1.ref);
      const vHat = vt.ref.div(bc2.ref);
      newP[name] = p[name].sub(mHat.mul(lr).div(np.sqrt(vHat).add(eps)));
      newM[name] = mt;
      newV[name] = vt;
    }
    bc1.dispose();
    bc2.dispose();
    return [value, newP, newM, newV] as [Arr, Tree, Tree, Tree];
  });

  let t = 0;
  return {
    // Whole bodies under withoutWorker: jax-js compiles kernels lazily, at dispatch time.
    step: () =>
      withoutWorker(async () => {
        t += 1;
        const [value, p1, m1, v1] = trainStep(params, m, v, tree.ref(data), np.array(1 - beta1 ** t), np.array(1 - beta2 ** t));
        params = p1;
        m = m1;
        v = v1;
        // Wait for the updated weights and moments, not just the loss, so no part of the
        // update can be deferred into the next timed step.
        await blockUntilReady([params, m, v]);
        return (await value.data())[0];
      }),
    params: () =>
      withoutWorker(async () => {
        const out: Params = new Map();
        for (const s of specs) out.set(s.name, Float32Array.from(await params[s.name].ref.data()));
        return out;
      }),
    dispose() {
      tree.dispose([params, m, v, data]);
      trainStep.dispose();
    },
    meta: { device: 'wasm', threads: 1, jit: true },
  };
}
