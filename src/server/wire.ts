/**
 * How an env's actions, observations and state look on the wire (JSON), shared by the OpenEnv
 * adapter (HTTP and WebSocket) and the verl-tool adapter.
 *
 * OpenEnv's result shape is `{observation, reward, done}`: reward is null after a reset,
 * `done` = terminated || truncated. Gymnasium's split is kept inside the observation
 * (`terminated`, `truncated`) together with the step's `info`, so a trainer can still tell a
 * true end from a time limit.
 *
 * Actions are objects, validated here into the env's own action type:
 *   grid envs  `{"action_id": 0..6}` (left, right, forward, pickup, drop, toggle, done)
 *   tool envs  `{"text": "calc(347*8062)"}` (one tool call; a malformed call is the env's
 *              business: it answers with an `error:` observation, it is not a wire error)
 * `metadata` (an object) is accepted and ignored: OpenEnv's Action base class always sends it.
 */
import type { Env, Info, ResetResult, StepResult } from '../core/envs/index.ts';
import type { Space } from '../core/envs/spaces.ts';
import { familyOf } from '../core/envs/families.ts';

/** A JSON value as it goes on the wire. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** OpenEnv's reset/step response body (and the `data` of a WebSocket observation message). */
export interface WireResult {
  observation: Record<string, Json>;
  reward: number | null;
  done: boolean;
}

/** One validation problem, shaped like FastAPI's 422 `detail` items (what OpenEnv returns). */
export interface FieldError {
  type: string;
  loc: (string | number)[];
  msg: string;
  input?: Json;
}

/** A request the server refuses: HTTP status plus FastAPI-style detail (a sentence or field errors). */
export class WireError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string | FieldError[],
    /** OpenEnv's WebSocket error code for the same problem. */
    readonly wsCode: 'INVALID_JSON' | 'UNKNOWN_TYPE' | 'VALIDATION_ERROR' | 'EXECUTION_ERROR' | 'CAPACITY_REACHED' | 'SESSION_ERROR' = 'EXECUTION_ERROR',
    /** The HTTP reply must close the connection (the rest of the request was not read). */
    readonly closeConnection = false,
  ) {
    super(typeof detail === 'string' ? detail : detail.map((d) => `${d.loc.join('.')}: ${d.msg}`).join('; '));
  }
}

export const validationError = (errors: FieldError[]): WireError => new WireError(422, errors, 'VALIDATION_ERROR');

/** Deepest nesting `toJson` copies; below it a placeholder (echoed request input can be arbitrarily deep). */
const MAX_JSON_DEPTH = 32;

/** Plain JSON copy of an env value: typed arrays become number arrays, undefined keys drop. */
export function toJson(value: unknown, depth = 0): Json {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (ArrayBuffer.isView(value)) return Array.from(value as unknown as ArrayLike<number>);
  if (depth >= MAX_JSON_DEPTH) return '...';
  if (Array.isArray(value)) return value.map((v) => toJson(v, depth + 1));
  if (typeof value === 'object') {
    const out: Record<string, Json> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) if (v !== undefined) out[k] = toJson(v, depth + 1);
    return out;
  }
  return String(value);
}

function observationDict(obs: unknown, terminated: boolean, truncated: boolean, info: Info): Record<string, Json> {
  const base = toJson(obs);
  const dict = base !== null && typeof base === 'object' && !Array.isArray(base) ? base : { value: base };
  return { ...dict, terminated, truncated, info: toJson(info) };
}

export function resetToWire(r: ResetResult<unknown>): WireResult {
  return { observation: observationDict(r.obs, false, false, r.info), reward: null, done: false };
}

