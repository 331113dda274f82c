/**
 * ONNX Runtime sessions for graphs built by src/core/graph: a train session that keeps
 * parameters and Adam state in place between steps, a policy session for rollouts/scoring, and
 * a KV-cache decoder for token policies.
 *
 * The ORT module is injected (onnxruntime-web in a browser or Node, onnxruntime-node in the CLI),
 * so this file imports only types. State stays where the runtime put it: on WASM/CPU the output
 * tensors of one step are the input tensors of the next (no copy into JS arrays); on WebGPU pass
 * `stateLocation: 'gpu-buffer'` and the state outputs stay GPU buffers.
 */
import type * as Ort from 'onnxruntime-web';
import type { Graph } from '../../core/graph/builder.ts';
import { STEP, type TrainStepGraph } from '../../core/update/trainStep.ts';
import type { Weights } from '../../core/models/types.ts';

/** The parts of an onnxruntime module the session layer uses (onnxruntime-web or -node). */
export interface OrtModule {
  InferenceSession: typeof Ort.InferenceSession;
  Tensor: typeof Ort.Tensor;
}

export type Feed = Float32Array | Int32Array;

export interface OrtSessionOptions {
  /** Passed to InferenceSession.create (executionProviders, log level, graph optimisation...). */
  sessionOptions?: Ort.InferenceSession.SessionOptions;
  /**
   * Where carried state (params, Adam moments, KV cache) lives between runs. 'cpu' for WASM and
   * onnxruntime-node; 'gpu-buffer' for WebGPU so state never crosses to JS. Default 'cpu'.
   */
  stateLocation?: 'cpu' | 'gpu-buffer';
}

function makeTensor(ort: OrtModule, data: Feed, dims: readonly number[]): Ort.Tensor {
  return data instanceof Int32Array ? new ort.Tensor('int32', data, dims) : new ort.Tensor('float32', data, dims);
}

async function createSession(ort: OrtModule, bytes: Uint8Array, opts: OrtSessionOptions, stateOutputs: readonly string[]): Promise<Ort.InferenceSession> {
  const so: Ort.InferenceSession.SessionOptions = { ...opts.sessionOptions };
  if (opts.stateLocation === 'gpu-buffer' && stateOutputs.length) {
    const loc: Record<string, Ort.Tensor.DataLocation> = {};
    for (const o of stateOutputs) loc[o] = 'gpu-buffer';
    so.preferredOutputLocation = loc;
  }
  return ort.InferenceSession.create(bytes, so);
}

/**
 * Sessions of released trainers and policies, kept for the next one built from the same graph
 * bytes and options: a second Start in the tab, Reset then Start, a new stage. Building a
 * session costs 0.1–2 s (graph optimisation, kernel setup; more on WebGPU), and a reused one has
 * had its first run, which is slower than later ones. Graphs with weights baked in are never
 * kept (their bytes change with every set of weights). A hit compares the bytes exactly.
 */
const IDLE_SESSIONS_MAX = 8;

interface IdleSession {
  ort: OrtModule;
  bytes: Uint8Array;
  options: string;
  session: Ort.InferenceSession;
}

const idleSessions: IdleSession[] = [];

/** Sessions handed out by reusableSession, with what releaseSession keeps them under. */
const reusable = new WeakMap<Ort.InferenceSession, Omit<IdleSession, 'session'>>();

const sameBytes = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((x, i) => x === b[i]);

/** A session for `bytes`: an idle one built from the same bytes and options, or a new one. */
async function reusableSession(ort: OrtModule, bytes: Uint8Array, opts: OrtSessionOptions, stateOutputs: readonly string[]): Promise<Ort.InferenceSession> {
  const options = JSON.stringify([opts.sessionOptions ?? {}, opts.stateLocation ?? 'cpu', stateOutputs]);
  const i = idleSessions.findIndex((e) => e.ort === ort && e.options === options && sameBytes(e.bytes, bytes));
  const session = i >= 0 ? idleSessions.splice(i, 1)[0].session : await createSession(ort, bytes, opts, stateOutputs);
  reusable.set(session, { ort, bytes, options });
  return session;
}

/** Releases a session, or keeps it idle for reuse when reusableSession made it (the oldest idle one beyond the bound is released). */
async function releaseSession(session: Ort.InferenceSession): Promise<void> {
  const key = reusable.get(session);
  if (!key) return session.release();
  reusable.delete(session);
  idleSessions.push({ ...key, session });
  while (idleSessions.length > IDLE_SESSIONS_MAX) await idleSessions.shift()!.session.release();
}

