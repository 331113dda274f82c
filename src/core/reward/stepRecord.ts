/**
 * The step record: what a user-written reward term (the reward lab, ARCHITECTURE.md 'Reward
 * lab') sees for one step of an episode. A reward file is an ES module; each named export is a
 * function `(step) => number` and the export's name is the term's name. The term's value for a
 * step is added to that step's reward before advantages, and reported as `reward/<term>/mean`.
 *
 * Records are plain JSON (they cross into a sandbox), built after the episode ended by replaying
 * the env from its seed with the recorded actions: envs are deterministic from the seed, so the
 * replay is the episode (and `buildGridStepRecords` checks that the rewards agree). Text (tool)
 * episodes need no replay: a token episode records every observation, action text, reward and
 * info, and `buildTextStepRecords` reads them off it.
 */
import type { GridEnv, GridFrame, Info, ToolEnv } from '../envs/types.ts';
import { ACTION_LABELS } from '../envs/grid/world.ts';
import { OBJ } from '../envs/grid/objects.ts';

/** One step t: the observation s_t, the action a_t taken in it, and what the env answered. */
export interface StepRecord {
  /** Step index t within the episode, from 0. */
  t: number;
  /**
   * The observation the action was taken in (what the policy saw). The view's cell codes are not
   * included: parsing them inside the sandbox cost more than every term call together, and the
   * text carries the same view (`state` holds the structured facts).
   */
  observation: {
    /** The egocentric view as text, in the shared vocabulary (what a text policy reads). */
    text: string;
    /** Absolute heading: 0 east, 1 south, 2 west, 3 north; −1 on text (tool) envs. */
    direction: number;
    /**
     * Text (tool) envs: the observation after the action, i.e. the env's reply (e.g. `result: 42`).
     * Grid records leave it out (null in the sandbox): the next step's `observation.text` is it,
     * and shipping every view twice would slow scoring.
     */
    nextText?: string | null;
  };
  /**
   * The full state before the action (privileged: the policy cannot see it, a reward may read
   * it). Grid cells are counted from the top-left corner, x to the right, y down. Text (tool)
   * envs have no grid: x, y and dir are −1, carrying, goal and goalDistance null.
   */
  state: {
    x: number;
    y: number;
    /** Heading, as `observation.direction`. */
    dir: number;
    /** The object carried ({type, color} codes of grid/objects.ts) or null. */
    carrying: { type: number; color: number } | null;
    /** The goal cell, when the grid has one (else null). */
    goal: { x: number; y: number } | null;
    /** Steps from the agent to the goal by breadth-first search over open cells (null when unreachable or no goal). */
    goalDistance: number | null;
  };
  /** The action taken: its index in the action space (grids); −1 on text envs (see actionName). */
  action: number;
  /** Grids: its name ('left', 'right', 'forward', 'pickup', 'drop', 'toggle', 'done'). Text envs: the action text as the env received it, e.g. `calc(3*4)`. */
  actionName: string;
  /** The env's own reward for this step (grids: 1 − 0.9·steps/maxSteps on success, else 0). */
  reward: number;
  /** The episode truly ended after this step (goal reached, lava, …): no bootstrap past it. */
  terminated: boolean;
  /** The episode hit its time limit after this step. */
  truncated: boolean;
  /** The step's info: progress (subgoals reached), success (on the final step), tool-call facts on tool envs. */
  info: {
    progress: number;
    success: boolean;
    /** Tool envs: the tool called this step, whether it failed, whether the action was malformed. */
    toolCall: string | null;
    toolFailed: boolean;
    /** Tool envs: this call succeeded right after a failed one (a term can pay for recovery). */
    recovered: boolean;
    malformed: boolean;
  };
  /** The episode so far, filled in by the scorer: its seed, env and the records of steps 0..t−1. */
  episode: EpisodeSoFar;
}

export interface EpisodeSoFar {
  /** The reset seed (episodes of one GRPO group share it). */
  seed: number;
  /** Env registry id, e.g. `grid/empty-8x8`. */
  envId: string;
  /** Steps in the whole episode (T). */
  length: number;
  /** Records of the steps before this one (0..t−1), oldest first. */
  steps: readonly StepRecord[];
  /** Sum of the env's rewards over those steps. */
  returnSoFar: number;
}

/** A finished episode as a scorer receives it: records without `episode` (the scorer adds it). */
export interface ScoreEpisode {
  seed: number;
  envId: string;
  steps: Omit<StepRecord, 'episode'>[];
}

