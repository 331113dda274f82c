/**
 * Sessions: one env instance each, its own seed, its own episode. An OpenEnv WebSocket
 * connection, an HTTP session id and a verl-tool trajectory id each own one session.
 *
 * Everything a session does goes through `run`, a per-session queue: two requests for the same
 * session never interleave (a step waiting out its simulated tool latency holds the queue), while
 * different sessions proceed independently.
 */
import { randomUUID } from 'node:crypto';
import { makeEnv, type Env, type EnvKwargs } from '../core/envs/index.ts';
import { CodeEnv, CodeEnvError } from '../core/envs/code/index.ts';
import type { ResetResult, StepResult } from '../core/envs/types.ts';
import type { Clock } from '../core/envs/clock.ts';
import { WireError, actionToWire, parseWireAction, resetToWire, stepToWire, toJson, type FieldError, type Json, type WireResult } from './wire.ts';

/** How a step's simulated tool latency (`info.latencyMs`) is served. */
export type LatencyMode = 'real' | 'skip';

export class Session {
  env: Env | null = null;
  kwargs: EnvKwargs = {};
  seed: number | null = null;
  episodeId: string | null = null;
  stepCount = 0;
  started = false;
  done = false;
  lastActivity: number;
  closed = false;
  /**
   * Why this session's env was stopped (a call of its own ran past its deadline or memory), or
   * null. Its episode is gone: steps are refused until a reset, which builds the env afresh.
   */
  stopped: string | null = null;
  /**
   * A code env's episode so far (the actions since the reset, and the last answer's JSON): when
   * another session's call stops the sandbox they share, this session's episode is replayed in a
   * fresh one (code envs are checked to be deterministic) and goes on untouched.
   */
  actions: unknown[] = [];
  lastWire = '';
  /** Called when the store closes this session (idle timeout, shutdown): e.g. hang up its socket. */
  onClose: (() => void) | null = null;
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    readonly key: string,
    readonly envId: string,
    now: number,
    /** The client (remote address) that opened it: what the per-client quota counts. */
    readonly owner: string = '',
  ) {
    this.lastActivity = now;
  }

  /** Runs `fn` after everything queued before it on this session; errors reach only this caller. */
  run<T>(fn: () => T | Promise<T>): Promise<T> {
    const next = this.chain.then(fn, fn);
    this.chain = next.catch(() => undefined);
    return next;
  }
}

export interface SessionStoreOptions {
  /** Most sessions alive at once, over all envs and protocols; past it new ones are refused. */
  maxSessions: number;
  /**
   * Most sessions one client (remote address) may hold at once, so that one client (a reset storm)
   * cannot take every place for the idle timeout; default `defaultPerClient(maxSessions)`.
   */
  maxPerClient?: number;
  /** A session untouched this long (ms) is closed; 0 = never. */
  idleTimeoutMs: number;
  /** Milliseconds, for idle bookkeeping. */
  now: () => number;
}

/** Default per-client quota: three quarters of all places (rounded up), so other clients find some. */
export function defaultPerClient(maxSessions: number): number {
  return Math.max(1, Math.ceil((maxSessions * 3) / 4));
}

/** A remote address as the quota counts it (an IPv4 client of a dual-stack listener is `::ffff:a.b.c.d`). */
export function clientOf(address: string | undefined): string {
  if (!address) return 'unknown';
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}

export class SessionStore {
  private readonly sessions = new Map<string, Session>();
  /** Live sessions per owner. */
  private readonly perClient = new Map<string, number>();
  private reaper: ReturnType<typeof setInterval> | null = null;
  readonly maxPerClient: number;

  constructor(readonly options: SessionStoreOptions) {
    this.maxPerClient = options.maxPerClient ?? defaultPerClient(options.maxSessions);
    if (options.idleTimeoutMs > 0) {
      // Check a few times per timeout period, at most every 10 s; unref so it never keeps the process alive.
      this.reaper = setInterval(() => this.reap(), Math.min(10_000, Math.max(50, options.idleTimeoutMs / 4)));
      this.reaper.unref();
    }
  }

  get size(): number {
    return this.sessions.size;
  }

  /** Keys of the live sessions (`http:<env>:<id>`, `ws:<env>:<n>`, `verl:<env>:<trajectory id>`). */
  keys(): string[] {
    return [...this.sessions.keys()];
  }

