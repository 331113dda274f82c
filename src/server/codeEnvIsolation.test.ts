/**
 * Hostile code envs served over OpenEnv (loopback only): one session's runaway call, allocation or
 * answer must not take down the server or touch another session. Each test fails on the worker-
 * thread sandbox: the allocations aborted the whole process, and a looping step blocked the
 * server for its deadline and left every other session of the module with "sandbox was stopped
 * earlier" (500) until it reconnected.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../runtime/codeEnv/node.ts';
import { loadCodeEnvs } from '../runtime/codeEnv/index.ts';
import { registerCodeEnv } from '../core/envs/code/index.ts';
import { makeEnv } from '../core/envs/index.ts';
import { startServer, type RunningServer } from './server.ts';
import { http, WsSession } from './testClients.ts';
import { actionToWire, resetToWire, stepToWire, type WireResult } from './wire.ts';

const ROOM = readFileSync(new URL('../../examples/envs/empty-room.js', import.meta.url), 'utf8');
/**
 * The room, made hostile: action 6 ('done') loops forever in step(); action 5 ('toggle') returns a
 * 200 MB string; a reset sizes an array by its seed (seed 5e7: 400 MB, past the 64 MiB cap).
 */
const HOSTILE = ROOM.replace('export function step(action) {', "export function step(action) {\n  if (action === 6) while (true) {}\n  if (action === 5) return { observation: 'x'.repeat(2e8), reward: 0, terminated: false, truncated: false, info: {} };")
  .replace('export function reset(_seed) {', 'export function reset(_seed) {\n  globalThis.keep = new Array(_seed).fill(0);');
const ID = 'code/hostile-room';
/** Forward and turns: never the hostile actions. */
const SAFE = [2, 2, 1, 2, 2, 0, 2, 2, 1, 2];

let server: RunningServer;
beforeAll(async () => {
  await loadCodeEnvs();
  registerCodeEnv(ID, HOSTILE);
  const env = makeEnv(ID);
  wire = [0, 1, 2, 3, 4, 5, 6].map((a) => actionToWire(env, a));
  server = await startServer({ envs: [ID], port: 0, latency: 'skip' });
});
afterAll(() => server?.close());

/** The same seed and actions played in-process: what an untouched session must be served. */
function inProcess(seed: number, actions: number[]): WireResult[] {
  const env = makeEnv(ID);
  return [resetToWire(env.reset({ seed })), ...actions.map((a) => stepToWire(env.step(a)))];
}

const timed = async <T>(f: () => Promise<T>): Promise<{ ms: number; v: T }> => {
  const t = performance.now();
  const v = await f();
  return { ms: performance.now() - t, v };
};
/** Wire actions by index (made once: making an env in this thread while a served step runs away would wait for it). */
let wire: unknown[] = [];
const step = (session: string, a: number) => http('POST', `${server.url}/step`, { session_id: session, action: wire[a] });

