/**
 * The HTTP routes of one served env, as a table: each route's method and handler. `handleHttp`
 * answers the root routes of a multi-env server, finds the env a path belongs to, and runs its route.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { familyOf } from '../core/envs/families.ts';
import { WireError, envSchemas, toJson, type FieldError } from './wire.ts';
import { clientOf, readResetBody, resetSession, sessionState, stepSession } from './sessions.ts';
import { getObservations, readVerlBatch } from './verlTool.ts';
import { sendJson, readBody, parseJson, isObject, readSessionId } from './http.ts';
import { mcp, openapi, VERSION, type Mount, type ServerContext } from './mounts.ts';

/** One request to a route of env `m`. */
interface RouteCall {
  ctx: ServerContext;
  m: Mount;
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  /** The `X-Session-Id` header, when sent. */
  headerSession: string | undefined;
  /** The remote address the per-client session limit counts by. */
  client: string;
  /** The body, read within the size limit. */
  body(): Promise<string>;
}

interface Route {
  method: 'GET' | 'POST';
  run(c: RouteCall): void | Promise<void>;
}

const httpKey = (m: Mount, id: string) => `http:${m.envId}:${id}`;

function state({ ctx, m, res, url, headerSession }: RouteCall): void {
  const id = readSessionId(url.searchParams.get('session_id') ?? headerSession, ['query', 'session_id']);
  const s = ctx.store.get(httpKey(m, id ?? 'default'));
  if (!s) {
    if (id !== undefined) throw new WireError(404, `unknown session ${JSON.stringify(id)} on ${m.envId}: reset with this session_id first`);
    return sendJson(res, 200, { episode_id: null, step_count: 0, env_id: m.envId, seed: null, done: false, kwargs: {}, render: '', expert_action: null });
  }
  return sendJson(res, 200, sessionState(s));
}

async function reset({ ctx, m, res, headerSession, client, body: read }: RouteCall): Promise<void> {
  const body = parseJson(await read());
  const id = readSessionId(isObject(body) ? body.session_id : undefined, ['body', 'session_id']) ?? headerSession ?? 'default';
  const resetBody = readResetBody(body, ['body'], ['session_id']);
  const key = httpKey(m, id);
  const s = ctx.store.getOrCreate(key, m.envId, client);
  try {
    const out = await s.run(() => resetSession(s, resetBody, ctx.episode));
    return sendJson(res, 200, out, { 'x-session-id': id });
  } catch (e) {
    // A session whose very first reset failed (bad kwargs) holds no env: do not let it take a place.
    if (!s.env) ctx.store.delete(key);
    throw e;
  }
}

async function step({ ctx, m, res, headerSession, body: read }: RouteCall): Promise<void> {
  const body = parseJson(await read());
  if (!isObject(body)) throw new WireError(422, [{ type: body === undefined ? 'missing' : 'model_attributes_type', loc: ['body'], msg: 'the body must be an object: {"action": {...}}' }], 'VALIDATION_ERROR');
  const errors: FieldError[] = [];
  if (!('action' in body)) errors.push({ type: 'missing', loc: ['body', 'action'], msg: 'Field required' });
  if (body.timeout_s !== undefined && body.timeout_s !== null && !(typeof body.timeout_s === 'number' && body.timeout_s > 0)) errors.push({ type: 'greater_than', loc: ['body', 'timeout_s'], msg: 'Input should be a number greater than 0', input: toJson(body.timeout_s) });
  if (errors.length > 0) throw new WireError(422, errors, 'VALIDATION_ERROR');
  const explicit = readSessionId(body.session_id, ['body', 'session_id']) ?? headerSession;
  const s = ctx.store.get(httpKey(m, explicit ?? 'default'));
  if (!s) {
    if (explicit !== undefined) throw new WireError(404, `unknown session ${JSON.stringify(explicit)} on ${m.envId}: it was never reset, was closed, or timed out`);
    throw new WireError(409, `no episode in progress on ${m.envId}: POST /reset first`);
  }
  const out = await s.run(() => stepSession(s, body.action, ['body', 'action'], ctx.episode));
  return sendJson(res, 200, out, { 'x-session-id': explicit ?? 'default' });
}