/** Releases every idle session (memory pressure, or a test that counts sessions). */
export async function releaseIdleSessions(): Promise<void> {
  for (const e of idleSessions.splice(0)) await e.session.release();
}

/** Idle sessions kept for reuse now. */
export const idleSessionCount = (): number => idleSessions.length;

/** Read any tensor (CPU or GPU) into a fresh Float32Array. */
export async function readFloat(t: Ort.Tensor): Promise<Float32Array> {
  const d = t.location === 'cpu' ? t.data : await t.getData();
  return Float32Array.from(d as Float32Array);
}

export function dispose(t: Ort.Tensor): void {
  if (t.location !== 'cpu') t.dispose();
}

export interface StepResult {
  /** Scalar metrics by metric key (e.g. 'actor/pg_loss'). */
  metrics: Record<string, number>;
  /** False when the loss or gradient norm was not finite: the update was skipped. */
  applied: boolean;
  /** Log-probabilities of the batch actions at the pre-update weights, [...lead]. */
  logprobs: Float32Array;
  /** Value predictions at the pre-update weights, [...lead] (value-head models). */
  values?: Float32Array;
}

/** A train-step graph and its ORT session. */
interface TrainShape {
  spec: TrainStepGraph;
  session: Ort.InferenceSession;
}

/**
 * Runs a train-step graph. Holds params, Adam moments and the step count as runtime tensors,
 * feeding each step's `next.*` outputs back as the next step's inputs.
 *
 * Sequence models may also train on shorter sequences (`step(batch, seqLen)`): each length gets
 * its own graph and session, built on first use by `buildShape`, over the one shared state, so
 * a batch of short episodes does not pay for the full context's padding.
 */
export class TrainSession {
  private state = new Map<string, Ort.Tensor>();
  /** By `${seqLen}` or `${seqLen}/${prefixLen}`. */
  private shapes = new Map<string, Promise<TrainShape>>();
  private readonly main: TrainShape;
  private hyperTensors = new Map<string, Ort.Tensor>();
  /** Current scalar hyperparameters (lr, clip ranges, coefficients); edit between steps. */
  readonly hyper: Record<string, number>;
  /** Number of applied (finite) updates since creation or the last optimizer reset. */
  version = 0;
  /** Number of steps skipped by the NaN guard. */
  skipped = 0;

  private constructor(
    private readonly ort: OrtModule,
    readonly spec: TrainStepGraph,
    session: Ort.InferenceSession,
    private readonly opts: OrtSessionOptions,
    private readonly buildShape?: (seqLen: number, prefixLen?: number) => TrainStepGraph,
  ) {
    this.hyper = { ...spec.hyper };
    this.main = { spec, session };
    if (spec.lead.length === 2) this.shapes.set(String(spec.lead[1]), Promise.resolve(this.main));
  }

  /**
   * `buildShape(T, P?)`: the same train step over sequences of T positions (same state, loss and
   * hyperparameters), or over groups sharing a prefix of ≤ P tokens and T-token suffixes
   * (TrainStepOptions.prefix); needed only for step(batch, seqLen[, prefixLen]) with shapes
   * other than the spec's.
   */
  static async create(
    ort: OrtModule,
    spec: TrainStepGraph,
    weights: Weights,
    opts: OrtSessionOptions = {},
    buildShape?: (seqLen: number, prefixLen?: number) => TrainStepGraph,
  ): Promise<TrainSession> {
    const session = await reusableSession(ort, spec.graph.toOnnx(), opts, spec.state.map((s) => s.output));
    const ts = new TrainSession(ort, spec, session, opts, buildShape);
    ts.setWeights(weights);
    return ts;
  }

  private shape(seqLen: number | undefined, prefixLen?: number): Promise<TrainShape> {
    if (seqLen === undefined && prefixLen === undefined) return Promise.resolve(this.main);
    const T = seqLen ?? this.spec.lead[1];
    const key = prefixLen === undefined ? String(T) : `${T}/${prefixLen}`;
    let s = this.shapes.get(key);
    if (!s) {
      const build = this.buildShape;
      if (!build || T === undefined) throw new RangeError(`step: this session trains sequences of ${this.spec.lead[1] ?? '(none)'} positions only, not ${key}`);
      s = (async () => {
        const spec = build(T, prefixLen);
        const same = spec.state.length === this.spec.state.length && spec.state.every((x, i) => x.input === this.spec.state[i].input && x.output === this.spec.state[i].output);
        if (!same || spec.lead[1] !== T) throw new Error(`step: the graph built for ${key} positions does not share this session's state`);
        return { spec, session: await reusableSession(this.ort, spec.graph.toOnnx(), this.opts, spec.state.map((x) => x.output)) };
      })();
      this.shapes.set(key, s);
    }
    return s;
  }

