/**
 * Serves registered envs to external trainers over OpenEnv's protocol (HTTP and WebSocket, as
 * TRL's environment integration speaks it) and, for tool envs, verl-tool's batched
 * `POST /get_observation`. Plain node:http plus `ws`.
 *
 * One env: routes sit at the root (`/reset`, `/step`, `/ws`, ...). Several: each env under its
 * id as a path prefix (`/tools/calculator/reset`, `/grid/door-key-6x6/ws`), with `/health` and
 * `/envs` at the root.
 *
 * Per env, OpenEnv's routes:
 *   GET  /health        `{"status": "healthy"}`
 *   GET  /metadata      `{name, description, version}`
 *   GET  /schema        `{action, observation, state}` JSON schemas
 *   GET  /openapi.json  the route list (OpenEnv's validator reads the mode from it)
 *   POST /reset         body `{seed?, episode_id?, session_id?, ...env kwargs}` -> `{observation, reward: null, done}`
 *   POST /step          body `{action: {...}, session_id?, timeout_s?, request_id?}` -> `{observation, reward, done}`
 *   GET  /state         `?session_id=` (or header X-Session-Id) -> `{episode_id, step_count, env_id, seed, ...}`
 *   POST /close         body `{session_id}`: closes an HTTP session
 *   POST /mcp           JSON-RPC 2.0; these envs expose no MCP tools, so it answers with JSON-RPC errors
 *   WS   /ws            one session per connection: `{"type": "reset"|"step"|"state"|"close"|"mcp", "data": {...}}`
 *
 * HTTP sessions: a `session_id` (body field, `X-Session-Id` header, or `?session_id=` on GET)
 * names an env instance; a reset under a new id creates it, any other call under an unknown id is
 * a 404. Requests without an id share one `default` session per env (OpenEnv's original
 * single-env HTTP behaviour), so a plain client can still play an episode over HTTP.
 *
 * Every refused request gets a 4xx JSON body `{"detail": ...}` (a sentence, or FastAPI-style
 * field errors for 422), every WebSocket problem an `{"type": "error", "data": {message, code}}`
 * message; a handler that throws unexpectedly answers 500 for that request only.
 *
 * Limits: a request must arrive in full within `requestTimeoutS` of its start (or of the
 * connection), else 408 and the connection is closed; each client (remote address) holds at most
 * `maxSessionsPerClient` sessions, all protocols together, so one client cannot take every place
 * for the idle timeout (429, or CAPACITY_REACHED over WebSocket). A WebSocket whose client does not
 * read its replies is read no further (TCP holds the client back), and closed with 1008 when
 * replies stay untaken for `wsStallS` or messages pile up past `wsMaxQueued`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { envIds, makeEnv, type Env } from '../core/envs/index.ts';
import { RealClock, type Clock } from '../core/envs/clock.ts';
import { familyOf } from '../core/envs/families.ts';
import { WireError, envSchemas, toJson, type FieldError, type Json } from './wire.ts';
import { SessionStore, clientOf, readResetBody, resetSession, sessionState, stepSession, type EpisodeOptions, type LatencyMode, type Session } from './sessions.ts';
import { getObservations, readVerlBatch, type VerlActionMode } from './verlTool.ts';
import type { EpisodeScorer } from './score.ts';
import { sendJson, readBody, parseJson, isObject, readSessionId } from './http.ts';

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

export interface RunningServer {
  /** `http://host:port` */
  url: string;
  port: number;
  /** Route prefix of each served env ('' at the root). */
  prefixes: Record<string, string>;
  sessions: SessionStore;
  http: Server;
  close(): Promise<void>;
}

interface Mount {
  envId: string;
  prefix: string;
  /** An instance made with default kwargs, for schema and metadata (never stepped). */
  probe: Env;
}

const VERSION = '1.0.0';

