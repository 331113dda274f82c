/**
 * `npm run serve -- --env-file FILE.js`: a code env served over OpenEnv's HTTP and WebSocket
 * protocol, every served step equal to the same seed and actions played in-process.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { makeEnv } from '../core/envs/index.ts';
import { startServer } from '../server/server.ts';
import { http, serveUrl, WsSession } from '../server/testClients.ts';
import { actionToWire, resetToWire, stepToWire, type WireResult } from '../server/wire.ts';
import { loadEnvFile, registerEnvFile } from './envFile.ts';

const FILE = fileURLToPath(new URL('../../examples/envs/empty-room.js', import.meta.url));
/** Mostly forward, with turns: reaches the goal, so the episode ends with success. */
const ACTIONS = [2, 2, 2, 2, 2, 1, 2, 2, 2, 2, 2];

function inProcess(id: string, seed: number): { results: WireResult[]; actions: unknown[] } {
  const env = makeEnv(id);
  const results = [resetToWire(env.reset({ seed }))];
  const actions = ACTIONS.map((a) => actionToWire(env, a));
  for (const a of ACTIONS) results.push(stepToWire(env.step(a)));
  return { results, actions };
}

describe('npm run serve -- --env-file', () => {
  it('serves the checked file as code/<name>: HTTP and WebSocket episodes equal in-process, schema from its spec', async () => {
    const id = registerEnvFile(await loadEnvFile(FILE));
    expect(id).toBe('code/empty-room');
    const local = inProcess(id, 4);
    expect(local.results.at(-1)).toMatchObject({ done: true, observation: { terminated: true, info: { success: true } } });
    const server = await startServer({ envs: [id], port: 0, latency: 'skip' });
    try {
      const schema = (await http('GET', `${server.url}/schema`)).body as Record<string, Record<string, unknown>>;
      expect(schema.action).toMatchObject({ required: ['action_id'], properties: { action_id: { type: 'integer', minimum: 0, maximum: 6 } } });
      expect(schema.observation).toMatchObject({ properties: { image: { type: 'array', minItems: 147, maxItems: 147 } } });
      expect((await http('POST', `${server.url}/reset`, { seed: 4 })).body).toEqual(local.results[0]);
      for (let t = 0; t < ACTIONS.length; t++) expect((await http('POST', `${server.url}/step`, { action: local.actions[t] })).body).toEqual(local.results[t + 1]);
      const ws = await WsSession.open(`${server.url.replace('http', 'ws')}/ws`);
      expect((await ws.request({ type: 'reset', data: { seed: 4 } })).data).toEqual(local.results[0]);
      for (let t = 0; t < ACTIONS.length; t++) expect((await ws.request({ type: 'step', data: local.actions[t] as never })).data).toEqual(local.results[t + 1]);
      await ws.close();
    } finally {
      await server.close();
    }
  });

  it('the CLI checks the file and serves it at the root', { timeout: 60_000 }, async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/serve.ts', '--env-file', FILE, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const url = await serveUrl(child, 40_000);
      expect((await http('GET', `${url}/metadata`)).body).toMatchObject({ name: 'code/empty-room' });
      const r = (await http('POST', `${url}/reset`, { seed: 1 })).body as WireResult;
      expect((r.observation as { image: number[] }).image).toHaveLength(147);
    } finally {
      child.kill('SIGTERM');
    }
  });
});