  /** Replace the parameters; `resetOptimizer` (default true) zeroes Adam moments and the step count. */
  setWeights(weights: Weights, resetOptimizer = true): void {
    for (const s of this.spec.state) {
      if (s.kind === 'param') {
        const w = weights[s.input];
        if (!w) throw new Error(`setWeights: missing parameter '${s.input}'`);
        if (w.length !== s.shape.reduce((a, b) => a * b, 1)) throw new RangeError(`setWeights: '${s.input}' has ${w.length} values, expected shape [${s.shape}]`);
        this.replace(s.input, makeTensor(this.ort, w.slice(), s.shape));
      } else if (resetOptimizer || !this.state.has(s.input)) {
        const n = s.shape.reduce((a, b) => a * b, 1);
        this.replace(s.input, makeTensor(this.ort, new Float32Array(n), s.shape));
      }
    }
    if (resetOptimizer) this.version = 0;
  }

  private replace(name: string, t: Ort.Tensor): void {
    const old = this.state.get(name);
    if (old && old !== t) dispose(old);
    this.state.set(name, t);
  }

  /** Copies of the current parameters. */
  async getWeights(): Promise<Weights> {
    const out: Weights = {};
    for (const s of this.spec.state) if (s.kind === 'param') out[s.input] = await readFloat(this.state.get(s.input)!);
    return out;
  }

  /**
   * The live parameter tensors (no copy): feed them to a PolicySession on the same runtime.
   * Valid until the next step() or setWeights(): with GPU-resident state the previous buffers
   * are released then, so re-sync after every step (or copy with getWeights()).
   */
  paramTensors(): Record<string, Ort.Tensor> {
    const out: Record<string, Ort.Tensor> = {};
    for (const s of this.spec.state) if (s.kind === 'param') out[s.input] = this.state.get(s.input)!;
    return out;
  }

  /**
   * One optimizer step on a batch (arrays named as in spec.batchInputs, each [B, seqLen] for a
   * sequence model when seqLen is given).
   */
  async step(batch: Readonly<Record<string, Feed>>, seqLen?: number, prefixLen?: number): Promise<StepResult> {
    const { spec, session } = await this.shape(seqLen, prefixLen);
    const feeds: Record<string, Ort.Tensor> = {};
    for (const b of spec.batchInputs) {
      const d = batch[b.name];
      if (!d) throw new Error(`step: missing batch input '${b.name}' [${b.shape}] ${b.dtype}`);
      const want = b.dtype === 'int32' ? Int32Array : Float32Array;
      if (!(d instanceof want)) throw new TypeError(`step: '${b.name}' must be a ${want.name}`);
      if (d.length !== b.shape.reduce((x, y) => x * y, 1)) throw new RangeError(`step: '${b.name}' has ${d.length} values, expected shape [${b.shape}]`);
      feeds[b.name] = makeTensor(this.ort, d, b.shape);
    }
    for (const [k, v] of Object.entries(this.hyper)) {
      let t = this.hyperTensors.get(k);
      if (!t || (t.data as Float32Array)[0] !== Math.fround(v)) {
        t = new this.ort.Tensor('float32', Float32Array.of(v), []);
        this.hyperTensors.set(k, t);
      }
      feeds[`hp.${k}`] = t;
    }
    for (const [k, t] of this.state) feeds[k] = t;
    const res = await session.run(feeds);
    const metrics: Record<string, number> = {};
    for (const [name, key] of Object.entries(spec.metrics)) metrics[key] = Number((res[name].data as Float32Array)[0]);
    // Belt and braces: the graph already kept the old state if not finite; the session also
    // refuses to adopt it if JS sees a non-finite loss (backends may not honour NaN semantics).
    const applied = metrics['train/finite'] === 1 && Number.isFinite(metrics['actor/loss']) && Number.isFinite(metrics['actor/grad_norm']);
    for (const s of this.spec.state) {
      const t = res[s.output];
      if (applied) this.replace(s.input, t);
      else dispose(t);
    }
    if (applied) this.version++;
    else this.skipped++;
    const result: StepResult = { metrics, applied, logprobs: await readFloat(res.logprobs) };
    if (res.values) result.values = await readFloat(res.values);
    return result;
  }

