/**
 * The train step in TensorFlow.js 4.22 on its WASM backend (XNNPACK, SIMD, one thread), written
 * the way a tfjs user would: variables and `optimizer.minimize`.
 */
import * as tf from '@tensorflow/tfjs';
import { getThreadsCount, setThreadsCount, setWasmPaths } from '@tensorflow/tfjs-backend-wasm';
import { createRequire } from 'node:module';
import path from 'node:path';
import { HYPER, paramSpecs } from './models.ts';
import type { Batch, MlpConfig, ModelConfig, Params, TrainStep, TransformerConfig } from './models.ts';

let ready: Promise<void> | undefined;

/**
 * Selects the WASM backend once per process. In Node the backend must be told where its .wasm
 * files are (a directory path ending in '/'); it also needs one thread pinned, because the
 * threaded build would otherwise use every core the others do not get.
 */
export function initTfjsWasm(): Promise<void> {
  ready ??= (async () => {
    const require = createRequire(import.meta.url);
    const pkg = path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm/package.json'));
    setWasmPaths(path.join(pkg, 'dist') + path.sep);
    setThreadsCount(1);
    if (!(await tf.setBackend('wasm'))) throw new Error('tfjs: the wasm backend failed to initialise');
    await tf.ready();
  })();
  return ready;
}

/**
 * a @ b for 2-D tensors with a gradient that uses only untransposed MatMuls plus explicit
 * Transposes. tfjs-backend-wasm sends MatMul to XNNPACK only when neither operand is transposed;
 * the `transposeA/B` forms its built-in gradient emits run a naive loop that is 7-20x slower
 * (measured: [2048,512]^T @ [2048,128] 422 ms vs 31 ms with an explicit transpose). A tfjs
 * user who profiles would do the same, so the peer gets this form. `needGradA: false` skips
 * the input gradient where the input is data (observations, one-hot tokens).
 */
function makeMatMul(needGradA: boolean): (a: tf.Tensor2D, b: tf.Tensor2D) => tf.Tensor2D {
  const f = tf.customGrad<tf.Tensor2D>((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
    const [a, b, save] = args as [tf.Tensor2D, tf.Tensor2D, tf.GradSaveFunc];
    save([a, b]);
    return {
      value: tf.matMul(a, b) as tf.Tensor2D,
      gradFunc: (dy: tf.Tensor2D, saved: tf.Tensor[]) => {
        const [sa, sb] = saved as tf.Tensor2D[];
        return [needGradA ? tf.matMul(dy, tf.transpose(sb)) : tf.zerosLike(sa), tf.matMul(tf.transpose(sa), dy)];
      },
    };
  });
  return (a, b) => f(a, b);
}
const fastMatMul = makeMatMul(true);
const fastMatMulDataA = makeMatMul(false);
const stockMatMul = (a: tf.Tensor2D, b: tf.Tensor2D): tf.Tensor2D => tf.matMul(a, b);

/**
 * 'fast' (the benchmark's peer): MatMul with the explicit-transpose gradient above. 'stock':
 * tfjs's built-in MatMul gradient, as most tfjs code runs; kept so the cost of not tuning
 * can be measured (`--impls tfjs-wasm-stock`).
 */
export type TfjsVariant = 'fast' | 'stock';

/** Mean of -min(r A, clip(r) A) over all scored positions; logp is [N]. */
function clippedPg(logp: tf.Tensor1D, oldLogp: tf.Tensor1D, adv: tf.Tensor1D): tf.Scalar {
  const ratio = tf.exp(tf.sub(logp, oldLogp));
  const clipped = tf.clipByValue(ratio, 1 - HYPER.clip, 1 + HYPER.clip);
  return tf.neg(tf.mean(tf.minimum(tf.mul(ratio, adv), tf.mul(clipped, adv))));
}

/** log softmax(logits)[action] per row, with the actions given as a one-hot [N, K] matrix. */
const pickLogp = (logits: tf.Tensor2D, actionsOneHot: tf.Tensor2D): tf.Tensor1D =>
  tf.sum(tf.mul(tf.logSoftmax(logits), actionsOneHot), -1);

function layerNorm(x: tf.Tensor, g: tf.Variable, b: tf.Variable): tf.Tensor {
  const mu = tf.mean(x, -1, true);
  const xc = tf.sub(x, mu);
  const v = tf.mean(tf.square(xc), -1, true);
  return tf.add(tf.mul(tf.mul(xc, tf.rsqrt(tf.add(v, HYPER.lnEps))), g), b);
}

const geluErf = (x: tf.Tensor): tf.Tensor => tf.mul(tf.mul(x, 0.5), tf.add(tf.erf(tf.mul(x, Math.SQRT1_2)), 1));

