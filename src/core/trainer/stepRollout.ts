/**
 * Rollouts for step environments (grid worlds) with a policy over structured observations.
 * N envs run in lockstep and every decision step is one batched inference call ([N, D] → [N, A]),
 * so the engine is called T_max times per batch, not Σ T_i times.
 */
import type { Env, GridObs, Info } from '../envs/types.ts';
import { Rng } from '../util/rng.ts';
import { sampleRow } from './../rollout/categorical.ts';
import type { PolicyRunner } from './engine.ts';

export interface StepEpisode {
  envId: string;
  /** reset seed: episodes with the same seed start from the same state (a GRPO group). */
  seed: number;
  /** Group index within the iteration (−1 when not grouped). */
  group: number;
  /** [T, D] features of the observation each action was taken in. */
  features: Float32Array;
  /** [T] actions taken. */
  actions: Int32Array;
  /** [T] behaviour log-probabilities μ(a_t|s_t). */
  logprobs: Float32Array;
  /** [T] entropy of the behaviour policy at each step, nats. */
  entropies: Float32Array;
  /** [T] V(s_t) at rollout time (0 without a value head). */
  values: Float32Array;
  /** V(s_T) for bootstrapping a truncated episode (0 when terminated). */
  bootstrapValue: number;
  /** [T] env rewards. */
  rewards: Float64Array;
  infos: Info[];
  /** [T] policy version that chose each action. */
  versions: Int32Array;
  /** [T+1] Φ(s_0..s_T) for potential-based shaping, when a potential was given. */
  potentials?: Float64Array;
  /** Raw observations s_0..s_T (for replays), kept only when asked. */
  observations?: GridObs[];
  terminated: boolean;
  truncated: boolean;
  success: boolean;
}

export interface StepRolloutRequest {
  /** One env per parallel slot; length must equal policy.batch. */
  envs: readonly Env<GridObs, number>[];
  /** Reset seed for each slot. */
  seeds: readonly number[];
  /** Group index for each slot. */
  groups: readonly number[];
  policy: PolicyRunner;
  /** Observation → features written into a row. */
  featurize: (obs: GridObs, out: Float32Array, offset: number) => void;
  featureSize: number;
  numActions: number;
  /** Sampling randomness (not the env's: envs are seeded via reset). */
  rng: Rng;
  /** Keep raw observations for replays (UI trajectories, trajectories.jsonl). */
  keepObservations?: boolean;
  /** 0 = greedy evaluation, 1 = sample from π. */
  temperature?: number;
  /** Φ over the env's full state, recorded at reset and after every step (potential shaping). */
  potential?: (env: Env<GridObs, number>) => number;
}

export interface StepRolloutResult {
  episodes: StepEpisode[];
  envSteps: number;
  inferenceCalls: number;
}

export async function collectStepEpisodes(req: StepRolloutRequest): Promise<StepRolloutResult> {
  const N = req.envs.length;
  if (N !== req.policy.batch) throw new RangeError(`collectStepEpisodes: ${N} envs but the policy batch is ${req.policy.batch}`);
  const D = req.featureSize;
  const A = req.numActions;
  const input = new Float32Array(N * D);
  const scratch = new Float64Array(A);
  const current: GridObs[] = new Array(N);
  const active = new Array<boolean>(N).fill(true);
  interface Buf {
    feats: Float32Array[];
    actions: number[];
    logprobs: number[];
    entropies: number[];
    values: number[];
    rewards: number[];
    infos: Info[];
    versions: number[];
    observations: GridObs[];
    potentials: number[];
    terminated: boolean;
    truncated: boolean;
  }
  const bufs: Buf[] = [];
  for (let i = 0; i < N; i++) {
    current[i] = req.envs[i].reset({ seed: req.seeds[i] }).obs;
    bufs.push({ feats: [], actions: [], logprobs: [], entropies: [], values: [], rewards: [], infos: [], versions: [], observations: [current[i]], potentials: req.potential ? [req.potential(req.envs[i])] : [], terminated: false, truncated: false });
  }
  const bootstrap = new Float64Array(N);
  const needBootstrap: number[] = [];
  let envSteps = 0;
  let inferenceCalls = 0;
  let live = N;
  while (live > 0) {
    input.fill(0);
    for (let i = 0; i < N; i++) if (active[i]) req.featurize(current[i], input, i * D);
    const out = await req.policy.run({ obs: input });
    inferenceCalls++;
    const logp = out.logprobs;
    const value = out.value;
    for (let i = 0; i < N; i++) {
      if (!active[i]) continue;
      const s = sampleRow(logp, i, A, req.rng, scratch, req.temperature ?? 1);
      const b = bufs[i];
      b.feats.push(input.slice(i * D, (i + 1) * D));
      b.actions.push(s.action);
      b.logprobs.push(s.logprob);
      b.entropies.push(s.entropy);
      b.values.push(value ? value[i] : 0);
      b.versions.push(req.policy.version);
      const r = req.envs[i].step(s.action);
      envSteps++;
      b.rewards.push(r.reward);
      b.infos.push(r.info);
      current[i] = r.obs;
      if (req.keepObservations) b.observations.push(r.obs);
      if (req.potential) b.potentials.push(req.potential(req.envs[i]));
      if (r.terminated || r.truncated) {
        b.terminated = r.terminated;
        b.truncated = r.truncated;
        active[i] = false;
        live--;
        if (r.truncated && value) needBootstrap.push(i);
      }
    }
  }
  if (needBootstrap.length > 0) {
    // One more call for V(s_T) of truncated episodes: their return continues past the time limit.
    input.fill(0);
    for (const i of needBootstrap) req.featurize(current[i], input, i * D);
    const out = await req.policy.run({ obs: input });
    inferenceCalls++;
    for (const i of needBootstrap) bootstrap[i] = out.value![i];
  }
  const episodes = bufs.map((b, i): StepEpisode => {
    const T = b.actions.length;
    const features = new Float32Array(T * D);
    b.feats.forEach((row, t) => features.set(row, t * D));
    const last = b.infos[T - 1];
    return {
      envId: req.envs[i].spec.id,
      seed: req.seeds[i],
      group: req.groups[i],
      features,
      actions: Int32Array.from(b.actions),
      logprobs: Float32Array.from(b.logprobs),
      entropies: Float32Array.from(b.entropies),
      values: Float32Array.from(b.values),
      bootstrapValue: bootstrap[i],
      rewards: Float64Array.from(b.rewards),
      infos: b.infos,
      versions: Int32Array.from(b.versions),
      observations: req.keepObservations ? b.observations : undefined,
      potentials: req.potential ? Float64Array.from(b.potentials) : undefined,
      terminated: b.terminated,
      truncated: b.truncated,
      success: last?.success === true,
    };
  });
  return { episodes, envSteps, inferenceCalls };
}
