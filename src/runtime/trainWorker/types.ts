/**
 * What the training worker sends the UI each iteration: the metrics and, per sampled episode,
 * only what the group view and the trajectory inspector draw. Observations and features stay in
 * the worker: grid episodes are replayed on the main thread from (env, seed, actions), which is
 * deterministic and far smaller than shipping [T, D] feature rows.
 */

/** One sampled episode, as the UI sees it: a grid episode (replayable) or a token episode. */
export type EpisodeView = GridEpisodeView | TokenEpisodeView;

/** A grid episode. Arrays are per policy step, length T. */
export interface GridEpisodeView {
  kind: 'grid';
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

/**
 * A tool-env episode from the token trainer. Arrays run over the context, length L; `actions`
 * is the env's view (one text per turn). Per-token fields are 0 / −1 on environment tokens.
 */
export interface TokenEpisodeView {
  kind: 'tokens';
  seed: number;
  group: number;
  /** [L] context token ids; tokens[0] = <bos>. */
  tokens: Int32Array;
  /** [L] 1 where the policy sampled the token. */
  lossMask: Uint8Array;
  /** [L] behaviour log-probs (policy tokens). */
  logprobs: Float32Array;
  /** [L] entropies, nats (policy tokens). */
  entropies: Float32Array;
  /** [L] policy version per token, −1 on env tokens. */
  versions: Int32Array;
  /** [turns] env rewards. */
  rewards: Float64Array;
  /** [turns] action texts as the env received them. */
  actions: string[];
  transcript: string;
  reward: number;
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

/** Progress of an imitation warm start (tool envs), one report per imitation step. */
export interface WarmStartProgress {
  /** Steps done, 1-based. */
  step: number;
  total: number;
  /** Cross-entropy per policy token, nats. */
  ceLoss: number;
  /** Mean probability of the expert's token. */
  targetProb: number;
}
