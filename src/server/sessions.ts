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
import type { Clock } from '../core/envs/clock.ts';
import { WireError, actionToWire, parseWireAction, resetToWire, stepToWire, toJson, type Json, type WireResult } from './wire.ts';

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
  /** Called when the store closes this session (idle timeout, shutdown): e.g. hang up its socket. */
  onClose: (() => void) | null = null;
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    readonly key: string,
    readonly envId: string,
    now: number,
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
  /** A session untouched this long (ms) is closed; 0 = never. */
  idleTimeoutMs: number;
  /** Milliseconds, for idle bookkeeping. */
  now: () => number;
}

export class SessionStore {
  private readonly sessions = new Map<string, Session>();
  private reaper: ReturnType<typeof setInterval> | null = null;

  constructor(readonly options: SessionStoreOptions) {
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

  /** A new session under `key`; throws a 429 WireError when the store is full. */
  create(key: string, envId: string): Session {
    if (this.sessions.has(key)) throw new Error(`session ${key} already exists`);
    if (this.sessions.size >= this.options.maxSessions) {
      throw new WireError(429, `server at capacity: ${this.sessions.size} of ${this.options.maxSessions} sessions in use; close one (or wait for idle ones to time out) and retry`, 'CAPACITY_REACHED');
    }
    const s = new Session(key, envId, this.options.now());
    this.sessions.set(key, s);
    return s;
  }

  getOrCreate(key: string, envId: string): Session {
    return this.get(key) ?? this.create(key, envId);
  }

  delete(key: string): boolean {
    const s = this.sessions.get(key);
    if (!s) return false;
    this.sessions.delete(key);
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
  const errors = [];
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
    } else {
      out.kwargs[key] = value;
    }
  }
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

/** Starts (or restarts) the session's episode; builds its env on first use or when kwargs are given. */
export function resetSession(s: Session, req: ResetRequest, opts: EpisodeOptions): WireResult {
  if (!s.env || Object.keys(req.kwargs).length > 0) {
    try {
      s.env = makeEnv(s.envId, req.kwargs);
      s.kwargs = { ...req.kwargs };
    } catch (e) {
      throw new WireError(422, `bad env kwargs: ${(e as Error).message}`, 'VALIDATION_ERROR');
    }
  }
  const seed = req.seed ?? opts.nextSeed();
  const r = s.env.reset({ seed });
  s.seed = seed;
  s.episodeId = req.episodeId ?? randomUUID();
  s.stepCount = 0;
  s.started = true;
  s.done = false;
  return resetToWire(r);
}

/** One step of the session's episode: 409 before a reset or after the end, 422 for a bad action. */
export async function stepSession(s: Session, wireAction: unknown, loc: (string | number)[], opts: EpisodeOptions): Promise<WireResult> {
  if (!s.env || !s.started) throw new WireError(409, `no episode in progress on ${s.envId}: reset first`);
  if (s.done) throw new WireError(409, `episode ${s.episodeId} (seed ${s.seed}) already ended after ${s.stepCount} steps: reset to start another`);
  const action = parseWireAction(s.env, wireAction, loc);
  const r = s.env.step(action);
  s.stepCount++;
  s.done = r.terminated || r.truncated;
  const wait = r.info.latencyMs ?? 0;
  if (opts.latency === 'real' && wait > 0) await opts.clock.sleep(Math.min(wait, opts.latencyCapMs));
  return stepToWire(r);
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
    expert_action: s.env && s.started && !s.done ? actionToWire(s.env, s.env.expertAction()) : null,
  };
}