  get(key: string): Session | undefined {
    const s = this.sessions.get(key);
    if (s) s.lastActivity = this.options.now();
    return s;
  }

  /** Sessions `owner` holds now. */
  heldBy(owner: string): number {
    return this.perClient.get(owner) ?? 0;
  }

  /**
   * A new session under `key` for client `owner`; throws a 429 WireError when the store is full
   * or the client holds its quota.
   */
  create(key: string, envId: string, owner = ''): Session {
    if (this.sessions.has(key)) throw new Error(`session ${key} already exists`);
    if (this.sessions.size >= this.options.maxSessions) {
      throw new WireError(429, `server at capacity: ${this.sessions.size} of ${this.options.maxSessions} sessions in use; close one (or wait for idle ones to time out) and retry`, 'CAPACITY_REACHED');
    }
    const held = this.heldBy(owner);
    if (held >= this.maxPerClient) {
      throw new WireError(429, `client ${owner || '(unknown)'} holds ${held} sessions, its quota (of ${this.options.maxSessions} on this server); close some (POST /close, a finished trajectory, a closed WebSocket) or wait for idle ones to time out, and retry`, 'CAPACITY_REACHED');
    }
    const s = new Session(key, envId, this.options.now(), owner);
    this.sessions.set(key, s);
    this.perClient.set(owner, held + 1);
    return s;
  }

  getOrCreate(key: string, envId: string, owner = ''): Session {
    return this.get(key) ?? this.create(key, envId, owner);
  }

  delete(key: string): boolean {
    const s = this.sessions.get(key);
    if (!s) return false;
    this.sessions.delete(key);
    const held = this.heldBy(s.owner) - 1;
    if (held > 0) this.perClient.set(s.owner, held);
    else this.perClient.delete(s.owner);
    s.closed = true;
    s.env = null;
    s.onClose?.();
    return true;
  }

  /** Closes sessions idle longer than the timeout; returns how many. */
  reap(): number {
    const cutoff = this.options.now() - this.options.idleTimeoutMs;
    let n = 0;
    for (const [key, s] of this.sessions) {
      if (s.lastActivity < cutoff) {
        this.delete(key);
        n++;
      }
    }
    return n;
  }

  closeAll(): void {
    if (this.reaper) clearInterval(this.reaper);
    this.reaper = null;
    for (const key of [...this.sessions.keys()]) this.delete(key);
  }
}

/** What a reset asks for, already checked for types. */
export interface ResetRequest {
  seed?: number;
  episodeId?: string;
  /** Env kwargs; when non-empty the session's env is rebuilt with them. */
  kwargs: EnvKwargs;
}

const MAX_SEED = 2 ** 32 - 1;

/** Keys that reach into an object's prototype (JSON.parse makes `__proto__` an ordinary own key): never an env kwarg. */
const PROTOTYPE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * Env kwargs as a client sent them, checked the same way wherever they come in (a reset body's
 * extra fields, a WebSocket reset's data, verl-tool's `extra_fields[i].kwargs`): a prototype key
 * is a field error under `loc` here; the env's own rules (known names, types, ranges) apply when
 * the env is made (`resetSession`, a 422 "bad env kwargs").
 */
export function readEnvKwargs(entries: Iterable<[string, unknown]>, loc: (string | number)[]): { kwargs: EnvKwargs; errors: FieldError[] } {
  const kwargs: EnvKwargs = {};
  const errors: FieldError[] = [];
  for (const [key, value] of entries) {
    if (PROTOTYPE_KEYS.has(key)) errors.push({ type: 'extra_forbidden', loc: [...loc, key], msg: `"${key}" is not an env kwarg (the name reaches into objects' prototypes)`, input: toJson(value) });
    else kwargs[key] = value as EnvKwargs[string];
  }
  return { kwargs, errors };
}

/**
 * Splits an OpenEnv reset body into seed, episode id and env kwargs (every other key), with
 * FastAPI-style field errors. `reserved` keys (e.g. session_id) are the caller's and skipped.
 */
