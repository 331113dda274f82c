/**
 * The OpenEnv client against the project's own server (a real one on a loopback port), and against
 * small hand-written servers for what that server never does: never answer, answer garbage, serve
 * MCP tools. Served episodes are compared with the same seed played in-process.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { startServer, type RunningServer } from '../../server/server.ts';
import { inProcessExpertEpisode } from '../../server/testClients.ts';
import { OpenEnvClient, openEnvAddresses, type OpenEnvResult } from './client.ts';
import { OpenEnvError } from './errors.ts';
import type { WsConstructor } from './wsChannel.ts';

const CALC = 'tools/calculator';
const Ws = WebSocket as unknown as WsConstructor;

/** Plays the expert episode through the client, the expert's action read from the server's state. */
async function expertEpisode(c: OpenEnvClient, seed: number): Promise<OpenEnvResult[]> {
  const out = [await c.reset({ seed })];
  while (!out[out.length - 1].done) {
    const action = (await c.state()).expert_action as Record<string, unknown>;
    out.push(await c.step(action));
  }
  return out;
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(OpenEnvError);
    return `${(e as OpenEnvError).code}: ${(e as Error).message}`;
  }
  return 'resolved';
}

function listen(server: Server): Promise<string> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(`127.0.0.1:${(server.address() as AddressInfo).port}`)));
}

describe('addresses', () => {
  it('derives the HTTP base and the /ws address from any of the four schemes, keeping a path prefix', () => {
    expect(openEnvAddresses('ws://h:1')).toEqual({ http: 'http://h:1', ws: 'ws://h:1/ws' });
    expect(openEnvAddresses('wss://h/tools/calculator/ws')).toEqual({ http: 'https://h/tools/calculator', ws: 'wss://h/tools/calculator/ws' });
    expect(openEnvAddresses('http://h:2/a/')).toEqual({ http: 'http://h:2/a', ws: 'ws://h:2/a/ws' });
    expect(() => openEnvAddresses('ftp://h')).toThrow(/ws:\/\/, wss:\/\/, http:\/\/ or https:\/\//);
    expect(() => openEnvAddresses('127.0.0.1:8000')).toThrow(/not an address|not ws/);
  });
});

describe('against the project server', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ envs: [CALC], host: '127.0.0.1', port: 0, latency: 'skip', maxSessions: 4, maxSessionsPerClient: 4 });
  });
  afterAll(() => server.close());

  it('plays episodes over the WebSocket exactly as in-process', async () => {
    const c = new OpenEnvClient({ url: server.url.replace('http', 'ws'), WebSocket: Ws, transport: 'ws' });
    for (const seed of [0, 7]) expect(await expertEpisode(c, seed)).toEqual(inProcessExpertEpisode(CALC, seed).results);
    expect(c.transport).toBe('ws');
    await c.dispose();
  });

  it('plays episodes over HTTP (its own session id) exactly as in-process', async () => {
    const c = new OpenEnvClient({ url: server.url, transport: 'http' });
    expect(await expertEpisode(c, 11)).toEqual(inProcessExpertEpisode(CALC, 11).results);
    expect(c.transport).toBe('http');
    // The session was this client's own, not the shared default one.
    expect(server.sessions.size).toBe(1);
    await c.close();
    expect(server.sessions.size).toBe(0);
  });

  it('replays the episode into a new socket when the server drops the connection mid-episode', async () => {
    const c = new OpenEnvClient({ url: server.url, WebSocket: Ws, reconnectDelayMs: 10 });
    const local = inProcessExpertEpisode(CALC, 5);
    const first = await c.reset({ seed: 5 });
    server.sessions.closeAll();
    await new Promise((r) => setTimeout(r, 50));
    // The server forgot the episode; the step still lands on the same state.
    expect([first, await c.step(local.actions[0] as Record<string, unknown>)]).toEqual(local.results.slice(0, 2));
    await c.dispose();
  });

  it('turns CAPACITY_REACHED into a named error that says how to make room, without retrying', async () => {
    const held = await Promise.all([0, 1, 2, 3].map(async (i) => {
      const c = new OpenEnvClient({ url: server.url, WebSocket: Ws, transport: 'ws' });
      await c.reset({ seed: i });
      return c;
    }));
    const extra = new OpenEnvClient({ url: server.url, WebSocket: Ws, transport: 'ws', reconnectDelayMs: 10 });
    const msg = await codeOf(extra.reset({ seed: 9 }));
    expect(msg).toMatch(/^CAPACITY_REACHED: /);
    expect(msg).toMatch(/--max-sessions/);
    for (const c of held) await c.dispose();
    // The server frees a place once it sees the socket close.
    for (let i = 0; i < 100 && server.sessions.size > 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(server.sessions.size).toBe(0);
  });

  it('says MCP is not served by a server whose env has no tools (a JSON-RPC error, not a crash)', async () => {
    const c = new OpenEnvClient({ url: server.url, WebSocket: Ws });
    expect(await codeOf(c.mcp.listTools())).toMatch(/^MCP_ERROR: MCP tools\/list: .*does not support MCP/);
    await c.dispose();
  });

  it('reports a server that is not there as CONNECT_FAILED, naming the address', async () => {
    const dead = createServer();
    const addr = await listen(dead);
    await new Promise((r) => dead.close(r));
    const c = new OpenEnvClient({ url: `ws://${addr}`, WebSocket: Ws, connectTimeoutMs: 2000, timeoutMs: 2000 });
    expect(await codeOf(c.reset())).toMatch(new RegExp(`^CONNECT_FAILED: ws://${addr}: no OpenEnv server answers there`));
  });
});

