/**
 * The server's limits and its CLI: a taken port, session capacity per server and per client,
 * half-sent requests, idle timeouts, simulated tool latency, and `npm run serve`'s flags. A real
 * server on a loopback port each time (the protocol itself: server.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { startServer } from './server.ts';
import { main as serveMain } from '../cli/serve.ts';
import type { Clock } from '../core/envs/clock.ts';
import { http, httpExpertEpisode, httpFrom, inProcessExpertEpisode, serveUrl, WsSession } from './testClients.ts';

const CALC = 'tools/calculator';

describe('sessions: capacity, idle timeout, simulated latency', () => {
  it('says so when the port is taken', async () => {
    const first = await startServer({ envs: [CALC], port: 0 });
    try {
      await expect(startServer({ envs: [CALC], port: first.port })).rejects.toThrow(`port ${first.port} on 127.0.0.1 is already in use: pick another with --port`);
    } finally {
      await first.close();
    }
  });

  it('refuses sessions past maxSessions with 429 (HTTP) or CAPACITY_REACHED (WebSocket)', async () => {
    const server = await startServer({ envs: [CALC], port: 0, latency: 'skip', maxSessions: 2 });
    try {
      expect((await http('POST', `${server.url}/reset`, { session_id: 'one' })).status).toBe(200);
      const ws = await WsSession.open(`${server.url.replace('http', 'ws')}/ws`);
      const full = await http('POST', `${server.url}/reset`, { session_id: 'three' });
      expect(full.status).toBe(429);
      expect((full.body as { detail: string }).detail).toMatch(/at capacity: 2 of 2/);
      const ws2 = await WsSession.open(`${server.url.replace('http', 'ws')}/ws`);
      expect(await ws2.next()).toMatchObject({ type: 'error', data: { code: 'CAPACITY_REACHED' } });
      await ws.close();
      // Closing a session frees its place.
      expect((await http('POST', `${server.url}/close`, { session_id: 'one' })).body).toEqual({ session_id: 'one', closed: true });
      expect((await http('POST', `${server.url}/reset`, { session_id: 'three' })).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('holds each client (remote address) to its quota of sessions: a reset storm cannot take every place', async () => {
    expect((await startServer({ envs: [CALC], port: 0, maxSessions: 8 }).then(async (s) => (await s.close(), s))).sessions.maxPerClient).toBe(6);
    const server = await startServer({ envs: [CALC], port: 0, latency: 'skip', maxSessions: 8, maxSessionsPerClient: 3 });
    // Two clients on loopback addresses of their own.
    const A = '127.0.0.2';
    const B = '127.0.0.3';
    const ws = server.url.replace('http', 'ws');
    try {
      for (let i = 0; i < 3; i++) expect((await httpFrom(A, 'POST', `${server.url}/reset`, { session_id: `a${i}` })).status).toBe(200);
      const storm = await Promise.all(Array.from({ length: 20 }, (_, i) => httpFrom(A, 'POST', `${server.url}/reset`, { session_id: `storm${i}` })));
      expect(storm.map((r) => r.status)).toEqual(storm.map(() => 429));
      expect((storm[0].body as { detail: string }).detail).toMatch(/^client 127\.0\.0\.2 holds 3 sessions, its quota \(of 8 on this server\); close some/);
      // Its WebSocket sessions and verl-tool trajectories count too.
      const wsA = await WsSession.open(`${ws}/ws`, A);
      expect(await wsA.next()).toMatchObject({ type: 'error', data: { code: 'CAPACITY_REACHED', message: expect.stringMatching(/client 127\.0\.0\.2 holds 3 sessions, its quota/) } });
      const verlA = await httpFrom(A, 'POST', `${server.url}/get_observation`, { trajectory_ids: ['t'], actions: ['calc(1)'], extra_fields: [{ seed: 1 }] });
      expect((verlA.body as { valids: boolean[]; observations: { obs: string }[] }).observations[0].obs).toMatch(/its quota/);
      // Another client still finds places, on every protocol.
      expect((await httpFrom(B, 'POST', `${server.url}/reset`, { session_id: 'b0' })).status).toBe(200);
      const wsB = await WsSession.open(`${ws}/ws`, B);
      expect(await wsB.request({ type: 'reset', data: { seed: 4 } })).toMatchObject({ type: 'observation' });
      const verlB = await httpFrom(B, 'POST', `${server.url}/get_observation`, { trajectory_ids: ['t'], actions: ['calc(1)'], extra_fields: [{ seed: 1 }] });
      expect((verlB.body as { valids: boolean[] }).valids).toEqual([true]);
      expect([server.sessions.heldBy(A), server.sessions.heldBy(B)]).toEqual([3, 3]);
      // Resetting a session it holds is no new place; closing one frees a place in its quota.
      expect((await httpFrom(A, 'POST', `${server.url}/reset`, { session_id: 'a0', seed: 2 })).status).toBe(200);
      expect((await httpFrom(A, 'POST', `${server.url}/close`, { session_id: 'a1' })).status).toBe(200);
      expect((await httpFrom(A, 'POST', `${server.url}/reset`, { session_id: 'a3' })).status).toBe(200);
      await wsA.close();
      await wsB.close();
    } finally {
      await server.close();
    }
  });

  it('takes --request-timeout and --max-sessions-per-client within their bounds', async () => {
    await expect(serveMain(['--env', CALC, '--request-timeout', '0'])).rejects.toThrow(/^--request-timeout must be an integer from 1 to 3600, got "0"/);
    await expect(serveMain(['--env', CALC, '--max-sessions-per-client', 'many'])).rejects.toThrow(/^--max-sessions-per-client must be an integer from 1 to 1000000/);
  });

  it('answers half-sent requests with 408 and hangs them up after requestTimeoutS; whole requests and open WebSockets carry on', async () => {
    const server = await startServer({ envs: [CALC], port: 0, latency: 'skip', requestTimeoutS: 0.5 });
    const halves = [
      '', // connects, sends nothing
      'POST /reset HTTP/1.1\r\nHost: x\r\n', // half the headers
      'POST /reset HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"seed": ', // half the body
      'GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n', // half an upgrade
    ];
    const halfOpen = (text: string) =>
      new Promise<{ reply: string; ms: number }>((resolve, reject) => {
        const t0 = performance.now();
        const socket = connect(server.port, '127.0.0.1', () => void (text && socket.write(text)));
        let reply = '';
        socket.on('data', (d) => (reply += d.toString()));
        socket.on('error', () => undefined);
        socket.on('close', () => resolve({ reply, ms: performance.now() - t0 }));
        setTimeout(() => {
          socket.destroy();
          reject(new Error(`still open after 5 s: ${JSON.stringify(text)}`));
        }, 5000);
      });
    try {
      const older = await WsSession.open(`${server.url.replace('http', 'ws')}/ws`);
      const sockets = Array.from({ length: 40 }, (_, i) => halfOpen(halves[i % halves.length]));
      // Meanwhile a whole request is answered at once.
      expect((await http('POST', `${server.url}/reset`, { seed: 1 })).status).toBe(200);
      const closed = await Promise.all(sockets);
      for (const c of closed) {
        expect(c.ms).toBeLessThan(2500);
        expect(c.reply).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n[\s\S]*request not received in full within 0\.5 s/);
      }
      // The WebSocket opened before, idle longer than the request timeout, still plays.
      await new Promise((r) => setTimeout(r, 300));
      expect(await older.request({ type: 'reset', data: { seed: 2 } })).toMatchObject({ type: 'observation' });
      await older.close();
    } finally {
      await server.close();
    }
  });

  it('closes trajectories and sessions left idle past the timeout', async () => {
    const server = await startServer({ envs: [CALC], port: 0, latency: 'skip', idleTimeoutS: 0.2 });
    try {
      await http('POST', `${server.url}/get_observation`, { trajectory_ids: ['t1'], actions: ['calc(1)'], extra_fields: [{ seed: 1 }] });
      await http('POST', `${server.url}/reset`, { session_id: 'idle' });
      const ws = await WsSession.open(`${server.url.replace('http', 'ws')}/ws`);
      expect(server.sessions.size).toBe(3);
      await new Promise((r) => setTimeout(r, 450));
      expect(server.sessions.size).toBe(0);
      // An idle WebSocket session is hung up with a normal close.
      expect({ closed: ws.closed, code: ws.closeCode }).toEqual({ closed: true, code: 1000 });
      expect((await http('POST', `${server.url}/step`, { action: { text: 'calc(1)' }, session_id: 'idle' })).status).toBe(404);
      // A closed trajectory id starts afresh on its next use (it needs its seed again).
      const again = await http('POST', `${server.url}/get_observation`, { trajectory_ids: ['t1'], actions: ['calc(1)'] });
      expect((again.body as { valids: boolean[] }).valids).toEqual([false]);
    } finally {
      await server.close();
    }
  });

  it('waits out each tool call\'s simulated latency with latency "real" (capped at latencyCapMs), and not with "skip"', async () => {
    const slept: number[] = [];
    const clock: Clock = { now: () => 0, sleep: (ms) => (slept.push(ms), Promise.resolve()) };
    for (const [latency, latencyCapMs] of [['real', 10_000], ['real', 20], ['skip', 10_000]] as const) {
      slept.length = 0;
      const server = await startServer({ envs: ['tools/flaky-api'], port: 0, latency, latencyCapMs, clock });
      try {
        const served = await httpExpertEpisode(server.url, 1);
        const calls = served.results.slice(1).map((r) => (r.observation.info as { latencyMs: number }).latencyMs).filter((ms) => ms > 0);
        expect(calls.length).toBeGreaterThan(0);
        expect(slept).toEqual(latency === 'real' ? calls.map((ms) => Math.min(ms, latencyCapMs)) : []);
        if (latencyCapMs === 20) expect(calls.filter((ms) => ms > 20).length).toBe(2);
        expect(served.results).toEqual(inProcessExpertEpisode('tools/flaky-api', 1).results);
      } finally {
        await server.close();
      }
    }
  });
});

describe('npm run serve (the CLI)', () => {
  it('serves tools/calculator at the root: health, reset, step, schema, get_observation; bad flags exit 2', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/serve.ts', '--env', CALC, '--port', '0', '--latency', 'skip'], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const url = await serveUrl(child, 30_000);
      expect((await http('GET', `${url}/health`)).body).toEqual({ status: 'healthy' });
      const local = inProcessExpertEpisode(CALC, 21);
      expect((await http('POST', `${url}/reset`, { seed: 21 })).body).toEqual(local.results[0]);
      expect((await http('POST', `${url}/step`, { action: local.actions[0] })).body).toEqual(local.results[1]);
      expect((await http('GET', `${url}/schema`)).body).toHaveProperty('action.required', ['text']);
      const verl = await http('POST', `${url}/get_observation`, { trajectory_ids: ['x'], actions: [(local.actions[0] as { text: string }).text], extra_fields: [{ seed: 21 }] });
      expect((verl.body as { observations: { obs: string }[] }).observations[0].obs).toBe(local.results[1].observation.text);
    } finally {
      child.kill('SIGTERM');
    }
    const bad = spawn(process.execPath, ['--import', 'tsx', 'src/cli/serve.ts', '--env', 'tools/nope'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    bad.stderr.on('data', (d) => (err += d.toString()));
    const code = await new Promise<number | null>((resolve) => bad.on('exit', resolve));
    expect(code).toBe(2);
    expect(err).toMatch(/unknown env "tools\/nope"; registered envs: .*tools\/calculator/);
  });
});
