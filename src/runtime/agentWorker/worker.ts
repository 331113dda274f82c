/**
 * The agent worker (a module Web Worker): runs one shipped policy (public/agents/*.onnx, weights
 * baked in) for the Environments view's "Watch a trained agent". One state per call, so WASM
 * on one thread: an MLP of ~68k parameters answers in well under a millisecond, and a
 * thread pool would only compete with a training run in the same tab.
 *
 * Main thread: `wrap<AgentWorkerApi>(new Worker(new URL('.../agentWorker/worker.ts', import.meta.url), { type: 'module' }))`.
 */
import { expose, transfer } from 'comlink';
import type { InferenceSession } from 'onnxruntime-web';
import { loadWebOrt } from '../engine/web.ts';

let session: InferenceSession | null = null;
let ort: Awaited<ReturnType<typeof loadWebOrt>> | null = null;
let obsDim = 0;

const api = {
  /** Loads a policy (the ONNX bytes, transferred); the model takes `obs` [1, obsDim] and returns `logprobs` [1, A]. */
  async load(bytes: Uint8Array, dim: number): Promise<void> {
    ort ??= await loadWebOrt('wasm');
    ort.env.wasm.numThreads = 1;
    const next = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'], logSeverityLevel: 3 });
    if (!next.inputNames.includes('obs') || !next.outputNames.includes('logprobs')) {
      await next.release();
      throw new Error(`this ONNX file is not a grid policy: inputs ${next.inputNames.join(', ')}, outputs ${next.outputNames.join(', ')} (expected obs → logprobs)`);
    }
    await session?.release();
    session = next;
    obsDim = dim;
  },

  /** log π(· | s) for one state's features (length obsDim). */
  async logprobs(features: Float32Array): Promise<Float32Array> {
    if (!session || !ort) throw new Error('agent worker: no policy loaded');
    if (features.length !== obsDim) throw new Error(`agent worker: expected ${obsDim} features, got ${features.length}`);
    const out = await session.run({ obs: new ort.Tensor('float32', features, [1, obsDim]) });
    const lp = new Float32Array(out.logprobs.data as Float32Array);
    for (const t of Object.values(out)) t.dispose();
    return transfer(lp, [lp.buffer]);
  },
};

export type AgentWorkerApi = typeof api;
expose(api);
