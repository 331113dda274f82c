/**
 * The agent worker (a module Web Worker): runs one shipped policy (public/agents/*.onnx, weights
 * baked in) for the Environments view's "Watch a trained agent". WASM on one thread: an MLP of
 * ~68k parameters answers one state in well under a millisecond, the tool envs' ~0.2M-parameter
 * transformer one token in about a millisecond, and a thread pool would only compete with a
 * training run in the same tab.
 *
 * Grid policies (MLP) answer one state per call (`logprobs`). Token policies play a whole episode
 * per call (`playTool`; a grid env through its text adapter): the worker keeps its own copy of the env and decodes with the same loop
 * as training's eval (core/agents/tokenAgent.ts); the page replays the plan turn by turn.
 *
 * Main thread: `wrap<AgentWorkerApi>(new Worker(new URL('.../agentWorker/worker.ts', import.meta.url), { type: 'module' }))`.
 */
import { expose, transfer } from 'comlink';
import type { InferenceSession } from 'onnxruntime-web';
import '../../core/envs/index.ts';
import type { AgentMode } from '../../core/agents/act.ts';
import type { Agent, TokenAgent } from '../../core/agents/manifest.ts';
import { playTokenAgent, type AgentPlan } from '../../core/agents/tokenAgent.ts';
import { makeTextEnv } from '../../core/envs/grid/textAdapter.ts';
import { loadWebOrt } from '../engine/web.ts';
import { ShippedTokenDecoder, type OrtLike, type SessionLike } from './onnxDecoder.ts';

let session: InferenceSession | null = null;
let ort: Awaited<ReturnType<typeof loadWebOrt>> | null = null;
let loaded: Agent | null = null;
let decoder: ShippedTokenDecoder | null = null;

const api = {
  /**
   * Loads a policy (the ONNX bytes, transferred). A grid MLP takes `obs` [1, obsDim] and returns
   * `logprobs` [1, A]; a token policy is a decode graph (see onnxDecoder.ts).
   */
  async load(bytes: Uint8Array, agent: Agent): Promise<void> {
    ort ??= await loadWebOrt('wasm');
    ort.env.wasm.numThreads = 1;
    const next = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'], logSeverityLevel: 3 });
    let nextDecoder: ShippedTokenDecoder | null = null;
    try {
      if (agent.model.kind === 'transformer') nextDecoder = new ShippedTokenDecoder(ort as unknown as OrtLike, next as unknown as SessionLike, agent.model);
      else if (!next.inputNames.includes('obs') || !next.outputNames.includes('logprobs')) {
        throw new Error(`this ONNX file is not a grid policy: inputs ${next.inputNames.join(', ')}, outputs ${next.outputNames.join(', ')} (expected obs → logprobs)`);
      }
    } catch (e) {
      await next.release();
      throw e;
    }
    await session?.release();
    session = next;
    decoder = nextDecoder;
    loaded = agent;
  },

  /** log π(· | s) for one state's features (length obsDim); grid policies only. */
  async logprobs(features: Float32Array): Promise<Float32Array> {
    if (!session || !ort || !loaded) throw new Error('agent worker: no policy loaded');
    if (loaded.model.kind !== 'mlp') throw new Error('agent worker: the loaded policy writes tokens; use playTool');
    const obsDim = loaded.model.obsDim;
    if (features.length !== obsDim) throw new Error(`agent worker: expected ${obsDim} features, got ${features.length}`);
    const out = await session.run({ obs: new ort.Tensor('float32', features, [1, obsDim]) });
    const lp = new Float32Array(out.logprobs.data as Float32Array);
    for (const t of Object.values(out)) t.dispose();
    return transfer(lp, [lp.buffer]);
  },

  /**
   * The loaded token policy's whole episode on its env from `seed` (kwargs as it was trained). A
   * grid env is played through its text adapter, as the policy was trained (grid/memory): the
   * plan's actions are then letters (l r f p d t n) that the page maps back to grid actions.
   */
  async playTool(seed: number, mode: AgentMode): Promise<AgentPlan> {
    if (!decoder || !loaded || loaded.model.kind !== 'transformer') throw new Error('agent worker: no token policy loaded');
    const a = loaded as TokenAgent;
    const env = makeTextEnv(a.env, a.kwargs);
    return playTokenAgent(decoder, env, seed, mode, a.model.maxActionTokens);
  },
};

export type AgentWorkerApi = typeof api;
expose(api);
