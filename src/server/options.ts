/** What `startServer` takes: the envs, where to listen, and the limits that keep one client from taking the server. */
import { RealClock, type Clock } from '../core/envs/clock.ts';
import type { LatencyMode } from './sessions.ts';
import type { VerlActionMode } from './verlTool.ts';
import type { EpisodeScorer } from './score.ts';

export interface ServeOptions {
  /** Env ids to serve; one id is served at the root, several each under `/<id>`. */
  envs: string[];
  /** Serve each env under its id prefix even when there is only one (what `--env all` implies). */
  prefixed: boolean;
  /** Interface to listen on; keep to loopback unless the trainers are elsewhere. */
  host: string;
  /** TCP port; 0 picks a free one (see `RunningServer.port`). */
  port: number;
  /** 'real': a tool call's simulated latency is real waiting before the reply; 'skip': reply at once. */
  latency: LatencyMode;
  /**
   * With 'real' latency, the longest a step waits, ms. flaky-api's long tail (log-normal, sigma
   * 1.7) now and then draws tens of seconds, past trainers' request timeouts (verl-tool's
   * default is 30 s per batch); `info.latencyMs` still reports the drawn value.
   */
  latencyCapMs: number;
  /** Most live sessions (HTTP ids, WebSocket connections, verl trajectories together). */
  maxSessions: number;
  /**
   * Most live sessions one client (remote address) may hold, so one client cannot take every
   * place; null: three quarters of `maxSessions`.
   */
  maxSessionsPerClient: number | null;
  /**
   * Seconds a client has to send a whole request (headers and body) once it connects or starts
   * one; a half-sent request is then answered 408 and its connection closed.
   */
  requestTimeoutS: number;
  /** Seconds a session may sit unused before it is closed; 0 = never. */
  idleTimeoutS: number;
  /** First seed handed to a reset that names none; later ones count up from it. */
  seed: number;
  /** verl-tool actions: 'last-call' plays the last `name(...)` in the model's text, 'strict' the text as is. */
  verlActions: VerlActionMode;
  /** Largest request body or WebSocket message, bytes. */
  maxBodyBytes: number;
  /** Clock that 'real' latency sleeps on (tests may pass a virtual one). */
  clock: Clock;
  /** Messages one WebSocket may have waiting for their replies before the server stops reading from it (TCP then holds the client back). */
  wsMaxPending: number;
  /** Messages waiting past which a WebSocket is closed (1008): more than one read from the socket can bring while reading is paused. */
  wsMaxQueued: number;
  /** Reply bytes a WebSocket may have queued that its client has not taken, before the server stops reading from it. */
  wsMaxBufferedBytes: number;
  /** Seconds a client may leave replies untaken while the server has stopped reading from it (no reply taken meanwhile) before its WebSocket is closed (1008). */
  wsStallS: number;
  /** Reward-lab terms that `POST /score` scores a finished episode with (score.ts); null: no /score route. */
  score: EpisodeScorer | null;
}

export const SERVE_DEFAULTS: ServeOptions = {
  envs: [],
  prefixed: false,
  host: '127.0.0.1',
  port: 8000,
  latency: 'real',
  latencyCapMs: 10_000,
  maxSessions: 1024,
  maxSessionsPerClient: null,
  requestTimeoutS: 10,
  idleTimeoutS: 600,
  seed: 0,
  verlActions: 'last-call',
  score: null,
  maxBodyBytes: 1 << 20,
  clock: new RealClock(),
  wsMaxPending: 64,
  wsMaxQueued: 4096,
  wsMaxBufferedBytes: 4 << 20,
  wsStallS: 30,
};
