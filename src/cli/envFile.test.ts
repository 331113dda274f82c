import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeEnv } from '../core/envs/index.ts';
import { mapFromJson, mapToKwargs } from '../core/envs/grid/mapSpec.ts';
import { startServer, type RunningServer } from '../server/server.ts';
import { http, httpExpertEpisode, inProcessExpertEpisode, WsSession, wsExpertEpisode } from '../server/testClients.ts';
import { loadEnvFile } from './envFile.ts';
import { loadRunConfig } from './presets.ts';
import { envsToServe } from './serve.ts';
import { withEnvFile } from './train.ts';

const FOUR_ROOMS = 'examples/envs/four-rooms.json';
const tmp = mkdtempSync(join(tmpdir(), 'env-file-'));
const file = (name: string, text: string) => {
  const p = join(tmp, name);
  writeFileSync(p, text);
  return p;
};

describe('--env-file', () => {
  it('reads a map into grid/custom with the map as kwargs, and says what it found', async () => {
    const f = await loadEnvFile(FOUR_ROOMS);
    const map = mapFromJson(readFileSync(FOUR_ROOMS, 'utf8'));
    expect(map.ok && f.env).toEqual({ id: 'grid/custom', kwargs: map.ok ? mapToKwargs(map.map) : null });
    expect(f.summary).toBe('examples/envs/four-rooms.json: map "Four rooms 11x11", 11x11, solvable in 19 steps (step limit 100)');
  });

  it('reads a map file that starts with a UTF-8 byte-order mark (as Windows editors save it)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bom-'));
    const file = join(dir, 'bom.json');
    writeFileSync(file, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), readFileSync('examples/envs/four-rooms.json')]));
    const f = await loadEnvFile(file);
    expect(f.env.id).toBe('grid/custom');
    expect(f.summary).toMatch(/solvable in \d+ steps/);
  });

  it('refuses what is not a trainable map, naming the file and the reason', async () => {
    await expect(loadEnvFile(join(tmp, 'missing.json'))).rejects.toThrow(/missing\.json: cannot read it \(ENOENT\)/);
    await expect(loadEnvFile(file('bad.json', '{"kind": "grid-map", rows'))).rejects.toThrow(/bad\.json: not a valid map:\n {2}- not valid JSON/);
    await expect(loadEnvFile(file('walled.json', JSON.stringify({ kind: 'grid-map', rows: ['######', '#>.#G#', '######'] })))).rejects.toThrow(/walled\.json: this map cannot be solved: the goal is walled off/);
    await expect(loadEnvFile(file('env.txt', 'hello'))).rejects.toThrow(/unsupported kind of env file "\.txt"; supported: \.json .*and \.js/);
    const fourRooms = await loadEnvFile(FOUR_ROOMS);
    expect(() => withEnvFile(loadRunConfig('grid-door-key-pipeline'), fourRooms)).toThrow(/preset grid-door-key-pipeline is a pipeline of 3 stages/);
  });
});

describe('npm run serve -- --env-file', () => {
  let server: RunningServer;
  let id: string;
  beforeAll(async () => {
    ({ envs: [id] } = await envsToServe(undefined, FOUR_ROOMS));
    server = await startServer({ envs: [id], host: '127.0.0.1', port: 0, latency: 'skip' });
  });
  afterAll(() => server.close());

  it('serves the map as file/<name> over HTTP and WebSocket, step for step as in process', async () => {
    expect(id).toBe('file/four-rooms');
    expect(makeEnv(id).spec.title).toBe('Four rooms 11x11');
    const local = inProcessExpertEpisode(id, 3);
    expect(local.results).toHaveLength(20); // reset + the 19 steps of the shortest path
    expect(local.results[local.results.length - 1]).toMatchObject({ done: true, observation: { terminated: true, info: { success: true } } });
    expect((await httpExpertEpisode(server.url, 3)).results).toEqual(local.results);
    const ws = await WsSession.open(`${server.url.replace('http', 'ws')}/ws`);
    expect((await wsExpertEpisode(ws, 3)).results).toEqual(local.results);
    await ws.close();
    // A client's reset kwargs go over the file's: a shorter step limit.
    const r = await http('POST', `${server.url}/reset`, { seed: 1, maxSteps: 5, session_id: 'k' });
    expect(r.status).toBe(200);
  });

  it('names a bad file or a missing flag', async () => {
    await expect(envsToServe(undefined, undefined)).rejects.toThrow(/--env or --env-file is required/);
    await expect(envsToServe(undefined, join(tmp, 'nope.json'))).rejects.toThrow(/cannot read it/);
  });
});
