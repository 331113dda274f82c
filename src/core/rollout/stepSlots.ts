/**
 * The lockstep grid agent loop behind the rollout pools: N env slots play one batch of episodes
 * over one policy runner, one inference call per step for every live slot, recording each step
 * into per-slot columns.
 */
import type { Env, Info, StepObs, StepResult } from '../envs/types.ts';
import { resetEnvs, stepEnvs } from '../envs/code/stepMany.ts';
import type { PolicyRunner } from '../models/runners.ts';
import type { Rng } from '../util/rng.ts';
import { sampleRow } from './categorical.ts';
import { encodeStepObs } from './features.ts';
import type { StepEpisode } from './stepEpisode.ts';

export interface PlaySlots {
  envs: readonly Env<StepObs, number>[];
  seeds: readonly number[];
  groups: readonly number[];
  /** One RNG per slot. */
  rngs: readonly Rng[];
  /** Batch ≥ number of slots; spare rows are fed zeros and ignored. */
  policy: PolicyRunner;
  featureSize: number;
  numActions: number;
  temperature: number;
  keepObservations: boolean;
  /** Φ over the env's full state, recorded at reset and after every step; its floor (the episode's lowest Φ), read at reset. */
  potential?: { phi: (env: Env<StepObs, number>) => number; floor: (env: Env<StepObs, number>) => number };
  betweenSteps?: () => Promise<void>;
  /** Called as each episode ends: `done` of this call's `total` episodes (progress for a person waiting on the first rollout). */
  onEpisode?: (done: number, total: number) => void;
  /** Per-slot recording buffers reused across calls (grown on demand); fresh ones when absent. */
  scratch?: SlotColumns[];
}

/**
 * One slot's per-step records while its episode runs, in typed arrays that grow by doubling
 * and are reused from one batch to the next (a pool keeps them), so a step allocates nothing
 * here. Observations are kept compact (the view's bytes and the heading, ~150 B a step) and
 * turned into [T, D] features once, when the episode is handed out: a 7×7 view is 984 floats
 * (3.9 KB), and copying those into growing per-slot arrays every step costs more allocation,
 * page faults and GC (much of it on V8's helper threads) than the MLP's forward pass.
 */
export class SlotColumns {
  /** Steps the arrays hold. */
  private cap = 0;
  /** Bytes of one observation's image (view × view × 3). */
  imageBytes = 0;
  actions = new Int32Array(0);
  logprobs = new Float32Array(0);
  entropies = new Float32Array(0);
  values = new Float32Array(0);
  versions = new Int32Array(0);
  rewards = new Float64Array(0);
  /** [cap + 1] Φ(s_0..s_T). */
  potentials = new Float64Array(0);
  /** The potential's floor for the episode in this slot (read at reset). */
  potentialFloor = 0;
  /** [cap, imageBytes] the image of the observation each action was taken in. */
  images = new Uint8Array(0);
  /** [cap] its heading. */
  directions = new Uint8Array(0);
  /** Floats of one vector observation (0 for grid observations). */
  vectorSize = 0;
  /** [cap, vectorSize] the vector observation each action was taken in (vector envs). */
  vectors = new Float32Array(0);

  /** Makes room for steps 0..steps−1 (keeping what is recorded) for observations of `obs`'s size. */
  reserve(steps: number, obs: StepObs): void {
    const imageBytes = 'vector' in obs ? 0 : obs.image.length;
    const vectorSize = 'vector' in obs ? obs.vector.length : 0;
    if (imageBytes !== this.imageBytes) {
      this.imageBytes = imageBytes;
      this.images = new Uint8Array(this.cap * imageBytes);
    }
    if (vectorSize !== this.vectorSize) {
      this.vectorSize = vectorSize;
      this.vectors = new Float32Array(this.cap * vectorSize);
    }
    if (steps <= this.cap) return;
    const cap = Math.max(steps, 2 * this.cap, 16);
    const grow = <T extends Int32Array | Float32Array | Float64Array | Uint8Array>(a: T, n: number, make: (n: number) => T): T => {
      const b = make(n);
      b.set(a);
      return b;
    };
    this.actions = grow(this.actions, cap, (n) => new Int32Array(n));
    this.logprobs = grow(this.logprobs, cap, (n) => new Float32Array(n));
    this.entropies = grow(this.entropies, cap, (n) => new Float32Array(n));
    this.values = grow(this.values, cap, (n) => new Float32Array(n));
    this.versions = grow(this.versions, cap, (n) => new Int32Array(n));
    this.rewards = grow(this.rewards, cap, (n) => new Float64Array(n));
    this.potentials = grow(this.potentials, cap + 1, (n) => new Float64Array(n));
    this.images = grow(this.images, cap * imageBytes, (n) => new Uint8Array(n));
    this.directions = grow(this.directions, cap, (n) => new Uint8Array(n));
    this.vectors = grow(this.vectors, cap * vectorSize, (n) => new Float32Array(n));
    this.cap = cap;
  }

