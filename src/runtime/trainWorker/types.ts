/**
 * What the training worker sends the UI each iteration: the metrics and, per sampled episode,
 * only what the group view and the trajectory inspector draw. Observations and features stay in
 * the worker: grid episodes are replayed on the main thread from (env, seed, actions), which is
 * deterministic and far smaller than shipping [T, D] feature rows.
 */

import type { StepEpisode } from '../../core/rollout/stepEpisode.ts';
import type { TokenEpisode } from '../../core/rollout/tokenEpisode.ts';
import type { HoldReason } from '../../core/trainer/runControl.ts';
import type { LensSample } from '../../core/update/lensSample.ts';

/** One sampled episode, as the UI sees it: a grid episode (replayable) or a token episode. */
export type EpisodeView = GridEpisodeView | TokenEpisodeView;

/** What the UI adds to a sampled episode: the reward the advantage compared, and the advantage. */
interface Scored {
  /** Total shaped reward: what the advantage compared. */
  reward: number;
  /** The episode's advantage (group-relative for GRPO/RLOO, first-step GAE for PPO). */
  advantage: number;
}

/** A grid episode: the recorded per-step arrays (length T), without features or observations. */
export interface GridEpisodeView
  extends Scored,
    Pick<StepEpisode, 'seed' | 'group' | 'actions' | 'logprobs' | 'entropies' | 'values' | 'versions' | 'rewards' | 'terminated' | 'truncated' | 'success'> {
  kind: 'grid';
}

/**
 * A tool-env episode: per-token arrays over the context (length L) and the env's view of each turn
 * (actions, infos, observations: what the reward lab's re-scoring reads its step records from).
 */
export interface TokenEpisodeView
  extends Scored,
    Pick<TokenEpisode, 'seed' | 'group' | 'tokens' | 'lossMask' | 'logprobs' | 'entropies' | 'versions' | 'rewards' | 'actions' | 'infos' | 'observations' | 'transcript' | 'terminated' | 'truncated' | 'contextLimited' | 'forcedEnds' | 'success'> {
  kind: 'tokens';
  /**
   * [actions] the advantage each action's tokens were trained with (MT-GRPO and GiGPO differ per
   * turn; GRPO repeats the episode's); absent when the trainer computed none.
   */
  turnAdvantages?: Float64Array;
  /** Tree rollouts: this episode branched from episode `trunk` of the batch, continuing its context from token `at` after `turn` replayed turns. */
  branch?: { trunk: number; at: number; turn: number };
}

export interface IterationView {
  /** 0-based iteration index. */
  iteration: number;
  /** The metric keys of ARCHITECTURE.md plus the trainer's extras; NaN where undefined by nature. */
  metrics: Record<string, number>;
  /** False when the NaN guard skipped at least one update. */
  allApplied: boolean;
  /** Wall time of `step()` inside the worker, seconds. */
  wallS: number;
  episodes: EpisodeView[];
  /** The loss lens's sample of the batch's trained positions; absent where no policy-gradient loss ran. */
  lens?: LensSample;
  /** Reward-lab problems since the last report (a term's non-finite value skipped), each naming the term, line and seed. */
  rewardProblems?: string[];
  /** Rollout workers that died or stopped answering since the last report and were replaced (the run went on), one message each. */
  workerNotes?: string[];
}

/** What `start` reports back once the trainer is built. */
export interface StartInfo {
  /** Engine name, e.g. 'ort-web-wasm' or 'ort-web-webgpu'. */
  engine: string;
  /** Seconds to load the runtime and build the sessions. */
  setupS: number;
  /** Trainable parameters in the policy. */
  params: number;
  /** The trainer saves checkpoints (every trainer does: grid and token runs), so the run can resume. */
  canCheckpoint: boolean;
  /** Iterations already trained (a resumed run starts at its checkpoint's). */
  iteration: number;
  /** The warm start was a shipped one (public/warm-start/) loaded instead of trained. */
  warmStartLoaded?: boolean;
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

/** Which replayed world state to map: an episode of the current run (by seed and actions) at one step. */
export interface GridOverlayRequest {
  seed: number;
  actions: Int32Array;
  /** Actions applied before mapping (0 = the start state). */
  step: number;
}

/**
 * The policy (and value, where the model has a value head) at every standable cell, facing each
 * of the 4 directions, with the learner's weights of `version`. Row r = cell·4 + direction.
 */
export interface GridOverlay {
  width: number;
  height: number;
  /** [n·2] (x, y) of each mapped cell. */
  cells: Int16Array;
  numActions: number;
  /** [n·4, numActions] π(a | agent at the cell facing the direction). */
  probs: Float32Array;
  /** [n·4] V(s), or null when the model has no value head. */
  values: Float32Array | null;
  /** Policy version of the weights used. */
  version: number;
  /** The step of the episode the world was taken at. */
  step: number;
}

/** The part of a start in progress, in order (the page shows it with its elapsed time until the first iteration). */
export type StartPhase = 'engine' | 'session';

/**
 * What the worker reports of a start: a phase begins, or an episode of the first rollout ended
 * (`done` of `total` in its collect; in-thread grid rollouts only, see createTrainer's onEpisode).
 */
export type PhaseReport = { phase: StartPhase } | { phase: 'rollout'; done: number; total: number };

/** What `run` trains: the budget of this run (iterations from the trainer's current one) and the CLI's stop rule. */
export interface RunOptions {
  iterations: number;
  /** The config's stopAtSuccess (null = never): the run holds once the last 3 iterations' mean success reaches it. */
  stopAtSuccess: number | null;
  /** 'step': one iteration, then hold paused (the page's Step); 'play': train on. */
  mode: 'play' | 'step';
}

/** What the worker's run loop reports to the page, in order. */
export type RunEvent =
  | { type: 'iteration'; view: IterationView }
  /** The loop rests between iterations (paused, at its budget, at its success target); `iteration`: the trainer's iterations so far. */
  | { type: 'held'; reason: HoldReason; iteration: number }
  /** The run stopped with an error (a step threw, or updates kept being skipped); the trainer is as the last good iteration left it. */
  | { type: 'error'; iteration: number; message: string };