describe('a served code env cannot take down the server or touch another session', () => {
  it('a looping step: /health answers meanwhile, the other session goes on untouched, the looping one is rebuilt on its next reset', { timeout: 60_000 }, async () => {
    const other = inProcess(7, SAFE);
    expect((await http('POST', `${server.url}/reset`, { seed: 3, session_id: 'loop' })).status).toBe(200);
    expect((await http('POST', `${server.url}/reset`, { seed: 7, session_id: 'other' })).body).toEqual(other[0]);
    for (let t = 0; t < 3; t++) expect((await step('other', SAFE[t])).body).toEqual(other[t + 1]);
    const bad = timed(() => step('loop', 6));
    // While it runs away (1 s deadline): /health, and the other session's next steps.
    const health: number[] = [];
    for (let k = 0; k < 5; k++) {
      const h = await timed(() => http('GET', `${server.url}/health`));
      expect(h.v.status).toBe(200);
      health.push(h.ms);
      await new Promise((r) => setTimeout(r, 100));
    }
    const others: number[] = [];
    for (let t = 3; t < SAFE.length; t++) {
      const r = await timed(() => step('other', SAFE[t]));
      expect(r.v.body).toEqual(other[t + 1]);
      others.push(r.ms);
    }
    const b = await bad;
    expect(b.v.status).toBe(500);
    expect((b.v.body as { detail: string }).detail).toMatch(/^step failed in the env: step\(\) ran past its 1000 ms limit .*reset to start a new one \(other sessions go on\)/);
    console.log(`looping step: answered after ${b.ms.toFixed(0)} ms; /health during it ${health.map((x) => x.toFixed(0)).join(', ')} ms; the other session's steps ${others.map((x) => x.toFixed(0)).join(', ')} ms`);
    expect(Math.max(...health)).toBeLessThan(500);
    // The looping session says what happened until it resets; the reset builds its env afresh.
    const after = await step('loop', 2);
    expect(after.status).toBe(409);
    expect((after.body as { detail: string }).detail).toMatch(/episode is over: step\(\) ran past its 1000 ms limit.*reset to start a new one/);
    const fresh = inProcess(3, [2, 2]);
    expect((await http('POST', `${server.url}/reset`, { seed: 3, session_id: 'loop' })).body).toEqual(fresh[0]);
    expect((await step('loop', 2)).body).toEqual(fresh[1]);
  });

  it('pipelined looping steps on one WebSocket cost one deadline, not one each; /health answers throughout', { timeout: 60_000 }, async () => {
    const ws = await WsSession.open(`${server.url.replace('http', 'ws')}/ws`);
    try {
      expect((await ws.request({ type: 'reset', data: { seed: 1 } })).type).toBe('observation');
      const t0 = performance.now();
      const bad = wire[6];
      for (let k = 0; k < 5; k++) ws.ws.send(JSON.stringify({ type: 'step', data: bad }));
      const h = await timed(() => http('GET', `${server.url}/health`));
      const replies = [];
      for (let k = 0; k < 5; k++) replies.push(await ws.next());
      const total = performance.now() - t0;
      console.log(`5 pipelined looping steps: all answered in ${total.toFixed(0)} ms; /health meanwhile ${h.ms.toFixed(0)} ms`);
      expect(replies.map((r) => r.type)).toEqual(['error', 'error', 'error', 'error', 'error']);
      expect(String(replies[0].data.message)).toMatch(/ran past its 1000 ms limit/);
      for (const r of replies.slice(1)) expect(String(r.data.message)).toMatch(/episode is over/);
      expect(total).toBeLessThan(2500);
      expect(h.ms).toBeLessThan(500);
      expect((await ws.request({ type: 'reset', data: { seed: 1 } })).type).toBe('observation');
    } finally {
      await ws.close();
    }
  });

  it('a seed-sized array (POST /reset {"seed": 50000000}) and a 200 MB string from step() end only their sandbox: 500 with the reason, the server and the other session go on', { timeout: 60_000 }, async () => {
    const other = inProcess(11, SAFE);
    expect((await http('POST', `${server.url}/reset`, { seed: 11, session_id: 'bystander' })).body).toEqual(other[0]);
    expect((await step('bystander', SAFE[0])).body).toEqual(other[1]);
    const big = await http('POST', `${server.url}/reset`, { seed: 50_000_000, session_id: 'big' });
    expect(big.status).toBe(500);
    expect((big.body as { detail: string }).detail).toMatch(/^reset failed in the env: reset\(\) ran out of memory \(limit 64 MiB\)/);
    expect((await http('GET', `${server.url}/health`)).status).toBe(200);
    expect((await step('bystander', SAFE[1])).body).toEqual(other[2]);
    // The same session resets again with a sane seed: a fresh sandbox.
    expect((await http('POST', `${server.url}/reset`, { seed: 4, session_id: 'big' })).body).toEqual(inProcess(4, [])[0]);
    const str = await step('big', 5);
    expect(str.status).toBe(500);
    expect((str.body as { detail: string }).detail).toMatch(/^step failed in the env: step\(\) ran out of memory \(limit 64 MiB\)/);
    expect((await step('bystander', SAFE[2])).body).toEqual(other[3]);
  });
});
