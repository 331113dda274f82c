/**
 * A code env as an `Env`: the host side of the contract (contract.ts). The module runs in a
 * sandbox supplied by the runtime (`CodeEnvEngine`: QuickJS, plus a `FastCodeEnvEngine` in Node,
 * src/runtime/codeEnv; vector stepping through `CodeEnvBatch`, stepMany.ts); this class
 * checks what it returns and enforces the mechanics every env shares, so a module cannot break
 * them: step before reset or after the end throws, a grid action outside the declared set throws
 * a RangeError naming the set, and an episode still running at `maxSteps` is truncated (and
 * counted in `forcedTruncations`, which checkCodeEnv reports with the line of `step`). An optional
 * `export function expert()` gives the next action of a good policy (imitation warm starts).
 */
import { CHARSET } from '../../text/codec.ts';
import { MAX_CELL_VALUE } from '../grid/objects.ts';
import { DIR_NAMES, maxViewTextLength } from '../grid/view.ts';
import { lazyGridObs } from '../grid/lazyObs.ts';
import { hasEnv, registerEnv, type EnvKwargs } from '../registry.ts';
import { box, boxPerElement, dict, discrete, text } from '../spaces.ts';
import { rewardLine } from './source.ts';
import type { Env, EnvSpec, GridFrame, GridObs, Info, ResetOptions, ResetResult, StepResult, ToolObs, TranscriptFrame, VectorObs } from '../types.ts';
import { CodeEnvError, exportLine, MAX_CODE_CHARS, parseMeta, readGridObservation, readTextObservation, readVectorObservation, vectorLayout, type CodeEnvMeta, type RawStep, type VectorLayout } from './contract.ts';

/** What a code env hands out: a grid view, a text, or a vector. */
type CodeObs = GridObs | ToolObs | VectorObs;

/** The registry id of a code env; its module is `kwargs.code`. */
export const CODE_ENV_ID = 'code/custom';

/** One instance of the module's state inside the sandbox. */
export interface CodeEnvInstance {
  reset(seed: number): RawStep;
  step(action: number | string): RawStep;
  /** The module's optional `expert()`: the next action of a good policy from the current state (null: none, or no expert). */
  expert(): unknown;
  /**
   * Check mode: the guest keeps a copy of each observation it returned and reports (in
   * `mutatedLine`) when a later call changed it.
   */
  setChecking(on: boolean): void;
  /** Check mode: the line of the call that changed an earlier observation, once; null when none did. */
  takeMutation(): { step: number; line: number | null } | null;
  /** Lines where the module read Math.random, Date.now, new Date() or performance.now since the last take. */
  takeClockLines(): number[];
  /** Present when the sandbox can step many instances of this module in one call (CodeEnvBatch). */
  readonly batch?: CodeEnvBatch;
  /** The sandbox's deadline for one call, ms (with `batch`, one call's deadline covers the whole batch). */
  readonly callTimeoutMs?: number;
  /** Present in the checking sandbox (engine.load(code, { checking: true })): what the check measures beyond calls. */
  readonly probe?: CodeEnvProbe;
  /** reset() without blocking the caller's thread (a server keeps answering meanwhile); present where the sandbox runs elsewhere (Node's V8 sandbox). */
  resetAsync?(seed: number): Promise<RawStep>;
  /** step() without blocking the caller's thread, as resetAsync. */
  stepAsync?(action: number | string): Promise<RawStep>;
  /** True once the sandbox holding this instance was stopped (a call past its deadline or its memory, possibly another instance's): its state is gone. */
  stopped?(): boolean;
}

/** What the checking sandbox lets checkCodeEnv see of one instance. */
export interface CodeEnvProbe {
  /** The module's sandbox heap now (all its instances): bytes of its objects, and its live allocations (blocks). */
  heap(): { bytes: number; blocks: number };
  /** How much each top-level binding of this instance holds (values reachable from it), by name. */
  bindingSizes(): Record<string, number>;
  /** From now on, freeze each observation as it is returned: a later write to one throws at its line. */
  setFreezing(on: boolean): void;
  /** Iterations of each loop in the last call (the loop's current run), with the loops' lines; empty when not counted. */
  loopCounts(): { line: number; count: number }[];
}

/**
 * Vector stepping: several instances of one loaded module reset or stepped in one sandbox call,
 * so the cost of crossing into the sandbox (and arming its deadline) is paid once per batch, not
 * once per env. A call's deadline covers the whole batch. Grid envs only (numeric actions).
 */
export interface CodeEnvBatch {
  resetMany(instances: readonly CodeEnvInstance[], seeds: readonly number[]): RawStep[];
  stepMany(instances: readonly CodeEnvInstance[], actions: readonly number[]): RawStep[];
}

