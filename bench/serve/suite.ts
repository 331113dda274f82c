/**
 * Suite `serve`: many concurrent sessions step a tool env through `npm run serve`.
 *
 * The server runs in its own process (the CLI, as a trainer would start it) on a loopback port.
 * This process opens `sessions` sessions at once, per protocol:
 *   ws    one OpenEnv WebSocket connection per session (the protocol's session endpoint)
 *   http  one HTTP session id per session (`session_id` in the bodies), keep-alive connections
 * and each session plays `episodes` expert episodes with seeds no other session uses. Every reply
 * (reset and step) is compared with the same seed played in-process: a reply that differs is a
 * crossed (or corrupted) session, a session whose connection fails or times out is lost.
 *
 * Step latency is measured at the client, from sending a step to its reply, for every step of
 * every session; steps/s is all steps over the wall time of the whole phase (resets included).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { loadavg } from 'node:os';
import { Agent, request } from 'node:http';
import WebSocket from 'ws';
import { makeEnv } from '../../src/core/envs/index.ts';
import { actionToWire, resetToWire, stepToWire, type Json } from '../../src/server/wire.ts';
import { quantile, sig } from '../lib/stats.ts';
import { table } from '../lib/table.ts';
import { UsageError, type SuiteOptions, type SuiteResult } from '../lib/suite.ts';

/** One request may take at most this long before its session counts as lost, ms. */
const REQUEST_TIMEOUT_MS = 30_000;

interface PhaseResult {
  protocol: 'ws' | 'http';
  sessions: number;
  episodes: number;
  steps: number;
  wall_s: number;
  steps_per_s: number;
  step_p50_ms: number;
  step_p99_ms: number;
  step_max_ms: number;
  /** Sessions whose connection failed, errored or timed out. */
  lost: number;
  /** Replies that differed from the in-process run of the same seed. */
  mismatched: number;
  /** Episodes that ended in success (the expert solves every calculator task). */
  successes: number;
}

function positiveInt(flags: SuiteOptions['flags'], name: string, fallback: number, max: number): number {
  const v = flags[name];
  if (v === undefined) return fallback;
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : NaN;
  if (!(n >= 1 && n <= max)) throw new UsageError(`--${name} must be an integer from 1 to ${max}, got ${JSON.stringify(v)}`);
  return n;
}

