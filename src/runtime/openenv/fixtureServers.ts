/**
 * Servers for the remote env's tests, each run in a child process (`node --import tsx
 * fixtureServers.ts <kind>`; it prints `listening <port>`): a remote env blocks its thread on
 * every call, so the server it talks to cannot share that thread.
 *   silent  accepts WebSockets and never answers
 *   mcp     an OpenEnv MCP env: tools/list over the socket's `mcp` message, call_tool steps;
 *           `add(a, b)` then `submit(answer)`, reward 1 for 5; logs each step to stderr as JSON
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { resolve } from 'node:path';
import { WebSocketServer, type WebSocket } from 'ws';

function mcpEnv(ws: WebSocket): void {
  ws.on('message', (raw) => {
    const m = JSON.parse(raw.toString()) as { type: string; data: Record<string, unknown> };
    const send = (type: string, data: unknown) => ws.send(JSON.stringify({ type, data }));
    if (m.type === 'mcp') {
      return send('mcp', { jsonrpc: '2.0', id: m.data.id, result: { tools: [
        { name: 'add', description: 'a + b', input_schema: { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer' } } } },
        { name: 'submit', description: 'final answer', inputSchema: { type: 'object', properties: { answer: { type: 'integer' } } } },
      ] } });
    }
    if (m.type === 'reset') return send('observation', { observation: { text: 'task: what is 2 + 3?' }, reward: null, done: false });
    process.stderr.write(`${JSON.stringify(m.data)}\n`);
    const args = m.data.arguments as Record<string, number>;
    if (m.data.tool_name === 'add') return send('observation', { observation: { tool_name: 'add', result: { content: [{ type: 'text', text: String(args.a + args.b) }] }, error: null }, reward: 0, done: false });
    return send('observation', { observation: { tool_name: 'submit', result: { data: args.answer === 5 ? 'right' : 'wrong' }, error: null }, reward: args.answer === 5 ? 1 : 0, done: true });
  });
}

function main(kind: string): void {
  const http = createServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({ server: http });
  wss.on('connection', (ws) => (kind === 'mcp' ? mcpEnv(ws) : undefined));
  http.listen(0, '127.0.0.1', () => console.log(`listening ${(http.address() as AddressInfo).port}`));
}

/** A running child server: its address, what it wrote to stderr, and how to stop it. */
export interface ChildServer {
  url: string;
  stderr: () => string;
  kill(): Promise<void>;
}

const ROOT = resolve(fileURLToPath(import.meta.url), '../../../..');

function startChild(args: string[], portLine: RegExp): Promise<ChildServer> {
  return new Promise((done, fail) => {
    const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = portLine.exec(out);
      if (m) {
        done({
          url: `ws://127.0.0.1:${m[1]}`,
          stderr: () => err,
          kill: () => new Promise((r) => {
            if (child.exitCode !== null) return r();
            child.once('exit', () => r());
            child.kill();
          }),
        });
      }
    });
    child.once('exit', (code) => fail(new Error(`server exited (${code}) before listening: ${err}`)));
  });
}

/** `npm run serve -- --env <env> --port 0 --latency skip` in a child process. */
export function startServeChild(env: string, extra: string[] = []): Promise<ChildServer> {
  return startChild(['src/cli/serve.ts', '--env', env, '--port', '0', '--latency', 'skip', ...extra], /on http:\/\/127\.0\.0\.1:(\d+)/);
}

/** One of the fixtures above in a child process. */
export function startFixtureChild(kind: 'silent' | 'mcp'): Promise<ChildServer> {
  return startChild(['src/runtime/openenv/fixtureServers.ts', kind], /listening (\d+)/);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main(process.argv[2] ?? 'silent');
