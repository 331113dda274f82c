/**
 * Code envs: an environment written by a person as a plain JavaScript module (ARCHITECTURE.md,
 * 'Code envs'). The module exports
 *
 *   export const env = { title, description, actions, observation, maxSteps, rewardRange };
 *   export function reset(seed) { return observation; }
 *   export function step(action) { return { observation, reward, terminated, truncated, info }; }
 *
 * `observation` in `env` is `{ kind: 'grid', view }` (the observation is `{ image, direction }`:
 * view×view×3 cell codes as in grid/objects.ts and the heading 0..3, so the MLP reads it with the
 * built-in grid features), `{ kind: 'text', maxLength }` (the observation is a string and an
 * action is the text the token policy writes; `actions` then names the calls it may make), or
 * `{ kind: 'vector', shape, low, high, labels }` (Gymnasium's Box of floats: the observation is a
 * flat array of prod(shape) finite numbers, row-major, each within [low, high]; the MLP reads it
 * as is, and an action is an index into `actions`, as for a grid env).
 * This file is the host side's reading of what the module hands back; it never runs the code.
 */
import { z } from 'zod';
import { MAX_CELL_VALUE } from '../grid/objects.ts';
import { MAX_EPISODE_STEPS, MAX_VIEW_SIZE } from '../grid/world.ts';

/** Largest module a code env may be, characters (it travels in configs and links). */
export const MAX_CODE_CHARS = 64 * 1024;
/**
 * The environment variable that sets the code env sandboxes' deadline for one call, ms, in Node
 * (`npm run train`, `serve`, `check-env`; src/runtime/codeEnv/node.ts reads it; default 1000).
 * Headless training steps a batch of envs in one call of the V8 sandbox, so the batch shares it.
 */
export const CALL_TIMEOUT_ENV = 'CODE_ENV_CALL_TIMEOUT_MS';
/** Most discrete actions a grid code env may declare. */
export const MAX_ACTIONS = 32;
/** Most floats a vector observation may have (prod(shape)): the MLP's input width. */
export const MAX_VECTOR_SIZE = 1024;

/**
 * One Box bound: a number for every element, or one number per element. `null` is an open side
 * (−∞ for low, +∞ for high): `-Infinity`/`Infinity` in the module cross the sandbox as JSON, which
 * writes them as null. Omitted: unbounded, as Gymnasium's Box(-inf, inf).
 */
const boundSchema = z.union([z.number().nullable(), z.array(z.number().nullable()).min(1).max(MAX_VECTOR_SIZE)]).optional();

const vectorSchema = z
  .strictObject({
    kind: z.literal('vector'),
    /** Box shape, e.g. [4] for CartPole; the observation is prod(shape) numbers, flat and row-major. */
    shape: z.array(z.int().min(1)).min(1).max(3),
    /** Lower bound(s), inclusive (see boundSchema). */
    low: boundSchema,
    /** Upper bound(s), inclusive. */
    high: boundSchema,
    /** Optional names of the elements (1-D shapes), shown in the play view, e.g. ['cart position', …]. */
    labels: z.array(z.string().min(1).max(40)).optional(),
  })
  .superRefine((v, ctx) => {
    const n = v.shape.reduce((a, b) => a * b, 1);
    if (n > MAX_VECTOR_SIZE) ctx.addIssue({ code: 'custom', path: ['shape'], message: `shape [${v.shape}] has ${n} elements, over the ${MAX_VECTOR_SIZE} limit` });
    for (const side of ['low', 'high'] as const) {
      const b = v[side];
      if (Array.isArray(b) && b.length !== n) ctx.addIssue({ code: 'custom', path: [side], message: `${side} has ${b.length} numbers; shape [${v.shape}] needs ${n} (or one number for all)` });
    }
    if (v.labels !== undefined && v.labels.length !== n) ctx.addIssue({ code: 'custom', path: ['labels'], message: `labels has ${v.labels.length} names; shape [${v.shape}] has ${n} elements` });
    const lo = boundsOf(v.low, n, -Infinity), hi = boundsOf(v.high, n, Infinity);
    for (let i = 0; i < n && lo.length === n && hi.length === n; i++) {
      if (lo[i] > hi[i]) {
        ctx.addIssue({ code: 'custom', path: ['low'], message: `low[${i}] = ${lo[i]} is above high[${i}] = ${hi[i]}` });
        break;
      }
    }
  });

