/**
 * A TypeScript client for OpenEnv servers (OpenEnv 0.2's protocol; the playground's own
 * `npm run serve` speaks it too). WebSocket first: one env session per socket (`/ws`, messages
 * reset/step/state/close/mcp). Where no WebSocket opens (a proxy that drops upgrades, a server
 * without /ws), HTTP: POST /reset, /step, /close and GET /state under a `session_id` this client
 * draws. MCP (JSON-RPC 2.0 tools/list, tools/call, openenv/session/create|close) goes over the
 * socket's `mcp` message or POST /mcp.
 *
 * Every request has a timeout. A lost connection is reopened (up to `reconnects` times, with
 * backoff); an episode in progress is replayed into the new session from its seed and actions,
 * and the replay must reproduce the observations seen before (else SESSION_ERROR: the env is not
 * deterministic under its seed, and the episode cannot be resumed). Problems arrive as
 * `OpenEnvError`s with OpenEnv's code and a sentence (errors.ts).
 *
 * Platform-free: pass `WebSocket` (the browser's global is the default; Node 20 has none, pass
 * the `ws` package's) and `fetch` (the global by default).
 */
import { OpenEnvError, httpError } from './errors.ts';
import { WsChannel, type WsConstructor } from './wsChannel.ts';
import { McpClient, type McpTransport } from './mcp.ts';

/** OpenEnv's reset/step reply: `done` = terminated or truncated; `reward` is null after a reset. */
export interface OpenEnvResult {
  observation: Record<string, unknown>;
  reward: number | null;
  done: boolean;
}

export interface OpenEnvClientOptions {
  /** Server address: ws://, wss://, http:// or https://, with the env's path prefix if it is served under one. */
  url: string;
  /** 'auto': WebSocket, else HTTP when no socket opens; 'ws' or 'http' to insist on one. */
  transport: 'auto' | 'ws' | 'http';
  /** Longest wait for any one reply, ms (a slow tool env's step included). */
  timeoutMs: number;
  /** Longest wait for a WebSocket to open, ms. */
  connectTimeoutMs: number;
  /** Times a lost connection is reopened before the request fails. */
  reconnects: number;
  /** Wait before the first reopening, ms; doubled each further try. */
  reconnectDelayMs: number;
  /** WebSocket constructor; default: the global one. */
  WebSocket?: WsConstructor;
  /** fetch; default: the global one. */
  fetch?: typeof fetch;
}

export const OPENENV_CLIENT_DEFAULTS: Omit<OpenEnvClientOptions, 'url'> = {
  transport: 'auto',
  timeoutMs: 30_000,
  connectTimeoutMs: 5_000,
  reconnects: 2,
  reconnectDelayMs: 200,
};

/** The HTTP base (`http://host:port/prefix`) and WebSocket address (`ws://host:port/prefix/ws`) of a server address. */
export function openEnvAddresses(url: string): { http: string; ws: string } {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new OpenEnvError('CONNECT_FAILED', `${JSON.stringify(url)} is not an address: expected e.g. ws://127.0.0.1:8000 or http://127.0.0.1:8000`);
  }
  const scheme = { 'ws:': 'http:', 'wss:': 'https:', 'http:': 'http:', 'https:': 'https:' }[u.protocol];
  if (!scheme) throw new OpenEnvError('CONNECT_FAILED', `${url}: an OpenEnv server is reached over ws://, wss://, http:// or https://, not ${u.protocol}`);
  const path = u.pathname.replace(/\/+$/, '').replace(/\/ws$/, '');
  const http = `${scheme}//${u.host}${path}`;
  return { http, ws: `${scheme === 'https:' ? 'wss:' : 'ws:'}//${u.host}${path}/ws` };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One env session on an OpenEnv server. */
export class OpenEnvClient {
  readonly options: OpenEnvClientOptions;
  readonly addresses: { http: string; ws: string };
  /** The transport in use: decided by the first request (null before it). */
  transport: 'ws' | 'http' | null = null;
  private ws: WsChannel | null = null;
  // crypto.randomUUID: unique across clients without a module-level counter (Node ≥ 19, workers, secure pages).
  private readonly sessionId = `ts-${globalThis.crypto.randomUUID()}`;
  /** The episode so far, for replay after a reconnect: the reset's fields, the actions, and each observation seen. */
  private episode: { reset: Record<string, unknown>; actions: unknown[]; seen: string[] } | null = null;
  private closed = false;
  private readonly mcpClient: McpClient;