describe('falls back to HTTP where no WebSocket opens', () => {
  let server: RunningServer;
  let proxy: Server;
  let addr: string;
  beforeAll(async () => {
    server = await startServer({ envs: [CALC], host: '127.0.0.1', port: 0, latency: 'skip' });
    // An HTTP-only front (as a proxy that drops upgrades): requests pass through, upgrades get 404.
    proxy = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const r = await fetch(`${server.url}${req.url}`, { method: req.method, headers: { 'content-type': 'application/json' }, body: req.method === 'GET' ? undefined : Buffer.concat(chunks) });
      res.writeHead(r.status, { 'content-type': 'application/json' });
      res.end(await r.text());
    });
    proxy.on('upgrade', (_req, socket) => socket.end('HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n'));
    addr = await listen(proxy);
  });
  afterAll(async () => {
    await new Promise((r) => proxy.close(r));
    await server.close();
  });

  it("plays the same episode over HTTP when 'auto' finds no socket", async () => {
    const c = new OpenEnvClient({ url: `ws://${addr}`, WebSocket: Ws });
    expect(await expertEpisode(c, 3)).toEqual(inProcessExpertEpisode(CALC, 3).results);
    expect(c.transport).toBe('http');
    await c.dispose();
  });

  it("refuses with CONNECT_FAILED when 'ws' is insisted on", async () => {
    const c = new OpenEnvClient({ url: `ws://${addr}`, WebSocket: Ws, transport: 'ws' });
    expect(await codeOf(c.reset())).toMatch(/^CONNECT_FAILED: .*did not open/);
  });
});