  /**
   * Copies of every carried state tensor (parameters, Adam moments `adam.m`/`adam.v`, step count
   * `adam.step`) by input name, plus the applied-update count: what a checkpoint needs to continue
   * training bit for bit.
   */
  async getState(): Promise<{ tensors: Record<string, Float32Array>; updates: number }> {
    const tensors: Record<string, Float32Array> = {};
    for (const s of this.spec.state) tensors[s.input] = await readFloat(this.state.get(s.input)!);
    return { tensors, updates: this.version };
  }

  /**
   * Replaces the whole carried state with `getState()`'s output (of a session of the same graph).
   * Every tensor is checked before any is replaced, so a refused state leaves the session as it was.
   */
  setState(state: { tensors: Readonly<Record<string, Float32Array>>; updates: number }): void {
    for (const s of this.spec.state) {
      const t = state.tensors[s.input];
      const n = s.shape.reduce((a, b) => a * b, 1);
      if (!t) throw new Error(`setState: missing state tensor '${s.input}'`);
      if (t.length !== n) throw new RangeError(`setState: '${s.input}' has ${t.length} values, expected shape [${s.shape}]`);
    }
    const extra = Object.keys(state.tensors).filter((k) => !this.spec.state.some((s) => s.input === k));
    if (extra.length > 0) throw new Error(`setState: unknown state tensor(s) ${extra.map((k) => `'${k}'`).join(', ')} (another model?)`);
    for (const s of this.spec.state) this.replace(s.input, makeTensor(this.ort, state.tensors[s.input].slice(), s.shape));
    this.version = state.updates;
  }

  /** Adam step count as the graph sees it. */
  async adamStep(): Promise<number> {
    return (await readFloat(this.state.get(STEP)!))[0];
  }

  async release(): Promise<void> {
    for (const t of this.state.values()) dispose(t);
    this.state.clear();
    const built = await Promise.allSettled(this.shapes.values());
    const sessions = new Set([this.main.session, ...built.flatMap((r) => (r.status === 'fulfilled' ? [r.value.session] : []))]);
    await Promise.all([...sessions].map((s) => releaseSession(s)));
  }
}

export interface PolicySessionOptions extends OrtSessionOptions {
  /**
   * Run from a second session with the weights baked in as initializers once one set of weights
   * (given by setWeights, not setWeightTensors) has run this many times, or from its first run
   * when the previous set ran at least twice this many times (versions tend to see similar call
   * counts). onnxruntime-web then stops copying every parameter into WASM memory on each call
   * and can prepack them (MLP 984→64→64→7, 68k params, batch 32: ~262 → ~230 µs CPU per call);
   * a rebuild costs ~3–4 ms, about 100 calls' saving. The choice depends on call counts only,
   * never on timing, and the outputs match the fed session's. Default Infinity: never bake.
   */
  bakeAfterRuns?: number;
}

/**
 * Runs a graph whose params are inputs (policy or scoring graph) with swappable weights.
 * Optionally (bakeAfterRuns) also holds a copy of the graph with the current weights baked in,
 * rebuilt inside a run call once a set of weights has been used often enough; that is the only
 * place sessions change, so a call never sees one half-built, and the rebuild is serialized with
 * runs wherever runs are. Runs of one PolicySession must not overlap (as on one WASM instance,
 * which is not reentrant): a stale baked session is released at the next run.
 */
export class PolicySession {
  private weights: Record<string, Ort.Tensor> = {};
  /** Policy version of the loaded weights (set by the caller on sync). */
  version = 0;
  /** Bumped by every weight change: identifies the weights a baked session holds. */
  private epoch = 0;
  /** Runs at the current weights, and at the previous ones. */
  private runsAtEpoch = 0;
  private runsAtPrevEpoch = 0;
  /** True when the current weights are JS copies that can be baked (setWeights, not tensors). */
  private bakeable = false;
  private baked: { session: Ort.InferenceSession; epoch: number } | null = null;
  /** Sessions with baked weights built so far (diagnostics, tests). */
  bakes = 0;

  private constructor(
    private readonly ort: OrtModule,
    private readonly graph: Graph,
    private readonly session: Ort.InferenceSession,
    private readonly opts: PolicySessionOptions,
  ) {}