  /** Stores observation `obs` as step t's (t < the reserved steps). */
  putObservation(t: number, obs: StepObs): void {
    if ('vector' in obs) {
      this.vectors.set(obs.vector, t * this.vectorSize);
      this.directions[t] = 0;
      return;
    }
    this.images.set(obs.image, t * this.imageBytes);
    this.directions[t] = obs.direction;
  }

}

/**
 * N envs in lockstep, one batched inference call per step ([B, D] → [B, A]), with a sampling
 * RNG per slot (a batch does not depend on how it is split over workers) and the policy version
 * read per call (an episode in flight continues under newer weights: partial rollouts).
 */
export async function playSlots(req: PlaySlots): Promise<{ episodes: StepEpisode[]; envSteps: number; inferenceCalls: number }> {
  const N = req.envs.length;
  const B = req.policy.batch;
  if (B < N) throw new RangeError(`playSlots: ${N} slots but the policy batch is ${B}`);
  const D = req.featureSize;
  // Rows of finished (and spare) slots stay zero; live rows are rewritten whole every step.
  const input = new Float32Array(B * D);
  const scratch = new Float64Array(req.numActions);
  const st = startSlots(req);
  const needBootstrap: number[] = [];
  let envSteps = 0;
  let inferenceCalls = 0;
  let live = N;
  const liveSlots: number[] = [];
  const acts: number[] = [];
  while (live > 0) {
    if (req.betweenSteps && inferenceCalls > 0) await req.betweenSteps();
    for (let i = 0; i < N; i++) {
      if (!st.active[i]) continue;
      encodeStepObs(st.current[i], input, i * D);
      st.cols[i].reserve(st.steps[i] + 1, st.current[i]);
      st.cols[i].putObservation(st.steps[i], st.current[i]);
    }
    // Read before the call: weights swapped while it runs apply from the next step.
    const version = req.policy.version;
    const out = await req.policy.run({ obs: input });
    inferenceCalls++;
    // Sample every live slot's action, then step all their envs in one go (stepEnvs: a code env
    // sandbox steps its whole share in one call; other envs step one by one, in slot order).
    liveSlots.length = 0;
    acts.length = 0;
    for (let i = 0; i < N; i++) {
      if (!st.active[i]) continue;
      liveSlots.push(i);
      acts.push(sampleSlot(req, st, i, out, version, scratch));
    }
    const results = stepEnvs(liveSlots.map((i) => req.envs[i]), acts);
    for (let k = 0; k < liveSlots.length; k++) {
      const i = liveSlots[k];
      envSteps++;
      if (!recordStep(req, st, i, results[k])) continue;
      st.active[i] = false;
      input.fill(0, i * D, (i + 1) * D);
      live--;
      req.onEpisode?.(N - live, N);
      if (st.ends[i].truncated && out.value) needBootstrap.push(i);
    }
  }
  const bootstrap = new Float64Array(N);
  if (needBootstrap.length > 0) {
    // V(s_T) of truncated episodes: their return continues past the time limit.
    for (const i of needBootstrap) encodeStepObs(st.current[i], input, i * D);
    const out = await req.policy.run({ obs: input });
    inferenceCalls++;
    for (const i of needBootstrap) bootstrap[i] = out.value![i];
  }
  const episodes = req.envs.map((_, i) => slotEpisode(req, st, i, bootstrap[i]));
  return { episodes, envSteps, inferenceCalls };
}

