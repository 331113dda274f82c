/**
 * Rollout pools: one interface in front of "where rollouts run". The trainer
 * asks a pool for a batch of episodes and pushes new weights into it; it never knows whether
 * the envs step in its own thread (`SerialRolloutPool`, below) or in workers
 * (`src/runtime/pool/workerPool.ts`). Both pass the same test suite
 * (`src/runtime/pool/pool.test.ts`).
 *
 * Determinism across pool shapes: every parallel slot samples from its own RNG, seeded by
 * (sampling seed, global slot index), and steps its own env; slots never share randomness.
 * So a batch is a function of (weights, env seeds, sampling seed) only, whichever way the
 * slots are split across workers and whatever the inference batch size.
 *
 * Partial rollouts: the policy version is read per step, just before that step's inference
 * call, so an episode in flight when `setWeights` lands continues under the new weights and
 * its `versions` array shows where (the scheduler in trainer/stepCollector.ts relies on this).
 */
import { makeEnv, type EnvKwargs } from '../envs/index.ts';
import { familyOf } from '../envs/families.ts';
import type { Env, EnvSpec, Frame, GridObs, StepObs } from '../envs/types.ts';
import type { BoxSpace } from '../envs/spaces.ts';
import type { Potential } from '../reward/shaping.ts';
import { MlpPolicy, type MlpConfig } from '../models/mlp.ts';
import type { PolicyModel, Weights } from '../models/types.ts';
import { gridFeatureSize, gridOwnColorFeature } from './features.ts';
import { playSlots, SlotColumns, type PlaySlots } from './stepSlots.ts';
import { gridGoalDistance, gridStepsToSuccess } from '../reward/potentials.ts';
import { Rng } from '../util/rng.ts';
import type { InferenceEngine, PolicyRunner } from '../models/runners.ts';
import type { StepEpisode } from './stepEpisode.ts';
import { mixSeed } from '../util/rng.ts';

/** Potentials a pool can record, by id (requests cross to workers, so they name, not pass, functions). */
export const POTENTIALS: Readonly<Record<string, Potential<Frame>>> = { [gridGoalDistance.id]: gridGoalDistance, [gridStepsToSuccess.id]: gridStepsToSuccess };
/** A key of POTENTIALS, e.g. 'grid/neg-steps-to-success'. */
export type PotentialId = string;

/** A policy model as plain data, so a worker can rebuild the same graph (structured-clonable). */
export type PoolModelSpec = { kind: 'mlp'; config: Partial<MlpConfig> & Pick<MlpConfig, 'obsDim' | 'numActions'> };

/** How a multi-agent env's agents are played: one network for all ('shared') or one each ('separate'). */
export type AgentPolicies = 'shared' | 'separate';

/** The Box of an env whose observations are vectors (`{ vector }`, code envs' `kind: 'vector'`), or null. */
export function vectorBox(spec: EnvSpec): BoxSpace | null {
  const o = spec.observationSpace;
  return o.kind === 'dict' && o.spaces.vector?.kind === 'box' ? o.spaces.vector : null;
}

/**
 * The MLP spec for a grid env: obsDim from the env's view size (or, for vector observations, the
 * vector's length: the MLP reads the floats as they are), numActions from its action space.
 * `agents: 'separate'` (two-agent envs only) makes two towers, selected by the acting agent's
 * own-cell colour (EnvSpec.agentColors[1] picks tower 1).
 */
export function gridMlpSpec(env: { id: string; kwargs?: EnvKwargs }, mlp: Partial<Omit<MlpConfig, 'obsDim' | 'numActions' | 'towers' | 'towerFeature'>> = {}, agents: AgentPolicies = 'shared'): PoolModelSpec {
  const probe = makeEnv(env.id, env.kwargs) as Env<GridObs, number>;
  if (!familyOf(probe.spec).stepPool) throw new Error(`${env.id} is a ${probe.spec.family} env, not a grid env`);
  const space = probe.spec.actionSpace;
  if (space.kind !== 'discrete') throw new Error(`${env.id}: expected a discrete action space`);
  const vec = vectorBox(probe.spec);
  if (vec) {
    if (agents !== 'shared') throw new Error(`${env.id} has vector observations and one agent: use agents 'shared'`);
    return { kind: 'mlp', config: { ...mlp, obsDim: vec.shape.reduce((a, b) => a * b, 1), numActions: space.n } };
  }
  const viewSize = Math.round(Math.sqrt(probe.reset({ seed: 0 }).obs.image.length / 3));
  const config = { ...mlp, obsDim: gridFeatureSize(viewSize), numActions: space.n };
  if (agents === 'shared') return { kind: 'mlp', config };
  const colors = probe.spec.agentColors;
  if (!colors || colors.length !== 2) {
    throw new Error(`${env.id} has ${colors?.length ?? 1} agent${(colors?.length ?? 1) === 1 ? '' : 's'}: separate policies ('separate') are for two-agent envs; use 'shared'`);
  }
  return { kind: 'mlp', config: { ...config, towers: 2, towerFeature: gridOwnColorFeature(viewSize, colors[1]) } };
}