export function readResetBody(body: unknown, loc: (string | number)[], reserved: readonly string[] = []): ResetRequest {
  if (body === undefined || body === null) return { kwargs: {} };
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw new WireError(422, [{ type: 'model_attributes_type', loc, msg: 'Input should be a valid dictionary (the reset options: seed, episode_id, env kwargs)', input: toJson(body) }], 'VALIDATION_ERROR');
  }
  const rec = body as Record<string, unknown>;
  const out: ResetRequest = { kwargs: {} };
  const errors: FieldError[] = [];
  const rest: [string, unknown][] = [];
  for (const [key, value] of Object.entries(rec)) {
    if (reserved.includes(key)) continue;
    if (key === 'seed') {
      if (value === null || value === undefined) continue;
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_SEED) {
        errors.push({ type: 'int_type', loc: [...loc, 'seed'], msg: `seed must be an integer in 0..${MAX_SEED}`, input: toJson(value) });
      } else out.seed = value;
    } else if (key === 'episode_id') {
      if (value === null || value === undefined) continue;
      if (typeof value !== 'string' || value.length > 255) errors.push({ type: 'string_type', loc: [...loc, 'episode_id'], msg: 'episode_id must be a string of at most 255 characters', input: toJson(value) });
      else out.episodeId = value;
    } else rest.push([key, value]);
  }
  const kw = readEnvKwargs(rest, loc);
  out.kwargs = kw.kwargs;
  errors.push(...kw.errors);
  if (errors.length > 0) throw new WireError(422, errors, 'VALIDATION_ERROR');
  return out;
}

export interface EpisodeOptions {
  latency: LatencyMode;
  /** Waits out simulated tool latency when `latency` is 'real'. */
  clock: Clock;
  /** Longest real wait for one step, ms (the long tail can draw tens of seconds); `info.latencyMs` still reports the drawn value. */
  latencyCapMs: number;
  /** Seed for a reset that names none (so every session still plays its own episode). */
  nextSeed: () => number;
}

/** The sandbox instance of a code env (null for built-in envs). */
const guestOf = (env: Env | null) => (env instanceof CodeEnv ? env.guest : null);

/** True when the env's sandbox was stopped (by any session's call): its state is gone. */
const sandboxStopped = (env: Env | null): boolean => guestOf(env)?.stopped?.() === true;

/** reset() that leaves the server free while the sandbox works, where the sandbox can (Node's V8 sandbox). */
async function envReset(env: Env, seed: number): Promise<ResetResult<unknown>> {
  const g = guestOf(env);
  if (g?.resetAsync) return (env as CodeEnv).finishReset(await g.resetAsync(seed));
  return env.reset({ seed });
}

/** step(), as envReset. */
async function envStep(env: Env, action: unknown): Promise<StepResult<unknown>> {
  const g = guestOf(env);
  if (g?.stepAsync) {
    const c = env as CodeEnv;
    c.checkAction(action);
    return c.finishStep(await g.stepAsync(action as number | string), action);
  }
  return env.step(action);
}

/**
 * A failed env call: when the env's sandbox stopped it (past its deadline, out of memory, its
 * process ended) this session's episode is gone, and the session says so until its next reset;
 * other errors pass through.
 */
function envFailure(s: Session, e: unknown, what: string): unknown {
  if (!(e instanceof CodeEnvError) || !(e.rule === 'timeout' || e.rule === 'memory' || e.rule === 'stopped' || sandboxStopped(s.env))) return e;
  s.stopped = e.message;
  s.done = true;
  return new WireError(500, `${what} failed in the env: ${e.message}; this session's episode is over: reset to start a new one (other sessions go on)`);
}

/**
 * A code env whose sandbox another session's call stopped: replays this session's episode (its
 * seed, then its actions) in a fresh sandbox, so it goes on as if nothing happened. A replay that
 * ends elsewhere than the episode did (a module that is not deterministic) ends the episode instead.
 */
async function revive(s: Session): Promise<void> {
  if (!s.env || !s.started || !sandboxStopped(s.env)) return;
  const n = s.actions.length;
  try {
    const env = makeEnv(s.envId, s.kwargs);
    let wire = JSON.stringify(resetToWire(await envReset(env, s.seed ?? 0)));
    for (const a of s.actions) wire = JSON.stringify(stepToWire(await envStep(env, a)));
    if (wire !== s.lastWire) {
      s.stopped = `its sandbox was restarted (another session's call stopped it) and replaying its episode (seed ${s.seed}, ${n} actions) in a fresh one ended elsewhere: the module is not deterministic`;
      s.done = true;
      throw new WireError(409, `this session's episode is lost: ${s.stopped}; reset to start a new one`);
    }
    s.env = env;
  } catch (e) {
    if (e instanceof WireError) throw e;
    throw envFailure(s, e, `replaying this session's episode (seed ${s.seed}, ${n} actions) after its sandbox was restarted`);
  }
}