/** The per-slot state of one playSlots batch. */
interface SlotState {
  current: StepObs[];
  active: boolean[];
  steps: Int32Array;
  infos: Info[][];
  observations: StepObs[][];
  ends: { terminated: boolean; truncated: boolean }[];
  cols: SlotColumns[];
}

/** Resets every slot's env and reserves its columns. */
function startSlots(req: PlaySlots): SlotState {
  const N = req.envs.length;
  const cols = req.scratch ?? [];
  while (cols.length < N) cols.push(new SlotColumns());
  const st: SlotState = { current: new Array<StepObs>(N), active: new Array<boolean>(N).fill(true), steps: new Int32Array(N), infos: [], observations: [], ends: [], cols };
  const starts = resetEnvs(req.envs, req.seeds);
  for (let i = 0; i < N; i++) {
    st.current[i] = starts[i].obs;
    // Room for a whole episode up front when it is short enough (no growth mid-batch).
    cols[i].reserve(Math.min(req.envs[i].spec.maxSteps || 64, 1024), st.current[i]);
    if (req.potential) {
      cols[i].potentials[0] = req.potential.phi(req.envs[i]);
      cols[i].potentialFloor = req.potential.floor(req.envs[i]);
    }
    st.infos.push([]);
    st.observations.push(req.keepObservations ? [st.current[i]] : []);
    st.ends.push({ terminated: false, truncated: false });
  }
  return st;
}

/** Samples slot i's action from the call's output and records it (the env steps later, in stepEnvs). */
function sampleSlot(req: PlaySlots, st: SlotState, i: number, out: Record<string, Float32Array>, version: number, scratch: Float64Array): number {
  const s = sampleRow(out.logprobs, i, req.numActions, req.rngs[i], scratch, req.temperature);
  const c = st.cols[i];
  const t = st.steps[i];
  c.actions[t] = s.action;
  c.logprobs[t] = s.logprob;
  c.entropies[t] = s.entropy;
  c.values[t] = out.value ? out.value[i] : 0;
  c.versions[t] = version;
  return s.action;
}

/** Records what slot i's env returned for its sampled action; true when the episode ended. */
function recordStep(req: PlaySlots, st: SlotState, i: number, r: StepResult<StepObs>): boolean {
  const c = st.cols[i];
  const t = st.steps[i]++;
  c.rewards[t] = r.reward;
  st.infos[i].push(r.info);
  st.current[i] = r.obs;
  if (req.keepObservations) st.observations[i].push(r.obs);
  if (req.potential) c.potentials[t + 1] = req.potential.phi(req.envs[i]);
  if (!(r.terminated || r.truncated)) return false;
  st.ends[i] = { terminated: r.terminated, truncated: r.truncated };
  return true;
}

/** Slot i's finished episode, copied out of its columns. */
function slotEpisode(req: PlaySlots, st: SlotState, i: number, bootstrapValue: number): StepEpisode {
  const T = st.steps[i];
  const c = st.cols[i];
  const infos = st.infos[i];
  return {
    envId: req.envs[i].spec.id,
    seed: req.seeds[i],
    group: req.groups[i],
    images: c.images.slice(0, T * c.imageBytes),
    directions: c.directions.slice(0, T),
    ...(c.vectorSize > 0 ? { vectors: c.vectors.slice(0, T * c.vectorSize) } : {}),
    actions: c.actions.slice(0, T),
    logprobs: c.logprobs.slice(0, T),
    entropies: c.entropies.slice(0, T),
    values: c.values.slice(0, T),
    bootstrapValue,
    rewards: c.rewards.slice(0, T),
    infos,
    versions: c.versions.slice(0, T),
    observations: req.keepObservations ? st.observations[i] : undefined,
    potentials: req.potential ? c.potentials.slice(0, T + 1) : undefined,
    potentialFloor: req.potential ? c.potentialFloor : undefined,
    terminated: st.ends[i].terminated,
    truncated: st.ends[i].truncated,
    success: infos[T - 1]?.success === true,
  };
}
