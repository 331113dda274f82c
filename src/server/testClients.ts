/**
 * Small clients that speak the served protocols exactly as documented (JSON over HTTP, OpenEnv's
 * WebSocket messages, verl-tool batches), plus the in-process reference an episode is compared
 * with. Used by the protocol tests and the serve bench.
 */
import type { ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { request } from 'node:http';
import WebSocket from 'ws';
import { makeEnv, type EnvKwargs } from '../core/envs/index.ts';
import { actionToWire, resetToWire, stepToWire, type Json, type WireResult } from './wire.ts';

export interface HttpReply {
  status: number;
  body: unknown;
  contentType: string | null;
}

/** One HTTP request with a JSON (or raw string) body; the reply body parsed as JSON when it is JSON. */
export async function http(method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<HttpReply> {
  const res = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  const contentType = res.headers.get('content-type');
  let parsed: unknown = text;
  if (contentType?.includes('application/json')) parsed = JSON.parse(text);
  return { status: res.status, body: parsed, contentType };
}

/** As `http`, sent from `localAddress` (another loopback address is another client to the server's per-client quota). */
export function httpFrom(localAddress: string, method: string, url: string, body?: unknown): Promise<HttpReply> {
  return new Promise((resolve, reject) => {
    const text = body === undefined ? undefined : JSON.stringify(body);
    const req = request(url, { method, localAddress, headers: { 'content-type': 'application/json', ...(text === undefined ? {} : { 'content-length': Buffer.byteLength(text) }) } }, (res) => {
      let data = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (data += d));
      res.on('end', () => {
        const contentType = res.headers['content-type'] ?? null;
        resolve({ status: res.statusCode ?? 0, body: contentType?.includes('application/json') ? JSON.parse(data) : data, contentType });
      });
    });
    req.on('error', reject);
    req.end(text);
  });
}

/** The expert episode for `seed` played in-process: what every served session must reproduce. */
export function inProcessExpertEpisode(envId: string, seed: number, kwargs: EnvKwargs = {}, maxSteps = 500): { results: WireResult[]; actions: Json[] } {
  const env = makeEnv(envId, kwargs);
  const results = [resetToWire(env.reset({ seed }))];
  const actions: Json[] = [];
  for (let t = 0; t < maxSteps && !results[results.length - 1].done; t++) {
    const a = env.expertAction();
    if (a === null) break;
    actions.push(actionToWire(env, a));
    results.push(stepToWire(env.step(a)));
  }
  return { results, actions };
}

/** An OpenEnv WebSocket session: send one message, read its one reply. */
export class WsSession {
  private queue: unknown[] = [];
  private waiters: ((msg: unknown) => void)[] = [];
  closed = false;
  closeCode: number | null = null;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (raw) => {
      const msg = JSON.parse(raw.toString());
      const w = this.waiters.shift();
      if (w) w(msg);
      else this.queue.push(msg);
    });
    ws.on('close', (code) => {
      this.closed = true;
      this.closeCode = code;
      for (const w of this.waiters.splice(0)) w({ type: 'closed', code });
    });
  }

  /** `localAddress`: the loopback address to connect from (e.g. 127.0.0.2: another client, for per-client quotas). */
  static open(url: string, localAddress?: string): Promise<WsSession> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, localAddress ? { localAddress } : {});
      const s = new WsSession(ws);
      ws.once('open', () => resolve(s));
      ws.once('error', reject);
    });
  }

  next(): Promise<{ type: string; data: Record<string, Json> }> {
    const m = this.queue.shift();
    if (m !== undefined) return Promise.resolve(m as { type: string; data: Record<string, Json> });
    if (this.closed) return Promise.resolve({ type: 'closed', data: {} });
    return new Promise((resolve) => this.waiters.push(resolve as (msg: unknown) => void));
  }

  /** Sends a message (an object, or raw text to test garbage) and returns the reply. */
  request(msg: unknown): Promise<{ type: string; data: Record<string, Json> }> {
    this.ws.send(typeof msg === 'string' ? msg : JSON.stringify(msg));
    return this.next();
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      this.ws.once('close', () => resolve());
      this.ws.send(JSON.stringify({ type: 'close' }));
    });
  }
}

/** Plays the served expert episode over WebSocket, reading each action from `state.expert_action`. */
export async function wsExpertEpisode(s: WsSession, seed: number, maxSteps = 500): Promise<{ results: WireResult[]; actions: Json[] }> {
  const first = await s.request({ type: 'reset', data: { seed } });
  if (first.type !== 'observation') throw new Error(`reset answered ${JSON.stringify(first)}`);
  const results = [first.data as unknown as WireResult];
  const actions: Json[] = [];
  for (let t = 0; t < maxSteps && !results[results.length - 1].done; t++) {
    const state = await s.request({ type: 'state' });
    const action = state.data.expert_action;
    actions.push(action);
    const r = await s.request({ type: 'step', data: action });
    if (r.type !== 'observation') throw new Error(`step answered ${JSON.stringify(r)}`);
    results.push(r.data as unknown as WireResult);
  }
  return { results, actions };
}