async function startServeProcess(envId: string, latency: string, maxSessions: number): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/serve.ts', '--env', envId, '--port', '0', '--latency', latency, '--max-sessions', String(maxSessions)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr?.on('data', (d) => (err += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`npm run serve printed no address in 60 s: ${out} ${err}`)), 60_000);
    child.stdout?.on('data', (d) => {
      out += d.toString();
      const m = /on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${err}`)));
  });
  return { url, child };
}

const withTimeout = <T>(p: Promise<T>, what: string): Promise<T> =>
  new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`${what}: no reply in ${REQUEST_TIMEOUT_MS} ms`)), REQUEST_TIMEOUT_MS);
    p.then(
      (v) => (clearTimeout(t), resolve(v)),
      (e) => (clearTimeout(t), reject(e)),
    );
  });

/** A minimal OpenEnv WebSocket session: one reply per message, in order. */
class WsClient {
  private waiters: { resolve: (v: string) => void; reject: (e: Error) => void }[] = [];
  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (raw) => this.waiters.shift()?.resolve(raw.toString()));
    const fail = (e: Error) => {
      for (const w of this.waiters.splice(0)) w.reject(e);
    };
    ws.on('close', () => fail(new Error('connection closed')));
    ws.on('error', fail);
  }
  static open(url: string): Promise<WsClient> {
    return withTimeout(
      new Promise((resolve, reject) => {
        const ws = new WebSocket(url);
        ws.once('open', () => resolve(new WsClient(ws)));
        ws.once('error', reject);
      }),
      'ws connect',
    );
  }
  request(msg: unknown): Promise<string> {
    return withTimeout(
      new Promise<string>((resolve, reject) => {
        this.waiters.push({ resolve, reject });
        this.ws.send(JSON.stringify(msg));
      }),
      'ws request',
    );
  }
  close(): void {
    this.ws.close();
  }
}

async function runPhase(protocol: 'ws' | 'http', url: string, envId: string, sessions: number, episodes: number, seedBase: number, progress: (s: string) => void): Promise<PhaseResult> {
  const latencies: number[] = [];
  let lost = 0;
  let mismatched = 0;
  let successes = 0;
  let firstProblem = '';
  // Keep-alive: each session reuses its connection, as a trainer's HTTP client would.
  const agent = new Agent({ keepAlive: true, maxSockets: sessions });
  const post = (path: string, body: unknown): Promise<string> =>
    withTimeout(
      new Promise<string>((resolve, reject) => {
        const data = JSON.stringify(body);
        const req = request(`${url}${path}`, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } }, (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () => (res.statusCode === 200 ? resolve(text) : reject(new Error(`POST ${path} answered ${res.statusCode}: ${text}`))));
          res.on('error', reject);
        });
        req.on('error', reject);
        req.end(data);
      }),
      `POST ${path}`,
    );

  const session = async (i: number): Promise<void> => {
    const mirror = makeEnv(envId);
    const sid = `bench-${i}`;
    let ws: WsClient | null = null;
    try {
      if (protocol === 'ws') ws = await WsClient.open(`${url.replace(/^http/, 'ws')}/ws`);
      for (let e = 0; e < episodes; e++) {
        const seed = seedBase + i * episodes + e;
        const expectedReset = JSON.stringify(resetToWire(mirror.reset({ seed })));
        const resetText = ws ? await ws.request({ type: 'reset', data: { seed } }) : await post('/reset', { seed, session_id: sid });
        const resetData = ws ? JSON.stringify(JSON.parse(resetText).data) : resetText;
        if (resetData !== expectedReset) {
          mismatched++;
          firstProblem ||= `session ${i} seed ${seed} reset: got ${resetData}, expected ${expectedReset}`;
        }
        for (let t = 0; t < mirror.spec.maxSteps + 1; t++) {
          const a = mirror.expertAction();
          if (a === null) break;
          const action = actionToWire(mirror, a) as Json;
          const expected = stepToWire(mirror.step(a));
          const t0 = performance.now();
          const text = ws ? await ws.request({ type: 'step', data: action }) : await post('/step', { action, session_id: sid });
          latencies.push(performance.now() - t0);
          const got = ws ? JSON.stringify(JSON.parse(text).data) : text;
          if (got !== JSON.stringify(expected)) {
            mismatched++;
            firstProblem ||= `session ${i} seed ${seed} step ${t}: got ${got}, expected ${JSON.stringify(expected)}`;
          }
          if (expected.done) {
            if ((expected.observation.info as { success?: boolean }).success) successes++;
            break;
          }
        }
      }
      if (!ws) await post('/close', { session_id: sid });
    } catch (e) {
      lost++;
      firstProblem ||= `session ${i}: ${(e as Error).message}`;
    } finally {
      ws?.close();
    }
  };

  const t0 = performance.now();
  await Promise.all(Array.from({ length: sessions }, (_, i) => session(i)));
  const wall = (performance.now() - t0) / 1000;
  agent.destroy();
  if (firstProblem) progress(`${protocol}: first problem: ${firstProblem}`);
  const n = latencies.length;
  return {
    protocol,
    sessions,
    episodes,
    steps: n,
    wall_s: sig(wall),
    steps_per_s: sig(n / wall),
    step_p50_ms: n ? sig(quantile(latencies, 0.5)) : NaN,
    step_p99_ms: n ? sig(quantile(latencies, 0.99)) : NaN,
    step_max_ms: n ? sig(Math.max(...latencies)) : NaN,
    lost,
    mismatched,
    successes,
  };
}

export async function runServe(opts: SuiteOptions): Promise<SuiteResult> {
  const envId = typeof opts.flags.env === 'string' ? opts.flags.env : 'tools/calculator';
  const probe = makeEnv(envId);
  if (probe.spec.family !== 'tool') throw new UsageError(`--env must be a tool env (this suite steps a tool env), got ${envId}`);
  const sessions = positiveInt(opts.flags, 'sessions', 256, 4096);
  const episodes = positiveInt(opts.flags, 'episodes', opts.quick ? 2 : 8, 1000);
  const latency = opts.flags.latency ?? 'skip';
  if (latency !== 'skip' && latency !== 'real') throw new UsageError(`--latency must be skip or real, got ${JSON.stringify(latency)}`);
  const protocols = (typeof opts.flags.protocols === 'string' ? opts.flags.protocols : 'ws,http').split(',');
  for (const p of protocols) if (p !== 'ws' && p !== 'http') throw new UsageError(`--protocols takes ws and/or http, got ${JSON.stringify(p)}`);

  opts.progress(`starting npm run serve --env ${envId} --latency ${latency}`);
  const { url, child } = await startServeProcess(envId, latency, sessions * 2);
  const phases: PhaseResult[] = [];
  try {
    let seedBase = 0;
    for (const p of protocols as ('ws' | 'http')[]) {
      opts.progress(`${p}: ${sessions} sessions x ${episodes} expert episodes`);
      phases.push(await runPhase(p, url, envId, sessions, episodes, seedBase, opts.progress));
      seedBase += sessions * episodes;
    }
  } finally {
    child.kill('SIGTERM');
  }
  opts.print(
    table(
      ['protocol', 'sessions', 'steps', 'wall s', 'steps/s', 'p50 ms', 'p99 ms', 'max ms', 'lost', 'crossed', 'successes'],
      phases.map((r) => [r.protocol, r.sessions, r.steps, r.wall_s, r.steps_per_s, r.step_p50_ms, r.step_p99_ms, r.step_max_ms, r.lost, r.mismatched, `${r.successes}/${r.sessions * r.episodes}`]),
    ),
  );
  const ok = phases.every((r) => r.lost === 0 && r.mismatched === 0);
  opts.print(ok ? 'no session lost or crossed: every reply equals the same seed run in-process' : 'SESSIONS LOST OR CROSSED (see stderr)');
  return { suite: 'serve', env: envId, latency, quick: opts.quick, loadavg: loadavg().map((x) => sig(x)), ok, phases };
}
