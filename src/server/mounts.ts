/**
 * What every route of the server shares: the served envs (each at a path prefix), the session
 * store, the episode options, and the replies that depend only on an env (OpenAPI, MCP).
 */
import { makeEnv, type Env } from '../core/envs/index.ts';
import { familyOf } from '../core/envs/families.ts';
import { WireError, type Json } from './wire.ts';
import { SessionStore, type EpisodeOptions } from './sessions.ts';
import { isObject } from './http.ts';
import type { ServeOptions } from './options.ts';

export interface Mount {
  envId: string;
  prefix: string;
  /** An instance made with default kwargs, for schema and metadata (never stepped). */
  probe: Env;
}

export const VERSION = '1.0.0';

/** One running server's shared state. */
export interface ServerContext {
  opts: ServeOptions;
  /** Every env under its id prefix (several envs, or `prefixed`), else the one env at the root. */
  prefixed: boolean;
  mounts: Mount[];
  store: SessionStore;
  episode: EpisodeOptions;
  /** The env a path belongs to and the route within it; null when no served env's prefix matches. */
  findMount(path: string): { mount: Mount; rest: string } | null;
  /** The 404 for a path no route answers, listing the routes. */
  unknownPath(path: string): WireError;
}

export function serverContext(opts: ServeOptions): ServerContext {
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
  return { opts, prefixed, mounts, store, episode, findMount, unknownPath };
}

/** `GET /openapi.json`: the route list (OpenEnv's validator reads the mode from it). */
export function openapi(m: Mount): Json {
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
}

/** `POST /mcp` and a WebSocket `mcp` message: these envs expose no MCP tools, so each answer is a JSON-RPC error. */
export function mcp(raw: unknown): Json {
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
}