/** A loaded module: its `env` export and a way to make instances. */
export interface CodeEnvGuest {
  meta: unknown;
  instance(): CodeEnvInstance;
}

/** The sandbox a runtime installs (synchronous: envs step inside the rollout loop). */
export interface CodeEnvEngine {
  /** Loads `code` (or reuses it, loaded before); throws a CodeEnvError naming the line. `checking`: instances carry a `probe` (checkCodeEnv). */
  load(code: string, opts?: { checking?: boolean }): CodeEnvGuest;
}

/** A faster sandbox that runs only some modules (e.g. grid envs at V8 speed): null = not this one, use the checking engine. */
export interface FastCodeEnvEngine {
  load(code: string): CodeEnvGuest | null;
}

let engine: CodeEnvEngine | null = null;
let fast: FastCodeEnvEngine | null = null;

/**
 * Installs the sandbox and registers `code/custom` (idempotent). `e` runs every module and is
 * the one checkCodeEnv uses; `fastEngine`, when given, runs the modules it accepts everywhere
 * else (training, play, serving).
 */
export function installCodeEnvEngine(e: CodeEnvEngine, fastEngine: FastCodeEnvEngine | null = null): void {
  engine = e;
  fast = fastEngine;
  if (!hasEnv(CODE_ENV_ID)) registerEnv(CODE_ENV_ID, (kwargs) => makeCodeEnv(kwargs), { code: '' }, { listed: false });
}

export function codeEnvEngineLoaded(): boolean {
  return engine !== null;
}

/**
 * The env of `kwargs.code` (the only kwarg). `id` is the spec's id: `code/custom`, or the id a
 * file was registered under (`npm run serve -- --env-file`).
 */
export function makeCodeEnv(kwargs: EnvKwargs, id = CODE_ENV_ID, opts: { checking?: boolean } = {}): CodeEnv {
  const extra = Object.keys(kwargs).filter((k) => k !== 'code');
  if (extra.length > 0) throw new Error(`${id}: unknown kwarg ${extra.map((k) => JSON.stringify(k)).join(', ')}; the only kwarg is "code" (the module's source)`);
  const code = kwargs.code;
  if (typeof code !== 'string' || code.trim() === '') throw new Error(`${id}: kwargs.code must be the env module's source (a non-empty string)`);
  if (code.length > MAX_CODE_CHARS) throw new Error(`${id}: the module has ${code.length} characters, over the ${MAX_CODE_CHARS} limit`);
  if (engine === null) throw new Error(`${id}: the code env sandbox is not loaded in this thread (await loadCodeEnvs() from src/runtime/codeEnv first)`);
  const guest = (opts.checking ? null : fast?.load(code)) ?? engine.load(code, opts.checking ? { checking: true } : undefined);
  return new CodeEnv(code, parseMeta(guest.meta, code), guest.instance(), id);
}

/** Registers `code` under its own id (listed: served, named in menus), e.g. `code/empty-room`; the code is its default kwarg. */
export function registerCodeEnv(id: string, code: string): void {
  if (!/^code\/[a-z0-9][a-z0-9._-]*$/.test(id) || id === CODE_ENV_ID) throw new Error(`code env id ${JSON.stringify(id)}: use code/<name> (lower-case letters, digits, . _ -), not ${CODE_ENV_ID}`);
  registerEnv(id, (kwargs) => makeCodeEnv(kwargs, id), { code });
}

function specOf(meta: CodeEnvMeta, id: string, layout: VectorLayout | null): EnvSpec {
  const base = { id, title: meta.title, description: meta.description, rewardRange: meta.rewardRange, maxSteps: meta.maxSteps } as const;
  if (layout !== null) {
    // Discrete actions played by the MLP's step pools, as a grid env's: hence the 'grid' family.
    return { ...base, family: 'grid', observationSpace: dict({ vector: boxPerElement(layout.shape, Array.from(layout.low), Array.from(layout.high)) }), actionSpace: discrete(meta.actions.length, meta.actions) };
  }
  if (meta.observation.kind === 'grid') {
    const v = meta.observation.view;
    return {
      ...base,
      family: 'grid',
      observationSpace: dict({ image: box([v, v, 3], 0, MAX_CELL_VALUE, 'uint8'), direction: discrete(4, DIR_NAMES), text: text(maxViewTextLength(v), CHARSET) }),
      actionSpace: discrete(meta.actions.length, meta.actions),
    };
  }
  if (meta.observation.kind !== 'text') throw new Error('unreachable: the observation kinds are grid, vector and text');
  return { ...base, family: 'tool', observationSpace: dict({ text: text(meta.observation.maxLength, CHARSET) }), actionSpace: text(200, CHARSET) };
}