describe('servers that misbehave', () => {
  let http: Server;
  let wss: WebSocketServer;
  let addr: string;
  /** What the WebSocket server does with each message, per test. */
  let onWs: (ws: WebSocket, msg: string) => void = () => undefined;
  beforeAll(async () => {
    http = createServer((req, res) => {
      if (req.url === '/silent/reset') return; // never answers
      if (req.url === '/garbage/reset') return res.writeHead(200, { 'content-type': 'application/json' }).end('{"observation": ');
      res.writeHead(404).end();
    });
    wss = new WebSocketServer({ server: http });
    wss.on('connection', (ws) => ws.on('message', (m) => onWs(ws, m.toString())));
    addr = await listen(http);
  });
  afterAll(async () => {
    for (const c of wss.clients) c.terminate();
    wss.close();
    await new Promise((r) => http.close(r));
  });

  it('times out on a WebSocket server that never answers, within the timeout, naming the request', async () => {
    onWs = () => undefined;
    const c = new OpenEnvClient({ url: `ws://${addr}`, WebSocket: Ws, timeoutMs: 150 });
    const t0 = Date.now();
    expect(await codeOf(c.step({ text: 'x' }))).toMatch(/^TIMEOUT: .*no reply to step within 150 ms/);
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it('times out on an HTTP server that never answers', async () => {
    const c = new OpenEnvClient({ url: `http://${addr}/silent`, transport: 'http', timeoutMs: 150 });
    expect(await codeOf(c.reset())).toMatch(/^TIMEOUT: .*\/reset: no reply within 150 ms/);
  });

  it('rejects a message that is not JSON, one without a type, and a reply of the wrong shape', async () => {
    const cases: [string, RegExp][] = [
      ['{"type": "observation", "data": ', /^MALFORMED_REPLY: .*not JSON/],
      ['[1, 2]', /^MALFORMED_REPLY: .*without a type/],
      ['{"type": "observation", "data": {"observation": {"text": "hi"}}}', /^MALFORMED_REPLY: .*expected \{observation/],
      ['{"type": "state", "data": {}}', /^MALFORMED_REPLY: .*expected a 'observation' reply to reset, got 'state'/],
    ];
    for (const [reply, want] of cases) {
      onWs = (ws) => ws.send(reply);
      const c = new OpenEnvClient({ url: `ws://${addr}`, WebSocket: Ws, timeoutMs: 2000 });
      expect(await codeOf(c.reset())).toMatch(want);
    }
  });

  it('passes a server error code on with its message, and keeps the session for the next request', async () => {
    let n = 0;
    onWs = (ws) => ws.send(n++ === 0 ? JSON.stringify({ type: 'error', data: { code: 'VALIDATION_ERROR', message: 'data.text: Field required' } }) : JSON.stringify({ type: 'observation', data: { observation: { text: 'ok' }, reward: 0, done: false } }));
    const c = new OpenEnvClient({ url: `ws://${addr}`, WebSocket: Ws });
    expect(await codeOf(c.step({}))).toMatch(/^VALIDATION_ERROR: .*do not fit its schema \(VALIDATION_ERROR: data\.text: Field required\)/);
    expect(await c.step({ text: 'a' })).toEqual({ observation: { text: 'ok' }, reward: 0, done: false });
    await c.dispose();
  });

  it('rejects a truncated HTTP body as MALFORMED_REPLY', async () => {
    const c = new OpenEnvClient({ url: `http://${addr}/garbage`, transport: 'http' });
    expect(await codeOf(c.reset())).toMatch(/^MALFORMED_REPLY: .*not JSON/);
  });
});

describe('MCP', () => {
  let http: Server;
  let addr: string;
  const seen: Record<string, unknown>[] = [];
  beforeAll(async () => {
    // A JSON-RPC 2.0 server written from the MCP spec and OpenEnv's session extension: one tool
    // described with `inputSchema`, one with `input_schema` (as Python servers dump them).
    const sessions = new Set<string>();
    http = createServer(async (req, res) => {
      let body = '';
      for await (const c of req) body += c;
      const msg = JSON.parse(body) as { id: number; method: string; params: Record<string, unknown> };
      seen.push(msg);
      const reply = (result: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
      const fail = (code: number, message: string) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, error: { code, message } }));
      switch (msg.method) {
        case 'openenv/session/create':
          sessions.add(`s${sessions.size + 1}`);
          return reply({ session_id: `s${sessions.size}` });
        case 'openenv/session/close':
          return sessions.delete(msg.params.session_id as string) ? reply({ closed: true }) : fail(-32602, 'unknown session');
        case 'tools/list':
          return reply({ tools: [
            { name: 'add', description: 'a + b', inputSchema: { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer' } }, required: ['a', 'b'] } },
            { name: 'shout', description: 'upper case', input_schema: { type: 'object', properties: { text: { type: 'string' } } } },
          ] });
        case 'tools/call': {
          const { name, arguments: a } = msg.params as { name: string; arguments: Record<string, unknown> };
          if (name === 'add') return reply({ content: [{ type: 'text', text: String((a.a as number) + (a.b as number)) }], isError: false });
          if (name === 'shout') return reply({ data: String(a.text).toUpperCase() });
          return reply({ content: [{ type: 'text', text: `unknown tool ${name}` }], isError: true });
        }
        default:
          return fail(-32601, `Method not found: ${msg.method}`);
      }
    });
    addr = await listen(http);
  });
  afterAll(() => new Promise<void>((r) => http.close(() => r())));

  it('lists tools under either schema key and calls them, within a session', async () => {
    const c = new OpenEnvClient({ url: `http://${addr}`, transport: 'http' });
    expect(await c.mcp.createSession()).toBe('s1');
    const tools = await c.mcp.listTools();
    expect(tools.map((t) => [t.name, Object.keys((t.inputSchema.properties ?? {}) as object)])).toEqual([['add', ['a', 'b']], ['shout', ['text']]]);
    expect(await c.mcp.callTool('add', { a: 347, b: 8062 })).toMatchObject({ text: '8409', isError: false });
    expect(await c.mcp.callTool('shout', { text: 'hi' })).toMatchObject({ text: 'HI', isError: false });
    expect(await c.mcp.callTool('nope', {})).toMatchObject({ text: 'unknown tool nope', isError: true });
    // Every call after create carried the session id.
    expect(seen.slice(1).every((m) => (m.params as { session_id?: string }).session_id === 's1')).toBe(true);
    await c.mcp.closeSession();
    expect(await codeOf(c.mcp.request('resources/list'))).toMatch(/^MCP_ERROR: MCP resources\/list: the server has no such method \(JSON-RPC -32601/);
  });
});