/** The fields a step record has, with one line each: the editor's completion list and the docs. */
export const STEP_RECORD_FIELDS: readonly { path: string; doc: string }[] = [
  { path: 't', doc: 'step index within the episode, from 0' },
  { path: 'observation.text', doc: 'the egocentric view as text (what a text policy reads)' },
  { path: 'observation.direction', doc: 'heading: 0 east, 1 south, 2 west, 3 north (−1 on tool envs)' },
  { path: 'observation.nextText', doc: "tool envs: the env's reply to the action (null on grids)" },
  { path: 'state.x', doc: 'agent column (full state, before the action)' },
  { path: 'state.y', doc: 'agent row (full state, before the action)' },
  { path: 'state.dir', doc: 'agent heading' },
  { path: 'state.carrying', doc: '{type, color} carried, or null' },
  { path: 'state.goal', doc: '{x, y} of the goal, or null' },
  { path: 'state.goalDistance', doc: 'BFS steps to the goal, or null' },
  { path: 'action', doc: 'action index' },
  { path: 'actionName', doc: "grids: 'left' | 'right' | 'forward' | 'pickup' | 'drop' | 'toggle' | 'done'; tool envs: the action text, e.g. 'calc(3*4)'" },
  { path: 'reward', doc: "the env's reward for this step" },
  { path: 'terminated', doc: 'the episode ended after this step' },
  { path: 'truncated', doc: 'the time limit was hit after this step' },
  { path: 'info.progress', doc: 'subgoals reached this step' },
  { path: 'info.success', doc: 'task solved (final step)' },
  { path: 'info.toolCall', doc: 'tool called this step (tool envs), or null' },
  { path: 'info.toolFailed', doc: 'the tool call failed (tool envs)' },
  { path: 'info.recovered', doc: 'the tool call succeeded right after a failed one (tool envs)' },
  { path: 'info.malformed', doc: 'the action was malformed (tool envs)' },
  { path: 'episode.seed', doc: 'the reset seed' },
  { path: 'episode.envId', doc: 'env registry id' },
  { path: 'episode.length', doc: 'steps in the whole episode' },
  { path: 'episode.steps', doc: 'records of steps 0..t−1' },
  { path: 'episode.returnSoFar', doc: "sum of the env's rewards before this step" },
];

function infoOf(info: Info): StepRecord['info'] {
  return {
    progress: typeof info.progress === 'number' && Number.isFinite(info.progress) ? info.progress : 0,
    success: info.success === true,
    toolCall: typeof info.toolCall === 'string' ? info.toolCall : null,
    toolFailed: info.toolFailed === true,
    recovered: info.recovered === true,
    malformed: info.malformed === true,
  };
}

/** The first goal cell of a grid frame's cells (row-major, 3 bytes per cell), or null. */
function findGoal(cells: Uint8Array, width: number, height: number): { x: number; y: number } | null {
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) if (cells[(y * width + x) * 3] === OBJ.goal) return { x, y };
  return null;
}

/**
 * [W·H] walking distance from every cell to the nearest goal, −1 where none is reachable: one
 * breadth-first search from the goals, with gridGoalDistance's rules (walls and lava block;
 * doors and objects pass). Those cells never change within an episode, so one map per episode
 * gives every step's distance (per-step BFS from a fresh frame cost more than the terms).
 */
function goalDistances(cells: Uint8Array, W: number, H: number): Int32Array {
  const dist = new Int32Array(W * H).fill(-1);
  const queue = new Int32Array(W * H);
  let head = 0, tail = 0;
  for (let p = 0; p < W * H; p++) {
    if (cells[p * 3] !== OBJ.goal) continue;
    dist[p] = 0;
    queue[tail++] = p;
  }
  while (head < tail) {
    const p = queue[head++];
    const x = p % W, y = (p - x) / W;
    for (const q of [x > 0 ? p - 1 : -1, x < W - 1 ? p + 1 : -1, y > 0 ? p - W : -1, y < H - 1 ? p + W : -1]) {
      if (q < 0 || dist[q] >= 0) continue;
      const t = cells[q * 3];
      if (t === OBJ.wall || t === OBJ.lava) continue;
      dist[q] = dist[p] + 1;
      queue[tail++] = q;
    }
  }
  return dist;
}

/** Grid worlds offer the agent's pose without building a frame (the GridWorld.agentState getter). */
type AgentReader = { readonly agentState?: { x: number; y: number; dir: number; carrying: { type: number; color: number } | null } };

/** What a grid episode must have recorded to be replayed. */
export interface GridEpisodeLike {
  envId: string;
  seed: number;
  actions: ArrayLike<number>;
  rewards: ArrayLike<number>;
}

/**
 * Replay a grid episode from its seed and build its step records. Throws when the replay disagrees with the recorded rewards (an env that is
 * not deterministic from its seed cannot be re-scored).
 */