export function buildPoolModel(spec: PoolModelSpec): MlpPolicy {
  if (spec.kind !== 'mlp') throw new Error(`rollout pool: unsupported model kind ${JSON.stringify((spec as { kind: unknown }).kind)}`);
  return new MlpPolicy(spec.config);
}

/** One batch of episodes to play; every field is structured-clonable (it crosses to workers). */
export interface CollectRequest {
  /** Env registry id and kwargs; the pool makes (and reuses) one env per slot. */
  env: { id: string; kwargs?: EnvKwargs };
  /** Reset seed per slot (equal seeds = one GRPO group's identical start states). */
  seeds: readonly number[];
  /** Group index per slot (−1 when not grouped); copied into the episodes. */
  groups: readonly number[];
  /** Sampling randomness: slot i draws from Rng(mixSeed(samplingSeed, slotOffset + i)). */
  samplingSeed: number;
  /** 1 = sample from π (default); 0 = greedy evaluation. */
  temperature?: number;
  /** Keep raw observations s_0..s_T on each episode (replays, trajectories.jsonl). Default false. */
  keepObservations?: boolean;
  /** Record Φ(s_0..s_T) per episode with this potential (by id, see POTENTIALS) for potential-based shaping. */
  potential?: PotentialId;
  /**
   * Global index of this request's first slot (default 0). Worker pools set it when they split
   * a request, so each slot keeps the RNG it would have in one piece.
   */
  slotOffset?: number;
}

export interface CollectResult {
  /** One episode per slot, in slot order. */
  episodes: StepEpisode[];
  /** Env steps taken (Σ episode lengths). */
  envSteps: number;
  /** Batched inference calls made (per worker, summed). */
  inferenceCalls: number;
  /** Seconds the slowest worker spent in this collect (wall time of the rollout proper). */
  busyS: number;
}

export interface RolloutPool {
  /** Workers (1 for the serial pool): how many batches of envs step in parallel. */
  readonly size: number;
  /** Latest policy version pushed with setWeights (the initial weights are version 0 unless given). */
  readonly version: number;
  /**
   * Make `weights` the rollout policy from the next inference call on, labelled `version`.
   * A pool (or worker) that already holds `version` does nothing: versions identify weights.
   * Episodes in flight continue under the new weights (partial rollouts).
   */
  setWeights(weights: Weights, version: number): Promise<void>;
  /** Plays one episode per slot; rejects with the cause (e.g. an unknown env id), never hangs. */
  collect(request: CollectRequest): Promise<CollectResult>;
  /** Releases sessions and terminates workers; later calls reject. */
  close(): Promise<void>;
}

export interface SerialPoolOptions {
  /** Makes the pool's policy runners (an Engine, or its serialized form). */
  engine: Pick<InferenceEngine, 'createPolicy'>;
  model: PoolModelSpec;
  weights: Weights;
  /** Version of `weights` (default 0). */
  version?: number;
  /**
   * Awaited between lockstep steps. Workers pass a macrotask yield here so a `setWeights`
   * message can land mid-batch (partial rollouts); in-thread callers need nothing.
   */
  betweenSteps?: () => Promise<void>;
  /** Each episode's end in a collect: `done` of `total` (see PlaySlots.onEpisode). */
  onEpisode?: (done: number, total: number) => void;
}

/** The in-thread pool: today's lockstep batched rollout behind the RolloutPool interface. */
export class SerialRolloutPool implements RolloutPool {
  readonly size = 1;
  readonly model: PolicyModel & { config: MlpConfig };
  private weights: Weights;
  private currentVersion: number;
  /** One runner per inference batch size (PolicyRunner batches are static). */
  private readonly runners = new Map<number, Promise<PolicyRunner>>();
  /** The runners already created, updated synchronously by applyWeights. */
  private readonly ready = new Set<PolicyRunner>();
  /** Envs by `${id}|${kwargs}`, grown on demand and reused across calls (reset re-seeds them). */
  private readonly envs = new Map<string, Env<StepObs, number>[]>();
  /** Per-slot recording buffers, reused by every collect (collects run one at a time). */
  private readonly scratch: SlotColumns[] = [];
  private closed = false;
  /** Collects run one at a time (they share envs and runners); this is the queue's tail. */
  private tail: Promise<unknown> = Promise.resolve();

  constructor(private readonly opts: SerialPoolOptions) {
    this.model = buildPoolModel(opts.model);
    this.weights = opts.weights;
    this.currentVersion = opts.version ?? 0;
  }