/**
 * Starts (or restarts) the session's episode; builds its env on first use, when kwargs are given,
 * and when its sandbox was stopped (a runaway call of its own or of another session).
 */
export async function resetSession(s: Session, req: ResetRequest, opts: EpisodeOptions): Promise<WireResult> {
  const fresh = Object.keys(req.kwargs).length > 0;
  if (!s.env || fresh || s.stopped !== null || sandboxStopped(s.env)) {
    const kwargs = fresh || !s.env ? req.kwargs : s.kwargs;
    try {
      s.env = makeEnv(s.envId, kwargs);
      s.kwargs = { ...kwargs };
    } catch (e) {
      throw new WireError(422, `bad env kwargs: ${(e as Error).message}`, 'VALIDATION_ERROR');
    }
    s.stopped = null;
  }
  const seed = req.seed ?? opts.nextSeed();
  let out: WireResult;
  for (let attempt = 0; ; attempt++) {
    try {
      out = resetToWire(await envReset(s.env, seed));
      break;
    } catch (e) {
      // Another session's call stopped the sandbox while this reset waited for it: once more in a fresh one.
      if (attempt === 0 && e instanceof CodeEnvError && e.rule === 'stopped') {
        s.env = makeEnv(s.envId, s.kwargs);
        continue;
      }
      s.started = false;
      throw envFailure(s, e, 'reset');
    }
  }
  s.seed = seed;
  s.episodeId = req.episodeId ?? randomUUID();
  s.stepCount = 0;
  s.started = true;
  s.done = false;
  s.actions = [];
  if (guestOf(s.env)?.stopped) s.lastWire = JSON.stringify(out);
  return out;
}

/** One step of the session's episode: 409 before a reset or after the end, 422 for a bad action. */
export async function stepSession(s: Session, wireAction: unknown, loc: (string | number)[], opts: EpisodeOptions): Promise<WireResult> {
  if (s.stopped !== null) throw new WireError(409, `this session's episode is over: ${s.stopped}; reset to start a new one`);
  if (!s.env || !s.started) throw new WireError(409, `no episode in progress on ${s.envId}: reset first`);
  if (s.done) throw new WireError(409, `episode ${s.episodeId} (seed ${s.seed}) already ended after ${s.stepCount} steps: reset to start another`);
  const action = parseWireAction(s.env, wireAction, loc);
  let r: StepResult<unknown>;
  for (let attempt = 0; ; attempt++) {
    await revive(s);
    try {
      r = await envStep(s.env, action);
      break;
    } catch (e) {
      // Another session's call stopped the sandbox while this step waited for it: revive and step again.
      if (attempt === 0 && e instanceof CodeEnvError && e.rule === 'stopped') continue;
      throw envFailure(s, e, 'step');
    }
  }
  s.stepCount++;
  s.done = r.terminated || r.truncated;
  const out = stepToWire(r);
  if (guestOf(s.env)?.stopped) {
    s.actions.push(action);
    s.lastWire = JSON.stringify(out);
  }
  const wait = r.info.latencyMs ?? 0;
  if (opts.latency === 'real' && wait > 0) await opts.clock.sleep(Math.min(wait, opts.latencyCapMs));
  return out;
}

/** OpenEnv `/state` body for a session. */
export function sessionState(s: Session): Record<string, Json> {
  return {
    episode_id: s.episodeId,
    step_count: s.stepCount,
    env_id: s.envId,
    seed: s.seed,
    done: s.done,
    kwargs: toJson(s.kwargs),
    render: s.env && s.started ? s.env.renderText() : '',
    // A session whose sandbox another session's call stopped has no expert until its next step revives it.
    expert_action: s.env && s.started && !s.done && !sandboxStopped(s.env) ? actionToWire(s.env, s.env.expertAction()) : null,
  };
}