  constructor(options: Partial<OpenEnvClientOptions> & { url: string }) {
    this.options = { ...OPENENV_CLIENT_DEFAULTS, ...options };
    this.addresses = openEnvAddresses(this.options.url);
    const transport: McpTransport = (msg, timeoutMs) => this.mcpExchange(msg, timeoutMs);
    this.mcpClient = new McpClient(transport, this.options.timeoutMs);
  }

  /** Starts an episode; `fields` are OpenEnv's reset body (`seed`, `episode_id`, env kwargs). */
  async reset(fields: Record<string, unknown> = {}): Promise<OpenEnvResult> {
    const out = await this.call('reset', fields);
    this.episode = { reset: { ...fields }, actions: [], seen: [JSON.stringify(out.observation)] };
    return out;
  }

  /** One step of the episode (`action` is the env's action object, e.g. `{text}` or `{action_id}`). */
  async step(action: Record<string, unknown>): Promise<OpenEnvResult> {
    const out = await this.call('step', action);
    if (this.episode) {
      this.episode.actions.push(action);
      this.episode.seen.push(JSON.stringify(out.observation));
    }
    return out;
  }

  /** The server's state of this session (`episode_id`, `step_count`, ...; the playground's server adds `expert_action`). */
  async state(): Promise<Record<string, unknown>> {
    const t = await this.pickTransport();
    if (t === 'ws') return asObject(await (await this.channel(false)).request('state', undefined, 'state', this.options.timeoutMs), this.addresses.ws, 'state');
    return asObject(await this.http('GET', `/state?session_id=${encodeURIComponent(this.sessionId)}`), this.addresses.http, 'state');
  }

  /** The MCP face of this server (tools/list, tools/call, sessions). */
  get mcp(): McpClient {
    return this.mcpClient;
  }

  /** Ends the session on the server; the client can be reused (the next reset opens a new one). */
  async close(): Promise<void> {
    this.episode = null;
    if (this.ws) {
      this.ws.close();
      this.ws = null;
    } else if (this.transport === 'http') {
      await this.http('POST', '/close', { session_id: this.sessionId }).catch(() => undefined);
    }
  }

  /** Closes for good: later calls fail. */
  async dispose(): Promise<void> {
    await this.close();
    this.closed = true;
  }

  private async pickTransport(): Promise<'ws' | 'http'> {
    if (this.closed) throw new OpenEnvError('CONNECTION_LOST', `${this.options.url}: this client was disposed`);
    if (this.transport) return this.transport;
    const want = this.options.transport;
    if (want === 'http') return (this.transport = 'http');
    try {
      this.ws = await WsChannel.open(this.wsConstructor(), this.addresses.ws, this.options.connectTimeoutMs);
      return (this.transport = 'ws');
    } catch (e) {
      if (want === 'ws') throw e;
      // No socket: is there an OpenEnv HTTP server at all? Its /health says.
      try {
        await this.http('GET', '/health');
      } catch (h) {
        throw new OpenEnvError('CONNECT_FAILED', `${this.options.url}: no OpenEnv server answers there (WebSocket: ${(e as Error).message}; HTTP: ${(h as Error).message})`);
      }
      return (this.transport = 'http');
    }
  }

  private wsConstructor(): WsConstructor {
    const Ws = this.options.WebSocket ?? (globalThis as { WebSocket?: WsConstructor }).WebSocket;
    if (!Ws) throw new OpenEnvError('CONNECT_FAILED', 'no WebSocket implementation in this runtime: pass options.WebSocket (in Node 20, the ws package)');
    return Ws;
  }

  /** The open socket; reopened (and the episode replayed when `replay`) after a lost connection. */
  private async channel(replay: boolean): Promise<WsChannel> {
    if (this.ws?.alive) return this.ws;
    const lost = this.ws?.failure ?? null;
    // A server that refused us (full, or the session is gone) is not retried: it said why.
    if (lost && (lost.code === 'CAPACITY_REACHED' || lost.code === 'MALFORMED_REPLY')) throw lost;
    let last: Error | null = lost;
    for (let i = 0; i <= this.options.reconnects; i++) {
      if (i > 0) await sleep(this.options.reconnectDelayMs * 2 ** (i - 1));
      try {
        this.ws = await WsChannel.open(this.wsConstructor(), this.addresses.ws, this.options.connectTimeoutMs);
        if (replay && this.episode) await this.replay(this.ws);
        return this.ws;
      } catch (e) {
        last = e as Error;
        if (e instanceof OpenEnvError && (e.code === 'CAPACITY_REACHED' || e.code === 'SESSION_ERROR')) throw e;
      }
    }
    throw new OpenEnvError('CONNECTION_LOST', `${this.addresses.ws}: the connection was lost and ${this.options.reconnects} reconnects failed (last: ${last?.message ?? 'unknown'})`);
  }