export async function createTfjsTrainStep(cfg: ModelConfig, init: Params, batch: Batch, variant: TfjsVariant = 'fast'): Promise<TrainStep> {
  await initTfjsWasm();
  const matMul = variant === 'fast' ? fastMatMul : stockMatMul;
  const matMulDataA = variant === 'fast' ? fastMatMulDataA : stockMatMul;
  /**
   * x @ w + b. Not `tf.fused.matMul`: its gradient takes the transposed-MatMul path and made the
   * mlp-76k step twice as slow.
   */
  const dense = (x: tf.Tensor2D, w: tf.Variable, b: tf.Variable, dataInput = false): tf.Tensor2D =>
    tf.add((dataInput ? matMulDataA : matMul)(x, w as tf.Tensor2D), b);
  const vars = new Map<string, tf.Variable>();
  for (const p of paramSpecs(cfg)) vars.set(p.name, tf.variable(tf.tensor(init.get(p.name)!, p.shape), true) /* unnamed: tfjs names are process-global */);
  const P = (name: string): tf.Variable => vars.get(name)!;
  const optimizer = tf.train.adam(HYPER.lr, HYPER.beta1, HYPER.beta2, HYPER.eps);

  // Inputs live on the backend for the whole run; the one-hot encodings are input
  // preparation (no gradient flows into them), done once.
  const inputs: tf.Tensor[] = [];
  const keep = <T extends tf.Tensor>(t: T): T => (inputs.push(t), t);
  let lossFn: () => tf.Scalar;
  if (cfg.kind === 'mlp') {
    if (batch.kind !== 'mlp') throw new Error('tfjs: MLP model needs an MLP batch');
    const c: MlpConfig = cfg;
    const obs = keep(tf.tensor2d(batch.obs, [c.batch, c.obsDim]));
    const act = keep(tf.oneHot(tf.tensor1d(batch.actions, 'int32'), c.numActions).toFloat() as tf.Tensor2D);
    const adv = keep(tf.tensor1d(batch.advantages));
    const old = keep(tf.tensor1d(batch.oldLogp));
    const ret = keep(tf.tensor1d(batch.returns));
    lossFn = () => {
      let h = obs;
      c.hidden.forEach((_, i) => (h = tf.tanh(dense(h, P(`l${i}.w`), P(`l${i}.b`), i === 0))));
      const logp = pickLogp(dense(h, P('pi.w'), P('pi.b')), act);
      const value = tf.reshape(dense(h, P('v.w'), P('v.b')), [c.batch]);
      const vf = tf.mean(tf.square(tf.sub(value, ret)));
      return tf.add(clippedPg(logp, old, adv), tf.mul(vf, 0.5 * HYPER.valueCoef));
    };
  } else {
    if (batch.kind !== 'transformer') throw new Error('tfjs: transformer model needs a token batch');
    const c: TransformerConfig = cfg;
    const { batch: B, context: T, dModel: d, heads: H, vocab: V } = c;
    const N = B * T;
    const dh = d / H;
    const tok = keep(tf.oneHot(tf.tensor1d(batch.tokens, 'int32'), V).toFloat() as tf.Tensor2D);
    const act = keep(tf.oneHot(tf.tensor1d(batch.actions, 'int32'), V).toFloat() as tf.Tensor2D);
    const adv = keep(tf.tensor1d(batch.advantages));
    const old = keep(tf.tensor1d(batch.oldLogp));
    const causal = new Float32Array(T * T);
    for (let t = 0; t < T; t++) for (let s = t + 1; s < T; s++) causal[t * T + s] = -1e9;
    const mask = keep(tf.tensor2d(causal, [T, T]));
    // [N, d] -> [B, H, T, dh]
    const heads = (x: tf.Tensor2D): tf.Tensor4D => tf.transpose(tf.reshape(x, [B, T, H, dh]), [0, 2, 1, 3]);
    lossFn = () => {
      let x: tf.Tensor2D = tf.reshape(
        tf.add(tf.reshape(matMulDataA(tok, P('tok_emb') as tf.Tensor2D), [B, T, d]), P('pos_emb')),
        [N, d],
      );
      for (let l = 0; l < c.layers; l++) {
        const g = (k: string): tf.Variable => P(`h${l}.${k}`);
        const h = layerNorm(x, g('ln1.g'), g('ln1.b')) as tf.Tensor2D;
        const [q, k, v] = ['q', 'k', 'v'].map((n) => dense(h, g(`attn.w${n}`), g(`attn.b${n}`)));
        const scores = tf.add(tf.mul(tf.matMul(heads(q), heads(k), false, true), 1 / Math.sqrt(dh)), mask);
        const att = tf.matMul(tf.softmax(scores), heads(v)); // [B, H, T, dh]
        const merged = tf.reshape(tf.transpose(att, [0, 2, 1, 3]), [N, d]);
        x = tf.add(x, dense(merged as tf.Tensor2D, g('attn.wo'), g('attn.bo')));
        const h2 = layerNorm(x, g('ln2.g'), g('ln2.b')) as tf.Tensor2D;
        const u = geluErf(dense(h2, g('mlp.w1'), g('mlp.b1'))) as tf.Tensor2D;
        x = tf.add(x, dense(u, g('mlp.w2'), g('mlp.b2')));
      }
      const hf = layerNorm(x, P('ln_f.g'), P('ln_f.b')) as tf.Tensor2D;
      return clippedPg(pickLogp(dense(hf, P('head.w'), P('head.b')), act), old, adv);
    };
  }

  const varList = [...vars.values()];
  return {
    async step() {
      const loss = optimizer.minimize(lossFn, true, varList)!;
      // dataSync forces the whole step, update included: tfjs WASM kernels run eagerly in
      // order, and the loss read is the last thing queued.
      const value = loss.dataSync()[0];
      loss.dispose();
      return value;
    },
    async params() {
      return new Map([...vars].map(([k, v]) => [k, v.dataSync() as Float32Array]));
    },
    dispose() {
      optimizer.dispose();
      for (const v of varList) v.dispose();
      for (const t of inputs) t.dispose();
    },
    meta: { backend: tf.getBackend(), threads: getThreadsCount(), simd: tf.env().getBool('WASM_HAS_SIMD_SUPPORT'), matmulGrad: variant },
  };
}