const NO_CARRY = { type: 0, color: 0 };

export class CodeEnv implements Env {
  readonly spec: EnvSpec;
  /** Episodes the host had to truncate at maxSteps because step() did not. */
  forcedTruncations = 0;
  private steps = 0;
  private started = false;
  private ended = false;
  private last: CodeObs | null = null;
  /**
   * A vector env's episode so far (the first observation, then each action and the observation
   * after it), by reference: frame() writes it out as text only when asked, so training pays nothing.
   */
  private trail: { action: number; vector: Float32Array }[] = [];
  /** The resolved Box of a vector env; null for grid and text envs. */
  readonly vector: VectorLayout | null;
  private transcript: { role: 'task' | 'agent' | 'tool' | 'result'; text: string }[] = [];
  private readonly resetLine: number | null;
  private readonly stepLine: number | null;

  constructor(
    readonly code: string,
    readonly meta: CodeEnvMeta,
    readonly guest: CodeEnvInstance,
    id = CODE_ENV_ID,
  ) {
    this.vector = meta.observation.kind === 'vector' ? vectorLayout(meta.observation) : null;
    this.spec = specOf(meta, id, this.vector);
    this.resetLine = exportLine(code, 'reset');
    this.stepLine = exportLine(code, 'step');
  }

  reset(opts: ResetOptions = {}): ResetResult<CodeObs> {
    return this.finishReset(this.guest.reset(opts.seed ?? 0));
  }

  /** Checks what the module's reset() returned and starts the episode. */
  finishReset(raw: RawStep): ResetResult<CodeObs> {
    this.last = this.observation(raw.observation, 'reset', this.resetLine);
    this.steps = 0;
    this.started = true;
    this.ended = false;
    this.transcript = 'text' in this.last && !('image' in this.last) ? [{ role: 'task', text: this.last.text }] : [];
    this.trail = 'vector' in this.last ? [{ action: -1, vector: this.last.vector }] : [];
    return { obs: this.last, info: {} };
  }

  step(action: unknown): StepResult<CodeObs> {
    this.checkAction(action);
    return this.finishStep(this.guest.step(action as number | string), action);
  }

  /** Throws when `action` may not be stepped now (before reset, after the end, outside the declared set). */
  checkAction(action: unknown): void {
    if (!this.started) throw new Error(`${CODE_ENV_ID}: step() before reset(); call reset() first`);
    if (this.ended) throw new Error(`${CODE_ENV_ID}: step() after the episode ended (terminated or truncated); call reset() first`);
    const n = this.meta.actions.length;
    if (this.meta.observation.kind !== 'text') {
      if (typeof action !== 'number' || !Number.isInteger(action) || action < 0 || action >= n) {
        throw new RangeError(`${CODE_ENV_ID}: action ${String(action)} is not one of 0..${n - 1} (${this.meta.actions.join(', ')})`);
      }
    } else if (typeof action !== 'string') throw new TypeError(`${CODE_ENV_ID}: a text env's action is a string, got ${typeof action}`);
  }

  /** Checks what the module's step() returned for `action` (checked by checkAction) and applies the shared mechanics. */
  finishStep(raw: RawStep, action: unknown): StepResult<CodeObs> {
    const obs = this.observation(raw.observation, 'step', this.stepLine);
    const where = (what: string) => new CodeEnvError(`step() returned ${what}`, this.stepLine, 'contract');
    if (typeof raw.reward !== 'number') throw where(`reward ${raw.reward === undefined ? 'undefined' : typeof raw.reward}; it must be a number`);
    // A NaN or ±Infinity would poison every update it enters (trainers skip such updates): refused, at the line that sets the reward.
    if (!Number.isFinite(raw.reward)) {
      const at = `${raw.terminated === true ? (typeof raw.info === 'object' && raw.info !== null && (raw.info as Info).success === true ? 'on a success, ' : 'at the end, ') : ''}at step ${this.steps + 1} of the episode`;
      throw new CodeEnvError(`step() returned reward ${raw.reward} ${at}; a reward must be a finite number`, rewardLine(this.code) ?? this.stepLine, 'reward', false);
    }
    if (typeof raw.terminated !== 'boolean' || typeof raw.truncated !== 'boolean') throw where('terminated/truncated that are not booleans (return { observation, reward, terminated, truncated, info })');
    const info: Info = raw.info === undefined ? {} : typeof raw.info === 'object' && raw.info !== null && !Array.isArray(raw.info) ? (raw.info as Info) : (() => { throw where('an info that is not an object'); })();
    this.steps++;
    let truncated = raw.truncated;
    if (!raw.terminated && !truncated && this.steps >= this.spec.maxSteps) {
      truncated = true;
      this.forcedTruncations++;
    }
    this.ended = raw.terminated || truncated;
    this.last = obs;
    if (typeof action === 'string') {
      this.transcript.push({ role: 'agent', text: action }, { role: this.ended ? 'result' : 'tool', text: (obs as ToolObs).text });
    } else if ('vector' in obs) this.trail.push({ action: action as number, vector: obs.vector });
    return { obs, reward: raw.reward, terminated: raw.terminated, truncated, info };
  }