async function close({ ctx, m, res, headerSession, body: read }: RouteCall): Promise<void> {
  const body = parseJson(await read());
  const id = readSessionId(isObject(body) ? body.session_id : undefined, ['body', 'session_id']) ?? headerSession;
  if (id === undefined) throw new WireError(422, [{ type: 'missing', loc: ['body', 'session_id'], msg: 'Field required: the session to close' }], 'VALIDATION_ERROR');
  if (!ctx.store.delete(httpKey(m, id))) throw new WireError(404, `unknown session ${JSON.stringify(id)} on ${m.envId}`);
  return sendJson(res, 200, { session_id: id, closed: true });
}

async function getObservation({ ctx, m, res, client, body }: RouteCall): Promise<void> {
  if (!familyOf(m.probe.spec).wire.verlTool) throw new WireError(404, `${m.envId} is a ${m.probe.spec.family} env: the verl-tool protocol (/get_observation) is served for tool envs only`);
  const items = readVerlBatch(parseJson(await body()));
  return sendJson(res, 200, await getObservations(items, m.envId, ctx.store, ctx.episode, ctx.opts.verlActions, client));
}

async function score({ ctx, m, res, body }: RouteCall): Promise<void> {
  if (!ctx.opts.score) throw new WireError(404, `no reward terms to score with: start the server with --reward-file FILE (the export's reward_terms.js)`);
  return sendJson(res, 200, await ctx.opts.score(m.envId, parseJson(await body())));
}

/** Each env's routes (OpenEnv's, verl-tool's /get_observation, and /score), by path within the env. */
const ROUTES: Record<string, Route> = {
  '/health': { method: 'GET', run: ({ res }) => sendJson(res, 200, { status: 'healthy' }) },
  '/metadata': { method: 'GET', run: ({ m, res }) => sendJson(res, 200, { name: m.envId, description: m.probe.spec.description, version: VERSION }) },
  '/schema': { method: 'GET', run: ({ m, res }) => sendJson(res, 200, envSchemas(m.probe)) },
  '/openapi.json': { method: 'GET', run: ({ m, res }) => sendJson(res, 200, openapi(m)) },
  '/state': { method: 'GET', run: state },
  '/mcp': { method: 'POST', run: async ({ res, body }) => sendJson(res, 200, mcp(await body())) },
  '/reset': { method: 'POST', run: reset },
  '/step': { method: 'POST', run: step },
  '/close': { method: 'POST', run: close },
  '/get_observation': { method: 'POST', run: getObservation },
  '/score': { method: 'POST', run: score },
};

/** Answers one HTTP request; a WireError it throws becomes the 4xx reply (the caller sends it). */
export async function handleHttp(ctx: ServerContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://local');
  const path = url.pathname.length > 1 ? url.pathname.replace(/\/+$/, '') : url.pathname;
  const method = req.method ?? 'GET';
  if (ctx.prefixed && (path === '/health' || path === '/envs' || path === '/')) {
    if (method !== 'GET') throw new WireError(405, `${path} answers GET only`);
    // `/` and `/envs` both list what is served, so a person who opens the bare URL finds the prefixes.
    if (path === '/health') return sendJson(res, 200, { status: 'healthy' });
    return sendJson(res, 200, { envs: ctx.mounts.map((m) => ({ id: m.envId, prefix: m.prefix, family: m.probe.spec.family, title: m.probe.spec.title })) });
  }
  const found = ctx.findMount(path);
  if (!found) {
    const guess = path.split('/').slice(1, 3).join('/');
    throw new WireError(404, `unknown env ${JSON.stringify(guess)}; served envs: ${ctx.mounts.map((m) => m.envId).join(', ')} (each under /<env id>/...)`);
  }
  const { mount: m, rest } = found;
  const route = Object.hasOwn(ROUTES, rest) ? ROUTES[rest] : undefined;
  if (!route) throw ctx.unknownPath(path);
  if (method !== route.method) throw new WireError(405, `${rest} answers ${route.method} only`);
  const headerSession = typeof req.headers['x-session-id'] === 'string' ? req.headers['x-session-id'] : undefined;
  return route.run({ ctx, m, req, res, url, headerSession, client: clientOf(req.socket.remoteAddress), body: () => readBody(req, ctx.opts.maxBodyBytes) });
}
