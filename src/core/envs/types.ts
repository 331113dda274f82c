/**
 * The environment contract (Gymnasium semantics; ARCHITECTURE.md, 'The environment contract').
 *
 * - `reset({seed})` is the only way randomness enters: the same seed gives the same episode.
 * - `terminated` is a true end (success, death, final answer): no bootstrapping past it.
 * - `truncated` is the time limit (`spec.maxSteps`): a learner may bootstrap from V(s).
 * - Observations returned to the caller are owned by the caller: the env never mutates them later.
 * - Stepping a finished episode is a programming error and throws; bad *agent* input
 *   (a malformed tool call) never throws, it gets an error observation.
 */
import type { EnvFamilyName } from './families.ts';
import type { Space } from './spaces.ts';
import type { ActionGrammar } from '../text/grammar.ts';

/** Free-form per-step facts. Known keys are typed; envs may add more. */
export interface Info {
  /** Set on the final step: did the agent solve the task? */
  success?: boolean;
  /** Tool envs: was the agent's action text malformed (unparseable or unknown tool)? */
  malformed?: boolean;
  /** Tool envs: did this step call a tool? */
  toolCall?: string;
  /** Tool envs: did the tool fail (flaky service)? */
  toolFailed?: boolean;
  /** Tool envs: this call succeeded right after a failed one (the agent recovered from an error observation). */
  recovered?: boolean;
  /** Simulated wall time this step took in the world, in milliseconds (tool latency). */
  latencyMs?: number;
  /** Subgoals reached for the first time on this step (e.g. the tool showed the answer); the `progress` shaping term sums it. */
  progress?: number;
  [key: string]: unknown;
}

export interface ResetOptions {
  seed?: number;
  options?: Record<string, unknown>;
}

export interface ResetResult<O> {
  obs: O;
  info: Info;
}

export interface StepResult<O> {
  obs: O;
  reward: number;
  terminated: boolean;
  truncated: boolean;
  info: Info;
}

/** Static facts about an env: what a person reads and what a learner sizes itself by. */
export interface EnvSpec {
  /** Registry id, e.g. `grid/door-key-6x6`. */
  id: string;
  /** Short title for menus. */
  title: string;
  /** One paragraph: the task, what makes it hard, what success means. */
  description: string;
  /** Its family (envs/families.ts): what it observes and does, which policies fit it, how it is shown. */
  family: EnvFamilyName;
  observationSpace: Space;
  actionSpace: Space;
  /** Inclusive bounds on any single step's reward. */
  rewardRange: readonly [number, number];
  /** Time limit: steps (grid) or turns (tool) before `truncated`. */
  maxSteps: number;
  /**
   * Multi-agent envs only: the agents' names, in turn order (env step t is taken by agent
   * t mod n; `info.agent` says which). Absent for the usual one-agent env.
   */
  agents?: readonly string[];
  /**
   * Multi-agent grid envs: each agent's colour id (grid/objects.ts COLOR). The acting agent's own
   * view cell is an `agent` object in its colour, which is how a policy tells whose turn it is.
   */
  agentColors?: readonly number[];
}

/** A picture of the full state for the UI (not an observation: it may show what the agent cannot see). */
export type Frame = GridFrame | TranscriptFrame;

export interface GridFrame {
  kind: 'grid';
  width: number;
  height: number;
  /** Row-major, 3 bytes per cell: object type, colour, state (see grid/objects.ts). */
  cells: Uint8Array;
  agent: { x: number; y: number; dir: number; carrying: { type: number; color: number } | null };
  /** Cells inside the agent's view that it can actually see (walls block sight). */
  visible: readonly (readonly [number, number])[];
  /** Mission text, e.g. "get to the green goal square". */
  mission: string;
  /**
   * Multi-agent grids: every agent (the acting one included, `acting: true`), drawn in its
   * colour and labelled by name. `agent` above is the acting agent. Absent for one agent.
   */
  agents?: readonly GridFrameAgent[];
}

export interface GridFrameAgent {
  name: string;
  x: number;
  y: number;
  dir: number;
  /** Colour id (grid/objects.ts COLOR). */
  color: number;
  /** Whether this agent takes the next step (none once the episode is over). */
  acting: boolean;
}

export interface TranscriptMessage {
  role: 'task' | 'agent' | 'tool' | 'error' | 'result';
  text: string;
}

export interface TranscriptFrame {
  kind: 'transcript';
  messages: readonly TranscriptMessage[];
}

export interface Env<O = unknown, A = unknown> {
  readonly spec: EnvSpec;
  reset(opts?: ResetOptions): ResetResult<O>;
  step(action: A): StepResult<O>;
  /** The full current state as text (what `renderText` shows a person, not only the agent). */
  renderText(): string;
  /** The full current state for drawing. */
  frame(): Frame;
  /**
   * The expert's next action from the current full state (shortest solution), or null when
   * the episode is over or no solution exists.
   */
  expertAction(): A | null;
}

/** Grid observation: egocentric view plus heading, and the same view as text. */
export interface GridObs {
  /** view×view×3 bytes: object, colour, state per cell; agent at bottom centre facing up. */
  image: Uint8Array;
  /** Absolute heading: 0 east, 1 south, 2 west, 3 north. */
  direction: number;
  /** Text rendering of the egocentric view, in the shared vocabulary. */
  text: string;
}

/**
 * Vector observation (a Box of floats, Gymnasium's): a code env that declares
 * `observation: { kind: 'vector', shape }` hands these out. Flat and row-major; the MLP reads it as is.
 * Such envs are in the 'grid' family (discrete actions, stepped by the MLP's step pools); the
 * observation space (a Box under `vector`) says what they observe.
 */
export interface VectorObs {
  /** prod(shape) finite floats. */
  vector: Float32Array;
}

/** An observation the MLP step pools play: a grid view or a vector. */
export type StepObs = GridObs | VectorObs;

/** Tool observation: the text the env shows the agent this turn. */
export interface ToolObs {
  text: string;
}

export type GridEnv = Env<GridObs, number>;
/**
 * A text env. `actionGrammar`, where an env offers it, describes the actions it accepts as
 * well-formed at its current state (text/grammar.ts): constrained decoding samples only those.
 * Called after reset and after each step; its result holds until the next step.
 */
export interface ToolEnv extends Env<ToolObs, string> {
  actionGrammar?(): ActionGrammar;
}
