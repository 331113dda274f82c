/**
 * Suite `gemm`: the kernel floor under the train-step ratios. One float32 MatMul (summed to a
 * scalar, so no runtime pays for copying a large output back) at the shapes that dominate the
 * two train-step models, on each runtime, single-threaded and interleaved. A train step cannot
 * beat its runtime's GEMM speed by much: if WASM GEMM is k times slower than native, a
 * compute-bound WASM step will be about k times slower than onnxruntime-node too.
 */
import * as ortNode from 'onnxruntime-node';
import * as ortWeb from 'onnxruntime-web';
import * as tf from '@tensorflow/tfjs';
// Type only: jax-js must be evaluated with no global Worker (train-step/worker-guard.ts).
import type { Array as JaxArray } from '@jax-js/jax';
import { Graph } from '../../src/core/graph/builder.ts';
import { Rng } from '../../src/core/util/rng.ts';
import { interleave } from '../lib/interleave.ts';
import { sig, summarize } from '../lib/stats.ts';
import type { Summary } from '../lib/stats.ts';
import { table } from '../lib/table.ts';
import type { SuiteOptions, SuiteResult } from '../lib/suite.ts';
import { initTfjsWasm } from '../train-step/tfjs.ts';
import { withoutWorker } from '../train-step/worker-guard.ts';

/** [M, K] @ [K, N]: the transformer's FFN matmul (2048 tokens) and the MLP's first layer. */
const SHAPES = [
  { name: 'transformer-ffn', m: 2048, k: 128, n: 512 },
  { name: 'mlp-layer0', m: 64, k: 160, n: 256 },
] as const;

type Run = () => Promise<unknown>;

async function ortRunner(kind: 'web' | 'node', m: number, k: number, n: number, a: Float32Array, b: Float32Array): Promise<Run> {
  const g = new Graph('gemm');
  g.output(g.reduceSum(g.matmul(g.input('a', [m, k]), g.input('b', [k, n]))), 's');
  const bytes = g.toOnnx();
  if (kind === 'web') {
    ortWeb.env.wasm.numThreads = 1;
    const s = await ortWeb.InferenceSession.create(bytes, { executionProviders: ['wasm'] });
    const feeds = { a: new ortWeb.Tensor('float32', a, [m, k]), b: new ortWeb.Tensor('float32', b, [k, n]) };
    return () => s.run(feeds);
  }
  const s = await ortNode.InferenceSession.create(bytes, { executionProviders: ['cpu'], intraOpNumThreads: 1, interOpNumThreads: 1 });
  const feeds = { a: new ortNode.Tensor('float32', a, [m, k]), b: new ortNode.Tensor('float32', b, [k, n]) };
  return () => s.run(feeds);
}

async function tfjsRunner(m: number, k: number, n: number, a: Float32Array, b: Float32Array): Promise<Run> {
  await initTfjsWasm();
  const ta = tf.tensor2d(a, [m, k]);
  const tb = tf.tensor2d(b, [k, n]);
  return async () => {
    const s = tf.tidy(() => tf.sum(tf.matMul(ta, tb)));
    s.dataSync();
    s.dispose();
  };
}

async function jaxRunner(m: number, k: number, n: number, a: Float32Array, b: Float32Array): Promise<Run> {
  return withoutWorker(async () => {
    const { initJaxWasm } = await import('../train-step/jax.ts');
    await initJaxWasm();
    const { jit, numpy: np } = await import('@jax-js/jax');
    const ja = np.array(a as Float32Array<ArrayBuffer>).reshape([m, k]);
    const jb = np.array(b as Float32Array<ArrayBuffer>).reshape([k, n]);
    const f = jit((x: JaxArray, y: JaxArray) => np.matmul(x, y).sum());
    return () => withoutWorker(async () => (await f(ja.ref, jb.ref).data())[0]);
  });
}

export async function runGemm(opts: SuiteOptions): Promise<SuiteResult> {
  const results: ({ shape: string; impl: string; gflops: number } & Summary)[] = [];
  const rows: (string | number)[][] = [];
  const rng = new Rng(3);
  for (const { name, m, k, n } of SHAPES) {
    const a = Float32Array.from({ length: m * k }, () => rng.normal());
    const b = Float32Array.from({ length: k * n }, () => rng.normal());
    const runners: [string, Run][] = [
      ['ort-web-wasm', await ortRunner('web', m, k, n, a, b)],
      ['tfjs-wasm', await tfjsRunner(m, k, n, a, b)],
      ['jax-js-wasm', await jaxRunner(m, k, n, a, b)],
      ['ort-node', await ortRunner('node', m, k, n, a, b)],
    ];
    const big = m * k * n > 1e7;
    const rounds = opts.quick ? 5 : big ? 60 : 400;
    opts.progress(`gemm: ${name} [${m},${k}]@[${k},${n}], ${rounds} rounds`);
    const samples = await interleave(
      runners.map(([key, run]) => ({ key, run })),
      { warmup: opts.quick ? 2 : 10, rounds },
    );
    for (const [impl, xs] of samples) {
      const s = summarize(xs);
      const gflops = sig((2 * m * k * n) / (s.p10 * 1e6));
      results.push({ shape: name, impl, ms: sig(s.ms), p10: sig(s.p10), p90: sig(s.p90), n: s.n, gflops });
      rows.push([name, impl, sig(s.ms), sig(s.p10), sig(s.p90), gflops]);
    }
  }
  opts.print(table(['shape', 'impl', 'median ms', 'p10', 'p90', 'GFLOP/s @p10'], rows));
  return { suite: 'gemm', quick: opts.quick, results };
}