  renderText(): string {
    if (this.last === null) throw new Error(`${CODE_ENV_ID}: renderText() before reset()`);
    if ('vector' in this.last) return `${this.vectorText(this.last.vector)}\nstep ${this.steps}/${this.spec.maxSteps}`;
    return 'image' in this.last ? `${this.last.text}\nstep ${this.steps}/${this.spec.maxSteps}` : this.transcript.map((m) => `${m.role}: ${m.text}`).join('\n');
  }

  /** A vector observation as one line a person reads: `name = value` per element (labels when declared, else indices), 4 significant digits. */
  vectorText(v: Float32Array): string {
    const names = this.vector?.labels;
    return Array.from(v, (x, i) => `${names ? names[i] : `[${i}]`} = ${Number(x.toPrecision(4))}`).join(', ');
  }

  /** The agent's own view (a code env's full state is its module's business): grid envs draw the view with the agent at the bottom centre facing up. */
  frame(): GridFrame | TranscriptFrame {
    if (this.last === null) throw new Error(`${CODE_ENV_ID}: frame() before reset()`);
    // Text and vector envs: the transcript (a vector env's: each action and the observation after it).
    if ('vector' in this.last) {
      return { kind: 'transcript', messages: this.trail.flatMap((s, i) => [...(s.action >= 0 ? [{ role: 'agent' as const, text: this.meta.actions[s.action] }] : []), { role: i === 0 ? ('task' as const) : this.ended && i === this.trail.length - 1 ? ('result' as const) : ('tool' as const), text: this.vectorText(s.vector) }]) };
    }
    if (!('image' in this.last)) return { kind: 'transcript', messages: this.transcript.slice() };
    const v = this.meta.observation.kind === 'grid' ? this.meta.observation.view : 0;
    const visible: [number, number][] = [];
    for (let i = 0; i < v * v; i++) if (this.last.image[i * 3] !== 0) visible.push([i % v, Math.floor(i / v)]);
    return { kind: 'grid', width: v, height: v, cells: this.last.image.slice(), agent: { x: (v - 1) >> 1, y: v - 1, dir: 3, carrying: null }, visible, mission: this.meta.title };
  }

  /**
   * The module's `expert()` when it exports one (demos, the token policy's imitation warm start),
   * checked like an action; null when it has none, returns null, or the episode is over.
   */
  expertAction(): number | string | null {
    if (!this.started || this.ended) return null;
    const a = this.guest.expert();
    if (a === null) return null;
    const n = this.meta.actions.length;
    const ok = this.meta.observation.kind !== 'text' ? typeof a === 'number' && Number.isInteger(a) && a >= 0 && a < n : typeof a === 'string';
    if (!ok) throw new CodeEnvError(`expert() returned ${JSON.stringify(a)}, not an action (${this.meta.observation.kind !== 'text' ? `0..${n - 1}` : 'a string'})`, exportLine(this.code, 'expert'), 'contract');
    return a as number | string;
  }

  /** Steps taken in this episode. */
  get stepCount(): number {
    return this.steps;
  }

  private observation(o: unknown, call: 'reset' | 'step', line: number | null): CodeObs {
    const ob = this.meta.observation;
    if (ob.kind === 'vector') {
      const v = readVectorObservation(o, this.vector!);
      if (typeof v === 'string') throw new CodeEnvError(`${call}() returned a bad observation: ${v}`, line, 'contract');
      return { vector: v };
    }
    if (ob.kind === 'grid') {
      const g = readGridObservation(o, ob.view);
      if (typeof g === 'string') throw new CodeEnvError(`${call}() returned a bad observation: ${g}`, line, 'contract');
      // The text renders on first read, as the built-in grids' does (image policies never read it).
      return lazyGridObs(g.image, g.direction, ob.view, NO_CARRY.type, NO_CARRY.color);
    }
    const t = readTextObservation(o, ob.maxLength);
    if (typeof t !== 'string') throw new CodeEnvError(`${call}() returned a bad observation: ${t.problem}`, line, 'contract');
    return { text: t };
  }
}
