/**
 * `remote/openenv` through the real bridge (a network worker_thread, this thread blocking on each
 * call) against the project's server: the same episodes as the env played in-process, a named
 * error (never a hang) from a server that is gone, slow or dies mid-run, and MCP tools as actions
 * against a hand-written OpenEnv MCP server.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeEnv, type ToolEnv, type TranscriptFrame } from '../../core/envs/index.ts';
import { startFixtureChild, startServeChild, type ChildServer } from './fixtureServers.ts';
import { ensureEnvLink } from '../envLinks.node.ts';

const CALC = 'tools/calculator';

function play(env: ToolEnv, seed: number, actions: (env: ToolEnv, t: number) => string | null) {
  const out: unknown[] = [env.reset({ seed }).obs];
  for (let t = 0; ; t++) {
    const a = actions(env, t);
    if (a === null) break;
    const r = env.step(a);
    const { wireMs: _w, latencyMs: _l, ...info } = r.info;
    out.push({ obs: r.obs, reward: r.reward, terminated: r.terminated, truncated: r.truncated, success: info.success, toolCall: info.toolCall, malformed: info.malformed });
    if (r.terminated || r.truncated) break;
  }
  return out;
}

const expert = (env: ToolEnv) => env.expertAction();
const wrong = (_env: ToolEnv, t: number) => (t % 2 === 0 ? 'calc(1+1)' : 'nonsense');

beforeAll(() => ensureEnvLink('remote/openenv'));

describe('remote/openenv against the project server', () => {
  let server: ChildServer;
  beforeAll(async () => {
    server = await startServeChild(CALC);
  }, 30_000);
  afterAll(() => server.kill());

  it('plays the same episodes as the env in-process: the expert (read from the server) and a policy that runs out of turns', () => {
    const remote = makeEnv('remote/openenv', { url: server.url }) as ToolEnv;
    const local = makeEnv(CALC) as ToolEnv;
    expect(remote.spec.family).toBe('remote');
    for (const seed of [0, 1, 42]) {
      const r = play(remote, seed, expert);
      expect(r).toEqual(play(local, seed, expert));
      expect(r[r.length - 1]).toMatchObject({ reward: 1, terminated: true, success: true });
    }
    const r = play(remote, 9, wrong);
    expect(r).toEqual(play(local, 9, wrong));
    expect(r[r.length - 1]).toMatchObject({ truncated: true, success: false });
    const transcript = (e: ToolEnv) => (e.frame() as TranscriptFrame).messages;
    expect(transcript(remote).map((m) => m.role)).toEqual(transcript(local).map((m) => m.role));
    expect(transcript(remote).at(-2)).toEqual(transcript(local).at(-2));
  });

  it('reports the real time of each step as info.wireMs and simulates no further latency', () => {
    const remote = makeEnv('remote/openenv', { url: server.url.replace('ws:', 'http:') }) as ToolEnv;
    remote.reset({ seed: 3 });
    const r = remote.step('calc(2*3)');
    expect(r.info.wireMs).toBeTypeOf('number');
    expect(r.info.wireMs as number).toBeGreaterThanOrEqual(0);
    expect(r.info.latencyMs).toBe(0);
  });

  it('names the problem when there is no address, and refuses a malformed one as a kwarg', () => {
    expect(() => (makeEnv('remote/openenv') as ToolEnv).reset()).toThrow(/no server address: set env\.kwargs\.url/);
    expect(() => makeEnv('remote/openenv', { url: '127.0.0.1:8000' })).toThrow(/kwarg url must be a server address/);
  });
});

describe('a server that is gone, slow, or dies', () => {
  it('throws CONNECT_FAILED at reset when nothing listens, within the timeout', async () => {
    const s = createServer();
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
    const port = (s.address() as AddressInfo).port;
    await new Promise((r) => s.close(r));
    const env = makeEnv('remote/openenv', { url: `ws://127.0.0.1:${port}`, timeoutMs: 1000 }) as ToolEnv;
    const t0 = Date.now();
    expect(() => env.reset({ seed: 0 })).toThrow(/no OpenEnv server answers there/);
    expect(Date.now() - t0).toBeLessThan(5000);
  });

  it('throws TIMEOUT from a server that accepts the socket and never answers', async () => {
    const silent = await startFixtureChild('silent');
    const env = makeEnv('remote/openenv', { url: silent.url, timeoutMs: 300 }) as ToolEnv;
    const t0 = Date.now();
    expect(() => env.reset({ seed: 0 })).toThrow(/^TIMEOUT|no reply to reset within 300 ms/);
    expect(Date.now() - t0).toBeLessThan(3000);
    await silent.kill();
  }, 30_000);

  it('throws a named error when the server dies mid-episode', async () => {
    const server = await startServeChild(CALC);
    const env = makeEnv('remote/openenv', { url: server.url, timeoutMs: 1000 }) as ToolEnv;
    env.reset({ seed: 1 });
    await server.kill();
    const t0 = Date.now();
    expect(() => env.step('calc(1+1)')).toThrow(/the connection was lost and 2 reconnects failed/);
    expect(Date.now() - t0).toBeLessThan(10_000);
  }, 30_000);
});

describe("mode 'mcp': MCP tools as the actions", () => {
  let fixture: ChildServer;
  beforeAll(async () => {
    fixture = await startFixtureChild('mcp');
  }, 30_000);
  afterAll(() => fixture.kill());

  it('lists the tools in the first observation, sends calls as call_tool steps, and answers a bad call itself', async () => {
    const env = makeEnv('remote/openenv', { url: fixture.url, mode: 'mcp' }) as ToolEnv;
    expect(env.reset({ seed: 0 }).obs.text).toBe('task: what is 2 + 3? tools: add(a, b), submit(answer).');
    const bad = env.step('mul(2, 3)');
    expect(bad).toMatchObject({ obs: { text: 'error: no tool mul; tools: add(a, b), submit(answer)' }, reward: 0, terminated: false, info: { malformed: true } });
    expect(env.step('add(2, 3)')).toMatchObject({ obs: { text: '5' }, reward: 0, terminated: false, info: { toolCall: 'add' } });
    expect(env.step('submit(5)')).toMatchObject({ obs: { text: 'right' }, reward: 1, terminated: true, info: { success: true } });
    // Only the two well-formed calls reached the server, arguments named by the schema.
    await new Promise((r) => setTimeout(r, 100));
    const steps = fixture.stderr().trim().split('\n').map((l) => JSON.parse(l) as unknown);
    expect(steps).toEqual([{ type: 'call_tool', tool_name: 'add', arguments: { a: 2, b: 3 } }, { type: 'call_tool', tool_name: 'submit', arguments: { answer: 5 } }]);
  });
});