  get version(): number {
    return this.currentVersion;
  }

  /** Synchronous body of setWeights (workers call it straight from their message handler). */
  applyWeights(weights: Weights, version: number): boolean {
    if (this.closed) throw new Error('rollout pool is closed');
    if (version === this.currentVersion) return false;
    this.weights = weights;
    this.currentVersion = version;
    // Synchronously, so a batch in flight samples its next step with them; runners still
    // being created pick them up in runner().
    for (const r of this.ready) r.setWeights(weights, version);
    return true;
  }

  async setWeights(weights: Weights, version: number): Promise<void> {
    this.applyWeights(weights, version);
  }

  private async runner(batch: number): Promise<PolicyRunner> {
    let p = this.runners.get(batch);
    if (!p) {
      const weights = this.weights;
      const version = this.currentVersion;
      p = this.opts.engine.createPolicy(this.model, batch, weights).then((r) => {
        r.version = version;
        this.ready.add(r);
        return r;
      });
      this.runners.set(batch, p);
    }
    const r = await p;
    if (r.version !== this.currentVersion) r.setWeights(this.weights, this.currentVersion);
    return r;
  }

  private envsFor(id: string, kwargs: EnvKwargs | undefined, n: number): Env<StepObs, number>[] {
    const key = `${id}|${JSON.stringify(kwargs ?? {})}`;
    let list = this.envs.get(key);
    if (!list) this.envs.set(key, (list = []));
    while (list.length < n) {
      const env = makeEnv(id, kwargs) as Env<StepObs, number>;
      if (!familyOf(env.spec).stepPool) throw new Error(`rollout pool: ${id} is a ${env.spec.family} env; step pools play grid envs`);
      list.push(env);
    }
    return list.slice(0, n);
  }

  collect(req: CollectRequest): Promise<CollectResult> {
    const run = this.tail.then(() => this.collectNow(req));
    this.tail = run.catch(() => undefined);
    return run;
  }

  private async collectNow(req: CollectRequest): Promise<CollectResult> {
    if (this.closed) throw new Error('rollout pool is closed');
    const n = req.seeds.length;
    if (req.groups.length !== n) throw new RangeError(`collect: ${n} seeds but ${req.groups.length} groups`);
    const t0 = performance.now();
    if (n === 0) return { episodes: [], envSteps: 0, inferenceCalls: 0, busyS: 0 };
    const envs = this.envsFor(req.env.id, req.env.kwargs, n);
    const policy = await this.runner(n);
    const offset = req.slotOffset ?? 0;
    const r = await playSlots({
      envs,
      seeds: req.seeds,
      groups: req.groups,
      rngs: req.seeds.map((_, i) => slotRng(req.samplingSeed, offset + i)),
      policy,
      featureSize: this.model.config.obsDim,
      numActions: this.model.numActions,
      temperature: req.temperature ?? 1,
      keepObservations: req.keepObservations ?? false,
      potential: req.potential === undefined ? undefined : potentialOf(req.potential),
      betweenSteps: this.opts.betweenSteps,
      onEpisode: this.opts.onEpisode,
      scratch: this.scratch,
    });
    return { ...r, busyS: (performance.now() - t0) / 1000 };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const runners = await Promise.allSettled(this.runners.values());
    this.runners.clear();
    this.ready.clear();
    await Promise.all(runners.map((r) => (r.status === 'fulfilled' ? r.value.release() : undefined)));
  }
}

function potentialOf(id: string): NonNullable<PlaySlots['potential']> {
  const p = POTENTIALS[id];
  if (!p) throw new Error(`rollout pool: unknown potential ${JSON.stringify(id)}; known: ${Object.keys(POTENTIALS).join(', ')}`);
  return { phi: (env) => p.phi(env.frame()), floor: (env) => p.floor(env.frame()) };
}

/** The sampling RNG of global slot `slot` for a request with `samplingSeed`. */
export function slotRng(samplingSeed: number, slot: number): Rng {
  return new Rng(mixSeed(samplingSeed, 0x51a7, slot));
}

/** The typed-array buffers of a batch of episodes, for zero-copy transfer out of a worker. */
export function episodeBuffers(episodes: readonly StepEpisode[]): ArrayBuffer[] {
  const out: ArrayBuffer[] = [];
  for (const ep of episodes) {
    for (const a of [ep.images, ep.directions, ep.vectors, ep.actions, ep.logprobs, ep.entropies, ep.values, ep.rewards, ep.versions, ep.potentials]) {
      if (!a) continue;
      // Each array was made by the rollout and owns its whole buffer; a view into a shared one
      // would detach its neighbours, so such arrays are left to be copied.
      if (a.byteOffset === 0 && a.byteLength === a.buffer.byteLength && a.buffer instanceof ArrayBuffer) out.push(a.buffer);
    }
  }
  return out;
}