/** A bound as one number per element (`open` for null or omitted). */
function boundsOf(b: number | null | (number | null)[] | undefined, n: number, open: number): number[] {
  if (Array.isArray(b)) return b.map((x) => x ?? open);
  return new Array<number>(n).fill(b ?? open);
}

/** A vector observation space, resolved: size and per-element bounds (±Infinity where open). */
export interface VectorLayout {
  shape: readonly number[];
  size: number;
  low: Float64Array;
  high: Float64Array;
  labels: readonly string[] | null;
}

/** The resolved layout of a `{ kind: 'vector' }` observation declaration. */
export function vectorLayout(o: z.infer<typeof vectorSchema>): VectorLayout {
  const size = o.shape.reduce((a, b) => a * b, 1);
  return { shape: o.shape, size, low: Float64Array.from(boundsOf(o.low, size, -Infinity)), high: Float64Array.from(boundsOf(o.high, size, Infinity)), labels: o.labels ?? null };
}

const metaSchema = z.strictObject({
  /** Short title for menus. */
  title: z.string().min(1).max(80),
  /** One paragraph: the task and what success means. */
  description: z.string().min(1).max(2000),
  /** Action names: a grid env's action i is `actions[i]`; a text env's are the calls it understands (documentation). */
  actions: z.array(z.string().min(1).max(40)).min(1).max(MAX_ACTIONS),
  observation: z.discriminatedUnion('kind', [
    z.strictObject({ kind: z.literal('grid'), view: z.int().min(3).max(MAX_VIEW_SIZE).refine((v) => v % 2 === 1, 'view must be odd') }),
    z.strictObject({ kind: z.literal('text'), maxLength: z.int().min(1).max(4000).default(240) }),
    vectorSchema,
  ]),
  /** Time limit: the episode must be truncated at this step (terminated earlier when it ends for real). */
  maxSteps: z.int().min(1).max(MAX_EPISODE_STEPS),
  /** Inclusive bounds on one step's reward. */
  rewardRange: z.tuple([z.number(), z.number()]).refine(([lo, hi]) => lo <= hi, 'rewardRange must be [low, high] with low <= high'),
});

export type CodeEnvMeta = z.infer<typeof metaSchema>;

/** A problem with a code env, at a line of its source when one is known. */
export class CodeEnvError extends Error {
  constructor(
    message: string,
    /** 1-based line of the user's module, or null. */
    readonly line: number | null,
    /** Which rule: 'load', 'contract', 'exception', 'timeout', 'memory', 'reward'; 'stopped': the call never ran, its sandbox was stopped before (by an earlier call). */
    readonly rule: string,
    /**
     * The line is only near the fault: a loop is interrupted wherever it was (QuickJS files an
     * empty loop's back jump under the statement before it), so a timeout's stack line is near,
     * unless the checking sandbox's loop counters named the loop.
     */
    readonly near = rule === 'timeout',
  ) {
    super(line === null ? message : `${message} (${near ? 'near line' : 'line'} ${line})`);
    this.name = 'CodeEnvError';
  }
}

/** The line of `export … name` in the source (1-based), or null. */
export function exportLine(code: string, name: string): number | null {
  const re = new RegExp(`^\\s*export\\s+(?:async\\s+)?(?:function\\*?|const|let|var|class)\\s+${name}\\b`);
  const lines = code.split('\n');
  for (let i = 0; i < lines.length; i++) if (re.test(lines[i])) return i + 1;
  return null;
}

/** Reads the module's `env` export, or throws a CodeEnvError naming the field and the line. */
export function parseMeta(value: unknown, code: string): CodeEnvMeta {
  const line = exportLine(code, 'env');
  if (value === undefined) throw new CodeEnvError("the module exports no `env` (export const env = { title, description, actions, observation, maxSteps, rewardRange })", null, 'contract');
  const r = metaSchema.safeParse(value);
  if (r.success) return r.data;
  const first = r.error.issues.map((i) => `env.${i.path.join('.')}: ${i.message}`).join('; ');
  throw new CodeEnvError(`export env: ${first}`, line, 'contract');
}