/** Plays the served expert episode over HTTP under `sessionId` (undefined = the default session). */
export async function httpExpertEpisode(base: string, seed: number, sessionId?: string, maxSteps = 500): Promise<{ results: WireResult[]; actions: Json[] }> {
  const sid = sessionId === undefined ? {} : { session_id: sessionId };
  const first = await http('POST', `${base}/reset`, { seed, ...sid });
  if (first.status !== 200) throw new Error(`reset answered ${first.status} ${JSON.stringify(first.body)}`);
  const results = [first.body as WireResult];
  const actions: Json[] = [];
  const q = sessionId === undefined ? '' : `?session_id=${encodeURIComponent(sessionId)}`;
  for (let t = 0; t < maxSteps && !results[results.length - 1].done; t++) {
    const state = await http('GET', `${base}/state${q}`);
    const action = (state.body as Record<string, Json>).expert_action;
    actions.push(action);
    const r = await http('POST', `${base}/step`, { action, ...sid });
    if (r.status !== 200) throw new Error(`step answered ${r.status} ${JSON.stringify(r.body)}`);
    results.push(r.body as WireResult);
  }
  return { results, actions };
}

export interface VerlTrajectory {
  id: string;
  seed: number;
  /** The observations the server returned, one per turn. */
  observations: Json[];
  valids: boolean[];
  done: boolean;
}

/**
 * A verl-tool-shaped rollout client: keeps `seeds.length` trajectories in flight, sends every
 * live one's next action in one `POST /get_observation` per turn, and finishes them all at the
 * end. The policy is the expert of an in-process copy of each trajectory's env (same seed), so
 * the copy's replies must match the server's.
 */
export async function verlExpertBatch(base: string, envId: string, seeds: number[], maxTurns = 50): Promise<{ trajectories: VerlTrajectory[]; requests: number; mismatches: string[] }> {
  const mirrors = seeds.map((seed) => {
    const env = makeEnv(envId);
    env.reset({ seed });
    return env;
  });
  const trajectories: VerlTrajectory[] = seeds.map((seed, i) => ({ id: `traj-${i}-seed-${seed}`, seed, observations: [], valids: [], done: false }));
  const mismatches: string[] = [];
  let requests = 0;
  for (let turn = 0; turn < maxTurns && trajectories.some((t) => !t.done); turn++) {
    const live = trajectories.map((t, i) => ({ t, i })).filter(({ t }) => !t.done);
    const actions = live.map(({ i }) => mirrors[i].expertAction() as string);
    const res = await http('POST', `${base}/get_observation`, {
      trajectory_ids: live.map(({ t }) => t.id),
      actions,
      finish: live.map(() => false),
      is_last_step: live.map(() => false),
      extra_fields: live.map(({ t }) => ({ seed: t.seed })),
    });
    requests++;
    if (res.status !== 200) throw new Error(`get_observation answered ${res.status} ${JSON.stringify(res.body)}`);
    const body = res.body as { observations: Record<string, Json>[]; dones: boolean[]; valids: boolean[] };
    live.forEach(({ t, i }, k) => {
      const expected = stepToWire(mirrors[i].step(actions[k]));
      const got = body.observations[k];
      if (got.obs !== expected.observation.text || got.reward !== expected.reward || body.dones[k] !== expected.done) {
        mismatches.push(`${t.id} turn ${turn}: got ${JSON.stringify(got)} done ${body.dones[k]}, expected ${JSON.stringify(expected)}`);
      }
      t.observations.push(got);
      t.valids.push(body.valids[k]);
      t.done = body.dones[k];
    });
  }
  const fin = await http('POST', `${base}/get_observation`, {
    trajectory_ids: trajectories.map((t) => t.id),
    actions: trajectories.map(() => ''),
    finish: trajectories.map(() => true),
    is_last_step: trajectories.map(() => true),
  });
  requests++;
  if (fin.status !== 200) throw new Error(`finish answered ${fin.status} ${JSON.stringify(fin.body)}`);
  return { trajectories, requests, mismatches };
}

/** The URL a spawned `npm run serve` prints in its banner; rejects when it exits first or prints none within `timeoutMs`. */
export function serveUrl(child: ChildProcess & { stdout: Readable }, timeoutMs: number): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`no banner in ${timeoutMs / 1000} s: ${out}`)), timeoutMs);
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.on('exit', (code) => reject(new Error(`serve exited ${code}: ${out}`)));
  });
}
