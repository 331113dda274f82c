/**
 * What the training worker sends the UI each iteration: the metrics and, per sampled episode,
 * only what the group view and the trajectory inspector draw. Observations and features stay in
 * the worker: grid episodes are replayed on the main thread from (env, seed, actions), which is
 * deterministic and far smaller than shipping [T, D] feature rows.
 */

/** One sampled episode, as the UI sees it. Arrays are per policy step, length T. */
export interface EpisodeView {
  /** Env reset seed (episodes of one GRPO group share it). */
  seed: number;
  /** Group index within the batch, −1 for REINFORCE/PPO batches. */
  group: number;
  /** [T] actions taken (indices into the env's Discrete action space). */
  actions: Int32Array;
  /** [T] behaviour log π(a_t | s_t), nats. */
  logprobs: Float32Array;
  /** [T] policy entropy at each step, nats. */
  entropies: Float32Array;
  /** [T] critic V(s_t) at rollout time (zeros without a value head). */
  values: Float32Array;
  /** [T] policy version that sampled each action. */
  versions: Int32Array;
  /** [T] env rewards (before shaping). */
  rewards: Float64Array;
  /** Total shaped reward: what the advantage compared. */
  reward: number;
  /** The episode's advantage (group-relative for GRPO/RLOO, first-step GAE for PPO). */
  advantage: number;
  terminated: boolean;
  truncated: boolean;
  success: boolean;
}

export interface IterationView {
  /** 0-based iteration index. */
  iteration: number;
  /** DESIGN §7 keys plus the trainer's extras; NaN where undefined by nature. */
  metrics: Record<string, number>;
  /** False when the NaN guard skipped at least one update. */
  allApplied: boolean;
  /** Wall time of `step()` inside the worker, seconds. */
  wallS: number;
  episodes: EpisodeView[];
}

/** What `start` reports back once the trainer is built. */
export interface StartInfo {
  /** Engine name, e.g. 'ort-web-wasm' or 'ort-web-webgpu'. */
  engine: string;
  /** Seconds to load the runtime and build the sessions. */
  setupS: number;
  /** Trainable parameters in the policy. */
  params: number;
}