  static async create(ort: OrtModule, graph: Graph, weights: Weights, opts: PolicySessionOptions = {}): Promise<PolicySession> {
    const ps = new PolicySession(ort, graph, await reusableSession(ort, graph.toOnnx(), opts, PolicySession.stateOutputs(graph)), opts);
    ps.setWeights(weights);
    return ps;
  }

  private static stateOutputs(graph: Graph): string[] {
    return graph.outputs.filter((o) => o.name.startsWith('present.')).map((o) => o.name);
  }

  /** True when the next run uses a session with the current weights baked in. */
  get weightsBaked(): boolean {
    return this.baked !== null && this.baked.epoch === this.epoch;
  }

  setWeights(weights: Weights, version = this.version): void {
    const next: Record<string, Ort.Tensor> = {};
    for (const p of this.graph.params) {
      const w = weights[p.name];
      if (!w) throw new Error(`PolicySession.setWeights: missing parameter '${p.name}'`);
      next[p.name] = makeTensor(this.ort, w.slice(), p.shape);
    }
    this.adopt(next, true, version);
  }

  /** Use runtime tensors directly (e.g. TrainSession.paramTensors() on the same runtime): no copy. */
  setWeightTensors(tensors: Readonly<Record<string, Ort.Tensor>>, version = this.version): void {
    const next: Record<string, Ort.Tensor> = {};
    for (const p of this.graph.params) {
      const t = tensors[p.name];
      if (!t) throw new Error(`PolicySession.setWeightTensors: missing parameter '${p.name}'`);
      next[p.name] = t;
    }
    // Not bakeable: the tensors may live on a GPU, and their owner may release them.
    this.adopt(next, false, version);
  }

  private adopt(weights: Record<string, Ort.Tensor>, bakeable: boolean, version: number): void {
    this.weights = weights;
    this.bakeable = bakeable;
    this.epoch++;
    this.runsAtPrevEpoch = this.runsAtEpoch;
    this.runsAtEpoch = 0;
    this.version = version;
  }

  /**
   * The session for this run: the baked one when it holds the current weights, a freshly baked
   * one when bakeAfterRuns says so, else the one fed with weight inputs.
   */
  private async sessionForRun(): Promise<Ort.InferenceSession> {
    const runs = ++this.runsAtEpoch;
    if (this.weightsBaked) return this.baked!.session;
    if (this.baked) {
      // Stale: release it here, inside a run, never while another call may be using it.
      const stale = this.baked.session;
      this.baked = null;
      await stale.release();
    }
    const after = this.opts.bakeAfterRuns ?? Infinity;
    if (!this.bakeable || (runs < after && this.runsAtPrevEpoch < 2 * after)) return this.session;
    const epoch = this.epoch;
    const bake: Record<string, Float32Array> = {};
    for (const p of this.graph.params) bake[p.name] = this.weights[p.name].data as Float32Array;
    const session = await createSession(this.ort, this.graph.toOnnx({ bake }), this.opts, PolicySession.stateOutputs(this.graph));
    this.bakes++;
    if (epoch !== this.epoch) {
      // New weights arrived while it was built (a worker's message handler ran at an await).
      await session.release();
      return this.session;
    }
    this.baked = { session, epoch };
    return session;
  }

  /** Run with the given non-parameter inputs (typed arrays or runtime tensors). */
  async runRaw(inputs: Readonly<Record<string, Feed | Ort.Tensor>>): Promise<Ort.InferenceSession.ReturnType> {
    const session = await this.sessionForRun();
    // The weights fed are read after the await: the latest set, whichever session runs.
    const feeds: Record<string, Ort.Tensor> = session === this.session ? { ...this.weights } : {};
    for (const t of this.graph.inputs) {
      if (this.graph.params.includes(t)) continue;
      const v = inputs[t.name];
      if (v === undefined) throw new Error(`PolicySession.run: missing input '${t.name}' [${t.shape}] ${t.dtype}`);
      feeds[t.name] = v instanceof Float32Array || v instanceof Int32Array ? makeTensor(this.ort, v, t.shape) : v;
    }
    return session.run(feeds);
  }

  /** Run and copy every output to a Float32Array. */
  async run(inputs: Readonly<Record<string, Feed>>): Promise<Record<string, Float32Array>> {
    const res = await this.runRaw(inputs);
    const out: Record<string, Float32Array> = {};
    for (const [k, t] of Object.entries(res)) out[k] = await readFloat(t);
    return out;
  }

  async release(): Promise<void> {
    const baked = this.baked;
    this.baked = null;
    if (baked) await baked.session.release();
    await releaseSession(this.session);
  }
}