/** What one guest call hands back (parsed from the guest's JSON). */
export interface RawStep {
  observation: unknown;
  reward?: unknown;
  terminated?: unknown;
  truncated?: unknown;
  info?: unknown;
}

/** A grid observation as the guest returned it, checked; or a reason it is not one. */
export function readGridObservation(o: unknown, view: number): { image: Uint8Array; direction: number } | string {
  if (typeof o !== 'object' || o === null) return `the observation must be { image, direction }, got ${describe(o)}`;
  const { image, direction } = o as { image?: unknown; direction?: unknown };
  const n = view * view * 3;
  if (image instanceof Uint8Array) {
    // A batching sandbox hands the cells over as fresh bytes it no longer holds, already checked; checked again (cheap).
    if (image.length !== n) return `observation.image has ${image.length} numbers; a view of ${view} needs ${n} (view × view × 3)`;
    for (let i = 0; i < n; i++) if (image[i] > MAX_CELL_VALUE) return `observation.image[${i}] is ${image[i]}; cell codes are integers 0..${MAX_CELL_VALUE}`;
    if (typeof direction !== 'number' || !Number.isInteger(direction) || direction < 0 || direction > 3) return `observation.direction must be 0..3 (east, south, west, north), got ${describe(direction)}`;
    return { image, direction };
  }
  if (!Array.isArray(image)) return `observation.image must be an array of ${n} numbers (view ${view} × ${view} × 3), got ${describe(image)}`;
  if (image.length !== n) return `observation.image has ${image.length} numbers; a view of ${view} needs ${n} (view × view × 3)`;
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const v = image[i] as unknown;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > MAX_CELL_VALUE) return `observation.image[${i}] is ${describe(v)}; cell codes are integers 0..${MAX_CELL_VALUE}`;
    out[i] = v;
  }
  if (typeof direction !== 'number' || !Number.isInteger(direction) || direction < 0 || direction > 3) return `observation.direction must be 0..3 (east, south, west, north), got ${describe(direction)}`;
  return { image: out, direction };
}

/**
 * A vector observation as the guest returned it, checked: a flat array (or typed array) of
 * layout.size finite numbers within the declared bounds; or a reason it is not one.
 */
export function readVectorObservation(o: unknown, layout: VectorLayout): Float32Array | string {
  const n = layout.size;
  const shape = `shape [${layout.shape}]`;
  if (!Array.isArray(o) && !ArrayBuffer.isView(o)) return `the observation must be an array of ${n} numbers (${shape}), got ${describe(o)}`;
  const arr = o as ArrayLike<unknown>;
  if (arr.length !== n) return `the observation has ${arr.length} numbers; ${shape} needs ${n} (flat, row-major)`;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const v = arr[i];
    // JSON writes NaN and ±Infinity as null on the way out of the sandbox.
    if (typeof v !== 'number' || !Number.isFinite(v)) return `observation[${i}]${labelOf(layout, i)} is ${v === null ? 'not a finite number (NaN or Infinity)' : describe(v)}; every element must be a finite number`;
    if (v < layout.low[i] || v > layout.high[i]) return `observation[${i}]${labelOf(layout, i)} = ${v} is outside [${layout.low[i]}, ${layout.high[i]}] (env.observation.low/high)`;
    out[i] = v;
  }
  return out;
}

const labelOf = (layout: VectorLayout, i: number): string => (layout.labels ? ` (${layout.labels[i]})` : '');

/** A text observation as the guest returned it, checked. */
export function readTextObservation(o: unknown, maxLength: number): string | { problem: string } {
  if (typeof o !== 'string') return { problem: `the observation must be a string, got ${describe(o)}` };
  if (o.length > maxLength) return { problem: `the observation has ${o.length} characters, over env.observation.maxLength ${maxLength}` };
  return o;
}

/** A short description of a value for messages. */
export function describe(v: unknown): string {
  if (v === undefined) return 'undefined';
  if (v === null) return 'null';
  if (typeof v === 'number') return String(v);
  if (typeof v === 'string') return JSON.stringify(v.length > 24 ? `${v.slice(0, 24)}…` : v);
  if (Array.isArray(v)) return `an array of ${v.length}`;
  return typeof v === 'object' ? 'an object' : typeof v;
}