export function buildGridStepRecords(env: GridEnv, ep: GridEpisodeLike): ScoreEpisode {
  let { obs } = env.reset({ seed: ep.seed });
  const steps: ScoreEpisode['steps'] = [];
  const T = ep.actions.length;
  const f0 = env.frame();
  if (f0.kind !== 'grid') throw new Error(`buildGridStepRecords: ${ep.envId} is not a grid env`);
  const goal = findGoal(f0.cells, f0.width, f0.height);
  const dist = goalDistances(f0.cells, f0.width, f0.height);
  const reader = 'agentState' in env ? () => (env as AgentReader).agentState! : () => (env.frame() as GridFrame).agent;
  for (let t = 0; t < T; t++) {
    const a = ep.actions[t];
    const agent = reader();
    const d = dist[agent.y * f0.width + agent.x];
    const before = {
      text: obs.text,
      direction: obs.direction,
      state: { x: agent.x, y: agent.y, dir: agent.dir, carrying: agent.carrying, goal, goalDistance: d < 0 ? null : d },
    };
    const r = env.step(a);
    if (Math.abs(r.reward - ep.rewards[t]) > 1e-9) {
      throw new Error(`buildGridStepRecords: replaying ${ep.envId} seed ${ep.seed} gave reward ${r.reward} at step ${t}, the episode recorded ${ep.rewards[t]} (the env is not deterministic from its seed)`);
    }
    steps.push({
      t,
      observation: { text: before.text, direction: before.direction },
      state: before.state,
      action: a,
      actionName: ACTION_LABELS[a] ?? String(a),
      reward: r.reward,
      terminated: r.terminated,
      truncated: r.truncated,
      info: infoOf(r.info),
    });
    obs = r.obs;
  }
  return { seed: ep.seed, envId: ep.envId, steps };
}

/**
 * A short real episode of a grid env for a dry run of user terms before training: reset from
 * `seed`, then `actions` (stopping early if the episode ends), recorded as a trainer would.
 */
export function sampleGridEpisode(env: GridEnv, envId: string, seed: number, actions: readonly number[]): ScoreEpisode {
  env.reset({ seed });
  const played: number[] = [];
  const rewards: number[] = [];
  for (const a of actions) {
    const r = env.step(a);
    played.push(a);
    rewards.push(r.reward);
    if (r.terminated || r.truncated) break;
  }
  return buildGridStepRecords(env, { envId, seed, actions: played, rewards });
}

/** What a text (tool) episode must have recorded: a token episode (rollout/tokenEpisode.ts) has all of it. */
export interface TextEpisodeLike {
  envId: string;
  seed: number;
  /** [T] action texts as the env received them. */
  actions: readonly string[];
  /** [T] env rewards. */
  rewards: ArrayLike<number>;
  /** [T] the env's info after each action. */
  infos: readonly Info[];
  /** [T + 1] observation texts: the task, then the env's reply after each action. */
  observations: readonly string[];
  /** How the episode ended (applies to its last step). */
  terminated: boolean;
  truncated: boolean;
}

/** Text envs have no grid: the state fields a grid term reads are −1 / null (documented on StepRecord.state). */
const NO_GRID_STATE: StepRecord['state'] = { x: -1, y: -1, dir: -1, carrying: null, goal: null, goalDistance: null };

/**
 * The step records of a text (tool) episode, one per env step (a tool call or the answer): read
 * off the recorded episode, no replay (tool envs may draw latencies and failures from a stream
 * the episode does not record, and everything a term reads is recorded anyway). Only the last
 * step carries the episode's terminated/truncated flags (a context-limited episode ends truncated).
 */
export function buildTextStepRecords(ep: TextEpisodeLike): ScoreEpisode {
  const T = ep.actions.length;
  if (ep.rewards.length !== T || ep.infos.length !== T || ep.observations.length < T) {
    throw new Error(`buildTextStepRecords: ${ep.envId} seed ${ep.seed} has ${T} actions, ${ep.rewards.length} rewards, ${ep.infos.length} infos and ${ep.observations.length} observations`);
  }
  const steps: ScoreEpisode['steps'] = [];
  for (let t = 0; t < T; t++) {
    const last = t === T - 1;
    steps.push({
      t,
      observation: { text: ep.observations[t], direction: -1, nextText: ep.observations[t + 1] ?? '' },
      state: NO_GRID_STATE,
      action: -1,
      actionName: ep.actions[t],
      reward: ep.rewards[t],
      terminated: last && ep.terminated,
      truncated: last && ep.truncated,
      info: infoOf(ep.infos[t]),
    });
  }
  return { seed: ep.seed, envId: ep.envId, steps };
}

/** A short real episode of a text env for a dry run of user terms before training: reset from `seed`, then `actions` (stopping early if it ends). */
export function sampleTextEpisode(env: ToolEnv, envId: string, seed: number, actions: readonly string[]): ScoreEpisode {
  const { obs } = env.reset({ seed });
  const ep = { envId, seed, actions: [] as string[], rewards: [] as number[], infos: [] as Info[], observations: [obs.text], terminated: false, truncated: false };
  for (const a of actions) {
    const r = env.step(a);
    ep.actions.push(a);
    ep.rewards.push(r.reward);
    ep.infos.push(r.info);
    ep.observations.push(r.obs.text);
    ep.terminated = r.terminated;
    ep.truncated = r.truncated;
    if (r.terminated || r.truncated) break;
  }
  return buildTextStepRecords(ep);
}
