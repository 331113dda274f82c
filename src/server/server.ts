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
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocketServer } from 'ws';
import { envIds } from '../core/envs/index.ts';
import { WireError } from './wire.ts';
import { clientOf, type SessionStore } from './sessions.ts';
import { sendJson } from './http.ts';
import { SERVE_DEFAULTS, type ServeOptions } from './options.ts';
import { serverContext, type ServerContext } from './mounts.ts';
import { handleHttp } from './routes.ts';
import { onWsSession } from './wsSession.ts';

export { SERVE_DEFAULTS, type ServeOptions } from './options.ts';

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

/**
 * The HTTP server: each request goes to `handleHttp`; a WireError becomes its 4xx reply, anything
 * else a 500 for that request only. Malformed requests get 400, half-sent ones 408.
 */
function createHttp(ctx: ServerContext): Server {
  const { opts } = ctx;
  const requestTimeoutMs = Math.max(1, Math.round(opts.requestTimeoutS * 1000));
  const http = createServer({
    // A client that opens a connection and sends half a request (or nothing) is answered 408 and
    // hung up after requestTimeoutS; Node checks its connections every second (default 30 s).
    requestTimeout: requestTimeoutMs,
    headersTimeout: requestTimeoutMs,
    connectionsCheckingInterval: Math.min(1000, Math.max(50, Math.round(requestTimeoutMs / 4))),
  }, (req, res) => {
    handleHttp(ctx, req, res).catch((e: unknown) => {
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
  return http;
}

/** WebSocket upgrades: `<prefix>/ws` opens a session on that env; any other path is a 404. */
function acceptWebSockets(ctx: ServerContext, http: Server): WebSocketServer {
  const wss = new WebSocketServer({ noServer: true, maxPayload: ctx.opts.maxBodyBytes });
  let wsCount = 0;
  http.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    const path = new URL(req.url ?? '/', 'http://local').pathname.replace(/\/+$/, '');
    const found = ctx.findMount(path);
    if (!found || found.rest !== '/ws') {
      const text = JSON.stringify({ detail: `no WebSocket endpoint at ${path}; use ${ctx.mounts.map((m) => `${m.prefix}/ws`).join(', ')}` });
      socket.end(`HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => onWsSession(ctx, ws, found.mount, clientOf(req.socket.remoteAddress), `ws:${found.mount.envId}:${++wsCount}`));
  });
  return wss;
}

/** Listens on the configured host and port; a port in use is named with what to do. */
async function listen(ctx: ServerContext, http: Server): Promise<void> {
  const { opts } = ctx;
  await new Promise<void>((resolve, reject) => {
    http.once('error', (e: NodeJS.ErrnoException) => {
      ctx.store.closeAll();
      reject(e.code === 'EADDRINUSE' ? new Error(`port ${opts.port} on ${opts.host} is already in use: pick another with --port (0 = any free port)`) : e);
    });
    http.listen(opts.port, opts.host, () => {
      http.removeAllListeners('error');
      resolve();
    });
  });
  http.on('error', (e) => console.error(`serve: ${e.message}`));
}

export async function startServer(overrides: Partial<ServeOptions>): Promise<RunningServer> {
  const opts: ServeOptions = { ...SERVE_DEFAULTS, ...overrides };
  if (opts.envs.length === 0) throw new Error('no envs to serve');
  const known = new Set(envIds());
  for (const id of opts.envs) if (!known.has(id)) throw new Error(`unknown env ${JSON.stringify(id)}; registered envs: ${[...known].join(', ')}`);
  const ctx = serverContext(opts);
  const http = createHttp(ctx);
  const wss = acceptWebSockets(ctx, http);
  await listen(ctx, http);
  const port = (http.address() as AddressInfo).port;
  const hostForUrl = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  const { store } = ctx;
  return {
    url: `http://${hostForUrl}:${port}`,
    port,
    prefixes: Object.fromEntries(ctx.mounts.map((m) => [m.envId, m.prefix])),
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