export function stepToWire(r: StepResult<unknown>): WireResult {
  return { observation: observationDict(r.obs, r.terminated, r.truncated, r.info), reward: r.reward, done: r.terminated || r.truncated };
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const typeName = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

/**
 * The env action named by a wire action object, or a 422 error listing what is wrong.
 * `loc` is where the action sits in the request (`['body', 'action']` over HTTP).
 */
export function parseWireAction(env: Env, action: unknown, loc: (string | number)[]): unknown {
  if (!isPlainObject(action)) {
    throw validationError([{ type: 'dict_type', loc, msg: `Input should be a valid dictionary (an action object), got ${typeName(action)}`, input: toJson(action) }]);
  }
  const space = env.spec.actionSpace;
  const field = space.kind === 'discrete' ? 'action_id' : 'text';
  const errors: FieldError[] = [];
  for (const key of Object.keys(action)) {
    if (key !== field && key !== 'metadata') errors.push({ type: 'extra_forbidden', loc: [...loc, key], msg: `Extra inputs are not permitted: ${env.spec.id} actions have the field "${field}"`, input: toJson(action[key]) });
  }
  if ('metadata' in action && !isPlainObject(action.metadata)) errors.push({ type: 'dict_type', loc: [...loc, 'metadata'], msg: 'Input should be a valid dictionary', input: toJson(action.metadata) });
  const value = action[field];
  if (!(field in action)) {
    errors.push({ type: 'missing', loc: [...loc, field], msg: `Field required: ${field === 'action_id' ? `an integer 0..${(space as { n: number }).n - 1}` : 'the tool call as text'}` });
  } else if (space.kind === 'discrete') {
    if (typeof value !== 'number' || !Number.isInteger(value)) {
      errors.push({ type: 'int_type', loc: [...loc, field], msg: `Input should be a valid integer (${(space.labels ?? []).map((l, i) => `${i} ${l}`).join(', ')}), got ${typeName(value)}`, input: toJson(value) });
    } else if (value < 0 || value >= space.n) {
      errors.push({ type: value < 0 ? 'greater_than_equal' : 'less_than_equal', loc: [...loc, field], msg: `Input should be in 0..${space.n - 1}`, input: value });
    }
  } else if (typeof value !== 'string') {
    errors.push({ type: 'string_type', loc: [...loc, field], msg: `Input should be a valid string (one tool call), got ${typeName(value)}`, input: toJson(value) });
  }
  if (errors.length > 0) throw validationError(errors);
  return value;
}

/** The wire form of an env action (the inverse of `parseWireAction`); null stays null. */
export function actionToWire(env: Env, action: unknown): Record<string, Json> | null {
  if (action === null || action === undefined) return null;
  return env.spec.actionSpace.kind === 'discrete' ? { action_id: action as number } : { text: String(action) };
}

/** JSON Schema of one space, for `/schema`. */
export function spaceSchema(space: Space): Record<string, Json> {
  switch (space.kind) {
    case 'discrete':
      return {
        type: 'integer',
        minimum: 0,
        maximum: space.n - 1,
        ...(space.labels ? { description: space.labels.map((l, i) => `${i} ${l}`).join(', ') } : {}),
      };
    case 'box': {
      const size = space.shape.reduce((a, b) => a * b, 1);
      const item = { type: space.dtype === 'float32' ? 'number' : 'integer', minimum: space.low, maximum: space.high };
      return { type: 'array', items: item, minItems: size, maxItems: size, description: `row-major ${space.dtype} array of shape [${space.shape.join(', ')}]` };
    }
    case 'text':
      return { type: 'string', maxLength: space.maxLength };
    case 'dict': {
      const properties: Record<string, Json> = {};
      for (const [k, s] of Object.entries(space.spaces)) properties[k] = spaceSchema(s);
      return { type: 'object', properties, required: Object.keys(space.spaces), additionalProperties: false };
    }
  }
}

/** OpenEnv's `/schema` body: action, observation and state JSON schemas. */
export function envSchemas(env: Env): { action: Record<string, Json>; observation: Record<string, Json>; state: Record<string, Json> } {
  const { spec } = env;
  const metadata = { type: 'object', description: 'ignored; OpenEnv clients send it' };
  const action: Record<string, Json> =
    spec.actionSpace.kind === 'discrete'
      ? {
          title: 'GridAction',
          type: 'object',
          properties: { action_id: spaceSchema(spec.actionSpace), metadata },
          required: ['action_id'],
          additionalProperties: false,
        }
      : {
          title: 'ToolAction',
          type: 'object',
          properties: {
            text: { type: 'string', description: `one tool call, e.g. as the task text lists them; over ${spec.actionSpace.kind === 'text' ? spec.actionSpace.maxLength : '?'} characters or unparseable is malformed (an error observation, the turn is spent)` },
            metadata,
          },
          required: ['text'],
          additionalProperties: false,
        };
  const obs = spaceSchema(spec.observationSpace) as { properties?: Record<string, Json>; required?: Json[] };
  const observation = {
    title: familyOf(spec).wire.observationTitle,
    type: 'object',
    properties: {
      ...(obs.properties ?? {}),
      terminated: { type: 'boolean', description: 'true end of the episode (no bootstrapping past it)' },
      truncated: { type: 'boolean', description: `time limit reached (${spec.maxSteps} ${familyOf(spec).stepNoun}s)` },
      info: { type: 'object', description: 'per-step facts: success, malformed, toolCall, toolFailed, latencyMs (simulated ms), progress, turn, ...' },
    },
    required: [...(obs.required ?? []), 'terminated', 'truncated', 'info'],
  };
  const state = {
    title: 'State',
    type: 'object',
    properties: {
      episode_id: { type: ['string', 'null'] },
      step_count: { type: 'integer', minimum: 0 },
      env_id: { type: 'string' },
      seed: { type: ['integer', 'null'], description: 'the seed of the current episode (drawn by the server when reset had none)' },
      done: { type: 'boolean' },
      kwargs: { type: 'object', description: 'env kwargs this session was made with' },
      render: { type: 'string', description: 'the full state as text (may show what the agent cannot see)' },
      expert_action: { type: ['object', 'null'], description: 'the expert solver\'s next action in wire form (null when the episode is over or none exists): for demos, imitation and tests' },
    },
  };
  return { action, observation, state };
}