  /** Plays the episode so far into a fresh session; its observations must match those seen. */
  private async replay(ch: WsChannel): Promise<void> {
    const ep = this.episode!;
    const check = (i: number, data: unknown) => {
      const obs = JSON.stringify(readResult(data, this.addresses.ws).observation);
      if (obs !== ep.seen[i]) throw new OpenEnvError('SESSION_ERROR', `${this.addresses.ws}: the connection was lost mid-episode and replaying it from its seed gave another observation at step ${i}: the episode cannot be resumed (reset without a seed, or a non-deterministic env)`);
    };
    check(0, await ch.request('reset', ep.reset, 'observation', this.options.timeoutMs));
    for (let i = 0; i < ep.actions.length; i++) check(i + 1, await ch.request('step', ep.actions[i], 'observation', this.options.timeoutMs));
  }

  private async call(kind: 'reset' | 'step', data: Record<string, unknown>): Promise<OpenEnvResult> {
    const t = await this.pickTransport();
    if (t === 'http') {
      const body = kind === 'reset' ? { ...data, session_id: this.sessionId } : { action: data, session_id: this.sessionId };
      return readResult(await this.http('POST', `/${kind}`, body), this.addresses.http);
    }
    // A reset starts afresh, so only a step needs the episode replayed into a new socket.
    const ch = await this.channel(kind === 'step');
    try {
      return readResult(await ch.request(kind, data, 'observation', this.options.timeoutMs), this.addresses.ws);
    } catch (e) {
      // Lost between two requests (the server restarted, an idle proxy hung up): reopen once more.
      if (e instanceof OpenEnvError && e.code === 'CONNECTION_LOST' && this.options.reconnects > 0 && !this.closed) {
        const again = await this.channel(kind === 'step');
        return readResult(await again.request(kind, data, 'observation', this.options.timeoutMs), this.addresses.ws);
      }
      throw e;
    }
  }

  private async http(method: 'GET' | 'POST', route: string, body?: unknown): Promise<unknown> {
    const f = this.options.fetch ?? globalThis.fetch;
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(), this.options.timeoutMs);
    const where = this.addresses.http;
    try {
      let res: Response;
      try {
        res = await f(`${where}${route}`, { method, signal: ctl.signal, headers: body === undefined ? {} : { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
      } catch (e) {
        if (ctl.signal.aborted) throw new OpenEnvError('TIMEOUT', `${where}${route}: no reply within ${this.options.timeoutMs} ms (the server is slow or stuck)`);
        throw new OpenEnvError('CONNECT_FAILED', `${where}${route}: cannot reach the server: ${(e as Error).message}`);
      }
      const text = await res.text();
      let parsed: unknown;
      try {
        parsed = text === '' ? null : JSON.parse(text);
      } catch {
        throw new OpenEnvError('MALFORMED_REPLY', `${where}${route}: HTTP ${res.status} with a body that is not JSON: ${text.slice(0, 80)}`);
      }
      if (!res.ok) throw httpError(where, route, res.status, (parsed as { detail?: unknown } | null)?.detail ?? parsed);
      return parsed;
    } catch (e) {
      if (ctl.signal.aborted && !(e instanceof OpenEnvError && e.code === 'TIMEOUT')) throw new OpenEnvError('TIMEOUT', `${where}${route}: no reply within ${this.options.timeoutMs} ms (the server is slow or stuck)`);
      throw e;
    } finally {
      clearTimeout(timer);
    }
  }

  private async mcpExchange(msg: Record<string, unknown>, timeoutMs: number): Promise<unknown> {
    const t = await this.pickTransport();
    if (t === 'ws') return (await this.channel(false)).request('mcp', msg, 'mcp', timeoutMs);
    return this.http('POST', '/mcp', msg);
  }
}

function asObject(v: unknown, url: string, what: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new OpenEnvError('MALFORMED_REPLY', `${url}: the ${what} reply is not an object: ${JSON.stringify(v)?.slice(0, 80)}`);
  return v as Record<string, unknown>;
}

/** Checks an `{observation, reward, done}` reply. */
export function readResult(v: unknown, url: string): OpenEnvResult {
  const o = asObject(v, url, 'observation');
  if (typeof o.observation !== 'object' || o.observation === null || typeof o.done !== 'boolean' || !(o.reward === null || o.reward === undefined || typeof o.reward === 'number')) {
    throw new OpenEnvError('MALFORMED_REPLY', `${url}: expected {observation: {...}, reward: number|null, done: boolean}, got ${JSON.stringify(v).slice(0, 120)}`);
  }
  return { observation: o.observation as Record<string, unknown>, reward: (o.reward as number | null | undefined) ?? null, done: o.done };
}