export async function startServer(overrides: Partial<ServeOptions>): Promise<RunningServer> {
  const opts: ServeOptions = { ...SERVE_DEFAULTS, ...overrides };
  if (opts.envs.length === 0) throw new Error('no envs to serve');
  const known = new Set(envIds());
  for (const id of opts.envs) if (!known.has(id)) throw new Error(`unknown env ${JSON.stringify(id)}; registered envs: ${[...known].join(', ')}`);
  const prefixed = opts.prefixed || opts.envs.length > 1;
  const mounts: Mount[] = opts.envs.map((envId) => ({ envId, prefix: prefixed ? `/${envId}` : '', probe: makeEnv(envId) }));
  // Longest prefix first, so `/a/b` never shadows `/a/bc`.
  const byPrefix = [...mounts].sort((a, b) => b.prefix.length - a.prefix.length);
  const store = new SessionStore({ maxSessions: opts.maxSessions, maxPerClient: opts.maxSessionsPerClient ?? undefined, idleTimeoutMs: opts.idleTimeoutS * 1000, now: () => Date.now() });
  let seedCounter = 0;
  const episode: EpisodeOptions = { latency: opts.latency, latencyCapMs: opts.latencyCapMs, clock: opts.clock, nextSeed: () => (opts.seed + seedCounter++) % 2 ** 32 };

  const findMount = (path: string): { mount: Mount; rest: string } | null => {
    for (const m of byPrefix) {
      if (m.prefix === '') return { mount: m, rest: path };
      if (path === m.prefix || path.startsWith(`${m.prefix}/`)) return { mount: m, rest: path.slice(m.prefix.length) || '/' };
    }
    return null;
  };
  const unknownPath = (path: string) =>
    new WireError(404, `no route ${path}: ${prefixed ? `served envs are under ${mounts.map((m) => m.prefix).join(', ')}` : `this server serves ${mounts[0].envId} at the root`} (routes: /health, /metadata, /schema, /reset, /step, /state, /close, /ws${mounts.some((m) => familyOf(m.probe.spec).wire.verlTool) ? ', /get_observation' : ''})`);

  const httpKey = (m: Mount, id: string) => `http:${m.envId}:${id}`;

  const openapi = (m: Mount): Json => {
    const post = (summary: string) => ({ post: { summary } });
    const get = (summary: string) => ({ get: { summary } });
    const paths: Record<string, Json> = {
      '/reset': post('Reset the environment'),
      '/step': post('Execute an action in the environment'),
      '/state': get('Get current environment state'),
      '/close': post('Close an HTTP session'),
      '/metadata': get('Get environment metadata'),
      '/health': get('Health check'),
      '/schema': get('Get all JSON schemas'),
      '/mcp': post('MCP JSON-RPC endpoint'),
    };
    if (familyOf(m.probe.spec).wire.verlTool) paths['/get_observation'] = post('verl-tool batched observations');
    return { openapi: '3.1.0', info: { title: `Agentic RL Playground env server: ${m.envId}`, version: VERSION }, paths };
  };

  const mcp = (raw: unknown): Json => {
    const fail = (code: number, message: string, id: Json = null): Json => ({ jsonrpc: '2.0', id, error: { code, message, data: null } });
    let msg: unknown = raw;
    if (typeof raw === 'string') {
      try {
        msg = JSON.parse(raw);
      } catch {
        return fail(-32700, 'Parse error');
      }
    }
    if (!isObject(msg) || msg.jsonrpc !== '2.0' || typeof msg.method !== 'string') return fail(-32600, 'Invalid request: expected {"jsonrpc": "2.0", "method": ..., "params"?, "id"?}');
    const id = typeof msg.id === 'string' || typeof msg.id === 'number' ? msg.id : null;
    if (msg.method === 'tools/list' || msg.method === 'tools/call') return fail(-32603, 'Environment does not support MCP: play it through reset/step', id);
    return fail(-32601, `Method not found: ${msg.method}`, id);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://local');
    const path = url.pathname.length > 1 ? url.pathname.replace(/\/+$/, '') : url.pathname;
    const method = req.method ?? 'GET';
    if (prefixed && (path === '/health' || path === '/envs' || path === '/')) {
      if (method !== 'GET') throw new WireError(405, `${path} answers GET only`);
      // `/` and `/envs` both list what is served, so a person who opens the bare URL finds the prefixes.
      if (path === '/health') return sendJson(res, 200, { status: 'healthy' });
      return sendJson(res, 200, { envs: mounts.map((m) => ({ id: m.envId, prefix: m.prefix, family: m.probe.spec.family, title: m.probe.spec.title })) });
    }
    const found = findMount(path);
    if (!found) {
      const guess = path.split('/').slice(1, 3).join('/');
      throw new WireError(404, `unknown env ${JSON.stringify(guess)}; served envs: ${mounts.map((m) => m.envId).join(', ')} (each under /<env id>/...)`);
    }
    const { mount: m, rest } = found;
    const expect = (allowed: string) => {
      if (method !== allowed) throw new WireError(405, `${rest} answers ${allowed} only`);
    };
    const headerSession = typeof req.headers['x-session-id'] === 'string' ? req.headers['x-session-id'] : undefined;
    const client = clientOf(req.socket.remoteAddress);
    switch (rest) {
      case '/health':
        expect('GET');
        return sendJson(res, 200, { status: 'healthy' });
      case '/metadata':
        expect('GET');
        return sendJson(res, 200, { name: m.envId, description: m.probe.spec.description, version: VERSION });
      case '/schema':
        expect('GET');
        return sendJson(res, 200, envSchemas(m.probe));
      case '/openapi.json':
        expect('GET');
        return sendJson(res, 200, openapi(m));
      case '/state': {
        expect('GET');
        const id = readSessionId(url.searchParams.get('session_id') ?? headerSession, ['query', 'session_id']);
        const s = store.get(httpKey(m, id ?? 'default'));
        if (!s) {
          if (id !== undefined) throw new WireError(404, `unknown session ${JSON.stringify(id)} on ${m.envId}: reset with this session_id first`);
          return sendJson(res, 200, { episode_id: null, step_count: 0, env_id: m.envId, seed: null, done: false, kwargs: {}, render: '', expert_action: null });
        }
        return sendJson(res, 200, sessionState(s));
      }
      case '/mcp':
        expect('POST');
        return sendJson(res, 200, mcp(await readBody(req, opts.maxBodyBytes)));
      case '/reset': {
        expect('POST');
        const body = parseJson(await readBody(req, opts.maxBodyBytes));
        const id = readSessionId(isObject(body) ? body.session_id : undefined, ['body', 'session_id']) ?? headerSession ?? 'default';
        const reset = readResetBody(body, ['body'], ['session_id']);
        const key = httpKey(m, id);
        const s = store.getOrCreate(key, m.envId, client);
        try {
          const out = await s.run(() => resetSession(s, reset, episode));
          return sendJson(res, 200, out, { 'x-session-id': id });
        } catch (e) {
          // A session whose very first reset failed (bad kwargs) holds no env: do not let it take a place.
          if (!s.env) store.delete(key);
          throw e;
        }
      }
      case '/step': {
        expect('POST');
        const body = parseJson(await readBody(req, opts.maxBodyBytes));
        if (!isObject(body)) throw new WireError(422, [{ type: body === undefined ? 'missing' : 'model_attributes_type', loc: ['body'], msg: 'the body must be an object: {"action": {...}}' }], 'VALIDATION_ERROR');
        const errors: FieldError[] = [];
        if (!('action' in body)) errors.push({ type: 'missing', loc: ['body', 'action'], msg: 'Field required' });
        if (body.timeout_s !== undefined && body.timeout_s !== null && !(typeof body.timeout_s === 'number' && body.timeout_s > 0)) errors.push({ type: 'greater_than', loc: ['body', 'timeout_s'], msg: 'Input should be a number greater than 0', input: toJson(body.timeout_s) });
        if (errors.length > 0) throw new WireError(422, errors, 'VALIDATION_ERROR');
        const explicit = readSessionId(body.session_id, ['body', 'session_id']) ?? headerSession;
        const s = store.get(httpKey(m, explicit ?? 'default'));
        if (!s) {
          if (explicit !== undefined) throw new WireError(404, `unknown session ${JSON.stringify(explicit)} on ${m.envId}: it was never reset, was closed, or timed out`);
          throw new WireError(409, `no episode in progress on ${m.envId}: POST /reset first`);
        }
        const out = await s.run(() => stepSession(s, body.action, ['body', 'action'], episode));
        return sendJson(res, 200, out, { 'x-session-id': explicit ?? 'default' });
      }
      case '/close': {
        expect('POST');
        const body = parseJson(await readBody(req, opts.maxBodyBytes));
        const id = readSessionId(isObject(body) ? body.session_id : undefined, ['body', 'session_id']) ?? headerSession;
        if (id === undefined) throw new WireError(422, [{ type: 'missing', loc: ['body', 'session_id'], msg: 'Field required: the session to close' }], 'VALIDATION_ERROR');
        if (!store.delete(httpKey(m, id))) throw new WireError(404, `unknown session ${JSON.stringify(id)} on ${m.envId}`);
        return sendJson(res, 200, { session_id: id, closed: true });
      }
      case '/get_observation': {
        expect('POST');
        if (!familyOf(m.probe.spec).wire.verlTool) throw new WireError(404, `${m.envId} is a ${m.probe.spec.family} env: the verl-tool protocol (/get_observation) is served for tool envs only`);
        const items = readVerlBatch(parseJson(await readBody(req, opts.maxBodyBytes)));
        return sendJson(res, 200, await getObservations(items, m.envId, store, episode, opts.verlActions, client));
      }
      case '/score': {
        expect('POST');
        if (!opts.score) throw new WireError(404, `no reward terms to score with: start the server with --reward-file FILE (the export's reward_terms.js)`);
        return sendJson(res, 200, await opts.score(m.envId, parseJson(await readBody(req, opts.maxBodyBytes))));
      }
      default:
        throw unknownPath(path);
    }
  };

  const requestTimeoutMs = Math.max(1, Math.round(opts.requestTimeoutS * 1000));
  const http = createServer({
    // A client that opens a connection and sends half a request (or nothing) is answered 408 and
    // hung up after requestTimeoutS; Node checks its connections every second (default 30 s).
    requestTimeout: requestTimeoutMs,
    headersTimeout: requestTimeoutMs,
    connectionsCheckingInterval: Math.min(1000, Math.max(50, Math.round(requestTimeoutMs / 4))),
  }, (req, res) => {
    handle(req, res).catch((e: unknown) => {
      if (e instanceof WireError) return sendJson(res, e.status, { detail: e.detail }, e.closeConnection ? { connection: 'close' } : {});
      // The client went away mid-request (or was hung up for not sending it in time): nobody to answer.
      if (req.socket.destroyed || (e as NodeJS.ErrnoException)?.code === 'ECONNRESET') return;
      console.error(`serve: ${req.method} ${req.url}: ${(e as Error)?.stack ?? String(e)}`);
      sendJson(res, 500, { detail: `internal error: ${(e as Error)?.message ?? String(e)}` });
    });
  });
  http.keepAliveTimeout = 30_000;
  // A malformed request line or header never reaches a handler: answer 400 and drop the socket.
  // A request not sent in full within requestTimeoutS: 408.
  http.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return socket.destroy();
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      const text = JSON.stringify({ detail: `request not received in full within ${opts.requestTimeoutS} s` });
      return socket.end(`HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`);
    }
    socket.end(`HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n${JSON.stringify({ detail: `bad request: ${err.message}` })}`);
  });

  const wss = new WebSocketServer({ noServer: true, maxPayload: opts.maxBodyBytes });
  http.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    const path = new URL(req.url ?? '/', 'http://local').pathname.replace(/\/+$/, '');
    const found = findMount(path);
    if (!found || found.rest !== '/ws') {
      const text = JSON.stringify({ detail: `no WebSocket endpoint at ${path}; use ${mounts.map((m) => `${m.prefix}/ws`).join(', ')}` });
      socket.end(`HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => onWsSession(ws, found.mount, clientOf(req.socket.remoteAddress)));
  });

  let wsCount = 0;
  const onWsSession = (ws: WebSocket, m: Mount, client: string): void => {
    /**
     * Flow control: a client that sends without reading its replies must not grow the server's
     * memory (2 million small messages grew it by 1 GB). Messages waiting for replies (`pending`)
     * and reply bytes not yet taken by the socket (`unflushed`) each pause reading from the
     * connection past their limit (until both fall to half), so TCP holds the client back; past
     * wsMaxQueued messages, or paused with replies untaken for wsStallS, the connection is closed
     * with 1008 and the reason.
     */
    let pending = 0;
    let unflushed = 0;
    let stall: ReturnType<typeof setTimeout> | null = null;
    let hungUp = false;
    const hangUp = (reason: string) => {
      if (hungUp) return;
      hungUp = true;
      if (stall) clearTimeout(stall);
      // The close frame waits behind the unread replies: a client that reads nothing never sees it, so the socket goes 1 s later.
      if (ws.readyState === ws.OPEN) ws.close(1008, reason.slice(0, 123));
      setTimeout(() => ws.terminate(), 1000).unref();
    };
    const flow = () => {
      if (ws.readyState !== ws.OPEN || hungUp) return;
      if (pending >= opts.wsMaxPending || unflushed >= opts.wsMaxBufferedBytes) {
        if (!ws.isPaused) ws.pause();
      } else if (ws.isPaused && pending < opts.wsMaxPending / 2 && unflushed < opts.wsMaxBufferedBytes / 2) ws.resume();
      // Paused with replies waiting for the client: the stall clock runs (each reply it takes restarts it).
      if (ws.isPaused && unflushed > 0) stall ??= setTimeout(() => hangUp(`client not reading: ${unflushed} bytes of replies untaken for ${opts.wsStallS} s`), opts.wsStallS * 1000);
      else if (stall) {
        clearTimeout(stall);
        stall = null;
      }
    };
    const sendMsg = (type: string, data: Json) => {
      if (ws.readyState !== ws.OPEN) return;
      const text = JSON.stringify({ type, data });
      const n = Buffer.byteLength(text);
      unflushed += n;
      // Called once the reply is handed to the kernel: progress, so the stall clock starts again.
      ws.send(text, () => {
        unflushed -= n;
        if (stall) {
          clearTimeout(stall);
          stall = null;
        }
        flow();
      });
      flow();
    };
    const sendError = (e: unknown) => {
      if (e instanceof WireError) {
        sendMsg('error', { message: e.message, code: e.wsCode, ...(Array.isArray(e.detail) ? { errors: e.detail as unknown as Json } : {}) });
      } else {
        console.error(`serve: ws ${m.envId}: ${(e as Error)?.stack ?? String(e)}`);
        sendMsg('error', { message: String((e as Error)?.message ?? e), code: 'EXECUTION_ERROR' });
      }
    };
    ws.on('error', () => undefined);
    let session: Session;
    const key = `ws:${m.envId}:${++wsCount}`;
    try {
      session = store.create(key, m.envId, client);
    } catch (e) {
      sendError(e);
      ws.close(1013, 'server at capacity');
      return;
    }
    session.onClose = () => {
      if (ws.readyState === ws.OPEN) ws.close(1000, 'session closed');
    };
    ws.on('close', () => store.delete(key));
    ws.on('message', (raw: RawData) => {
      if (hungUp) return;
      if (++pending > opts.wsMaxQueued) return hangUp(`more than ${opts.wsMaxQueued} messages waiting for replies: read the replies, or send fewer at once`);
      flow();
      store.get(key);
      session
        .run(async () => {
          let msg: unknown;
          try {
            msg = JSON.parse(raw.toString());
          } catch (e) {
            throw new WireError(400, `Invalid JSON: ${(e as Error).message}`, 'INVALID_JSON');
          }
          if (!isObject(msg)) throw new WireError(422, [{ type: 'model_type', loc: [], msg: 'a message is an object {"type": ..., "data": ...}', input: toJson(msg) }], 'VALIDATION_ERROR');
          const allowed: Record<string, readonly string[]> = { reset: ['type', 'data'], step: ['type', 'data'], state: ['type'], close: ['type'], mcp: ['type', 'data'] };
          const type = msg.type;
          if (typeof type !== 'string' || !(type in allowed)) throw new WireError(400, `Unknown message type: ${typeof type === 'string' ? type : JSON.stringify(type ?? null)} (expected reset, step, state, close or mcp)`, 'UNKNOWN_TYPE');
          const extra = Object.keys(msg).filter((k) => !allowed[type].includes(k));
          if (extra.length > 0) throw new WireError(422, extra.map((k) => ({ type: 'extra_forbidden', loc: [k], msg: `Extra inputs are not permitted in a ${type} message` })), 'VALIDATION_ERROR');
          switch (type) {
            case 'reset': {
              if (msg.data !== undefined && !isObject(msg.data)) throw new WireError(422, [{ type: 'dict_type', loc: ['data'], msg: 'Input should be a valid dictionary', input: toJson(msg.data) }], 'VALIDATION_ERROR');
              return sendMsg('observation', (await resetSession(session, readResetBody(msg.data ?? {}, ['data']), episode)) as unknown as Json);
            }
            case 'step':
              if (!('data' in msg)) throw new WireError(422, [{ type: 'missing', loc: ['data'], msg: 'Field required: the action' }], 'VALIDATION_ERROR');
              return sendMsg('observation', (await stepSession(session, msg.data, ['data'], episode)) as unknown as Json);
            case 'state':
              return sendMsg('state', sessionState(session));
            case 'close':
              ws.close(1000, 'closed by client');
              return;
            case 'mcp':
              return sendMsg('mcp', mcp(msg.data));
          }
        })
        .catch(sendError)
        .finally(() => {
          pending--;
          flow();
        });
    });
  };

  await new Promise<void>((resolve, reject) => {
    http.once('error', (e: NodeJS.ErrnoException) => {
      store.closeAll();
      reject(e.code === 'EADDRINUSE' ? new Error(`port ${opts.port} on ${opts.host} is already in use: pick another with --port (0 = any free port)`) : e);
    });
    http.listen(opts.port, opts.host, () => {
      http.removeAllListeners('error');
      resolve();
    });
  });
  http.on('error', (e) => console.error(`serve: ${e.message}`));
  const port = (http.address() as AddressInfo).port;
  const hostForUrl = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  return {
    url: `http://${hostForUrl}:${port}`,
    port,
    prefixes: Object.fromEntries(mounts.map((m) => [m.envId, m.prefix])),
    sessions: store,
    http,
    close: async () => {
      store.closeAll();
      for (const c of wss.clients) c.terminate();
      wss.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
