/**
 * Protocol tests: a real server on a loopback port, spoken to in the documented wire format over
 * HTTP, OpenEnv's WebSocket messages and verl-tool batches. Every served episode is compared with
 * the same seed played in-process.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from './server.ts';
import { http, httpExpertEpisode, inProcessExpertEpisode, verlExpertBatch, WsSession, wsExpertEpisode } from './testClients.ts';

const CALC = 'tools/calculator';
const DOOR = 'grid/door-key-6x6';

describe('one env at the root (the serve contract)', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ envs: [CALC], host: '127.0.0.1', port: 0, latency: 'skip' });
  });
  afterAll(() => server.close());

  it('answers GET /health, GET /schema, GET /metadata at the root', async () => {
    expect(await http('GET', `${server.url}/health`)).toMatchObject({ status: 200, body: { status: 'healthy' } });
    const schema = (await http('GET', `${server.url}/schema`)).body as Record<string, Record<string, unknown>>;
    expect(schema.action).toMatchObject({ type: 'object', required: ['text'], properties: { text: { type: 'string' } } });
    expect(schema.observation).toMatchObject({ type: 'object', properties: { text: { type: 'string', maxLength: 240 } } });
    expect(schema.state).toMatchObject({ type: 'object', properties: { step_count: { type: 'integer' } } });
    expect((await http('GET', `${server.url}/metadata`)).body).toMatchObject({ name: CALC, version: '1.0.0' });
    // What OpenEnv's validator reads: the route list (simulation mode) and a JSON-RPC answer on /mcp.
    expect((await http('GET', `${server.url}/openapi.json`)).body).toMatchObject({ info: { version: '1.0.0' }, paths: { '/reset': {}, '/step': {}, '/state': {}, '/get_observation': {} } });
    expect((await http('POST', `${server.url}/mcp`, {})).body).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.any(String), data: null } });
    expect((await http('POST', `${server.url}/mcp`, 'nope')).body).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 } });
  });

  it('plays the expert episode over HTTP exactly as in-process, seed by seed', async () => {
    for (const seed of [0, 7, 123456]) {
      const served = await httpExpertEpisode(server.url, seed);
      const local = inProcessExpertEpisode(CALC, seed);
      expect(served.results).toEqual(local.results);
      expect(served.actions).toEqual(local.actions);
      const last = served.results[served.results.length - 1];
      expect(last).toMatchObject({ reward: 1, done: true, observation: { terminated: true, info: { success: true } } });
    }
    const state = (await http('GET', `${server.url}/state`)).body;
    expect(state).toMatchObject({ env_id: CALC, seed: 123456, step_count: 2, done: true, expert_action: null });
  });

  it('plays the expert episode over the WebSocket session endpoint exactly as in-process', async () => {
    const ws = await WsSession.open(`${server.url.replace('http', 'ws')}/ws`);
    for (const seed of [3, 4]) {
      const served = await wsExpertEpisode(ws, seed);
      expect(served.results).toEqual(inProcessExpertEpisode(CALC, seed).results);
    }
    const state = await ws.request({ type: 'state' });
    expect(state).toMatchObject({ type: 'state', data: { seed: 4, step_count: 2, done: true } });
    await ws.close();
  });

  it('drives 64 calculator trajectories through verl-tool batches, each equal to its in-process copy', async () => {
    const seeds = Array.from({ length: 64 }, (_, i) => 1000 + i);
    const { trajectories, requests, mismatches } = await verlExpertBatch(server.url, CALC, seeds);
    expect(mismatches).toEqual([]);
    expect(trajectories.every((t) => t.done && t.valids.every(Boolean))).toBe(true);
    // The expert calls calc once and answers: two turns each, one batch per turn plus the finish batch.
    expect(trajectories.map((t) => t.observations.length)).toEqual(seeds.map(() => 2));
    expect(trajectories.map((t) => (t.observations[1] as { reward: number }).reward)).toEqual(seeds.map(() => 1));
    expect(requests).toBe(3);
    // Finished trajectories are closed on the server.
    expect(server.sessions.keys().filter((k) => k.startsWith('verl:'))).toEqual([]);
  });

  it('answers verl-tool items it cannot play with valid=false and a reason, and malformed calls with the env\'s error', async () => {
    const res = await http('POST', `${server.url}/get_observation`, {
      trajectory_ids: ['no-seed', 'bad-call', 'bad-kwargs'],
      actions: ['calc(1+1)', 'calc(1+', 'calc(2)'],
      extra_fields: [{}, { seed: 5 }, { seed: 5, kwargs: { maxTurns: 'many' } }],
    });
    expect(res.status).toBe(200);
    const body = res.body as { observations: { obs: string }[]; dones: boolean[]; valids: boolean[] };
    expect(body.valids).toEqual([false, false, false]);
    expect(body.dones).toEqual([true, false, true]);
    expect(body.observations[0].obs).toMatch(/extra_fields\.seed/);
    expect(body.observations[1].obs).toMatch(/^error: missing "\)"/);
    expect(body.observations[2].obs).toMatch(/maxTurns/);
    await http('POST', `${server.url}/get_observation`, { trajectory_ids: ['bad-call'], actions: [''], finish: [true] });
  });
});

describe('env kwargs: one check for every way in', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ envs: [CALC], host: '127.0.0.1', port: 0, latency: 'skip' });
  });
  afterAll(() => server.close());

  it('refuses the prototype keys by name in verl-tool kwargs, a reset body and a WebSocket reset alike', async () => {
    const verl = await http('POST', `${server.url}/get_observation`, '{"trajectory_ids": ["p", "c"], "actions": ["calc(1)", "calc(1)"], "extra_fields": [{"seed": 1, "kwargs": {"__proto__": {"maxTurns": 1}}}, {"seed": 1, "kwargs": {"constructor": 1}}]}');
    const body = verl.body as { observations: { obs: string }[]; valids: boolean[] };
    expect(body.valids).toEqual([false, false]);
    expect(body.observations[0].obs).toBe('error: bad env kwargs for trajectory p: extra_fields.kwargs.__proto__: "__proto__" is not an env kwarg (the name reaches into objects\' prototypes)');
    expect(body.observations[1].obs).toMatch(/extra_fields\.kwargs\.constructor: "constructor" is not an env kwarg/);
    expect(server.sessions.keys().filter((k) => k.startsWith('verl:'))).toEqual([]);
    // The same rule at reset (it used to drop __proto__ silently there).
    const reset = await http('POST', `${server.url}/reset`, '{"seed": 1, "session_id": "proto", "__proto__": {"maxTurns": 1}}');
    expect(reset.status).toBe(422);
    expect(reset.body).toMatchObject({ detail: [{ type: 'extra_forbidden', loc: ['body', '__proto__'], msg: '"__proto__" is not an env kwarg (the name reaches into objects\' prototypes)' }] });
    const ws = await WsSession.open(`${server.url.replace('http', 'ws')}/ws`);
    ws.ws.send('{"type": "reset", "data": {"prototype": 1}}');
    expect(await ws.next()).toMatchObject({ type: 'error', data: { code: 'VALIDATION_ERROR', errors: [{ loc: ['data', 'prototype'] }] } });
    await ws.close();
    // Unknown and out-of-range kwargs get the env's own message on every path.
    const unknown = await http('POST', `${server.url}/get_observation`, { trajectory_ids: ['u'], actions: ['calc(1)'], extra_fields: [{ seed: 1, kwargs: { termz: 2 } }] });
    expect((unknown.body as { observations: { obs: string }[] }).observations[0].obs).toMatch(/^error: bad env kwargs: tools\/calculator: unknown kwarg "termz"/);
  });
});

describe('verl-tool actions from LLM text', () => {
  it('plays the last call in the text with verlActions "last-call" (default) and the text as is with "strict"', async () => {
    const turn = 'The product is large, so I use the tool: <tool>calc(6*7)</tool>';
    const got: Record<string, unknown> = {};
    for (const verlActions of ['last-call', 'strict'] as const) {
      const server = await startServer({ envs: [CALC], port: 0, latency: 'skip', verlActions });
      try {
        const r = await http('POST', `${server.url}/get_observation`, { trajectory_ids: ['t'], actions: [turn], extra_fields: [{ seed: 2 }] });
        const body = r.body as { observations: { obs: string }[]; valids: boolean[] };
        got[verlActions] = { obs: body.observations[0].obs, valid: body.valids[0] };
      } finally {
        await server.close();
      }
    }
    expect(got['last-call']).toEqual({ obs: 'result: 42', valid: true });
    expect(got.strict).toMatchObject({ obs: expect.stringMatching(/^error: /), valid: false });
  });
});

describe('several envs under path prefixes', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ envs: [CALC, DOOR, 'tools/flaky-api'], port: 0, latency: 'skip' });
  });
  afterAll(() => server.close());

  it('puts each env under /<id> and lists them at the root', async () => {
    expect(server.prefixes).toEqual({ [CALC]: `/${CALC}`, [DOOR]: `/${DOOR}`, 'tools/flaky-api': '/tools/flaky-api' });
    expect((await http('GET', `${server.url}/envs`)).body).toMatchObject({ envs: [{ id: CALC }, { id: DOOR }, { id: 'tools/flaky-api' }] });
    const grid = (await http('GET', `${server.url}/${DOOR}/schema`)).body as Record<string, Record<string, unknown>>;
    expect(grid.action).toMatchObject({ required: ['action_id'], properties: { action_id: { type: 'integer', minimum: 0, maximum: 6 } } });
    expect(grid.observation).toMatchObject({ properties: { image: { type: 'array', minItems: 147, maxItems: 147 }, direction: { maximum: 3 } } });
  });

  it('plays door-key-6x6 expert episodes over HTTP and WebSocket equal to in-process', async () => {
    const base = `${server.url}/${DOOR}`;
    for (const seed of [1, 2]) {
      const local = inProcessExpertEpisode(DOOR, seed);
      const viaHttp = await httpExpertEpisode(base, seed, `s${seed}`);
      expect(viaHttp.results).toEqual(local.results);
      expect(local.results[local.results.length - 1]).toMatchObject({ done: true, observation: { terminated: true, info: { success: true } } });
      const ws = await WsSession.open(`${base.replace('http', 'ws')}/ws`);
      expect((await wsExpertEpisode(ws, seed)).results).toEqual(local.results);
      await ws.close();
    }
  });

  it('gives each session its own env and seed: interleaved sessions do not cross', async () => {
    const base = `${server.url}/${DOOR}`;
    const a = inProcessExpertEpisode(DOOR, 11);
    const b = inProcessExpertEpisode(DOOR, 12);
    expect((await http('POST', `${base}/reset`, { seed: 11, session_id: 'a' })).body).toEqual(a.results[0]);
    expect((await http('POST', `${base}/reset`, { seed: 12, session_id: 'b' })).body).toEqual(b.results[0]);
    const n = Math.max(a.actions.length, b.actions.length);
    for (let t = 0; t < n; t++) {
      if (t < a.actions.length) expect((await http('POST', `${base}/step`, { action: a.actions[t], session_id: 'a' })).body).toEqual(a.results[t + 1]);
      if (t < b.actions.length) expect((await http('POST', `${base}/step`, { action: b.actions[t] }, { 'x-session-id': 'b' })).body).toEqual(b.results[t + 1]);
    }
    // Resets that name no seed still give every session its own episode.
    const seeds = new Set<unknown>();
    for (const id of ['c', 'd', 'e']) {
      await http('POST', `${base}/reset`, { session_id: id });
      seeds.add(((await http('GET', `${base}/state?session_id=${id}`)).body as { seed: number }).seed);
    }
    expect(seeds.size).toBe(3);
  });

  it('passes env kwargs given at reset to the session\'s env, and refuses bad ones with a clear 422', async () => {
    const base = `${server.url}/${CALC}`;
    const r = await http('POST', `${base}/reset`, { seed: 3, session_id: 'k', terms: 2 });
    expect(r.status).toBe(200);
    expect((r.body as { observation: { text: string } }).observation.text).toEqual(inProcessExpertEpisode(CALC, 3, { terms: 2 }).results[0].observation.text);
    const bad = await http('POST', `${base}/reset`, { seed: 3, session_id: 'k', termz: 2 });
    expect(bad.status).toBe(422);
    expect((bad.body as { detail: string }).detail).toMatch(/unknown kwarg "termz"/);
    // The session keeps its env; a new id whose first reset fails is not kept at all.
    expect(((await http('GET', `${base}/state?session_id=k`)).body as { kwargs: unknown }).kwargs).toEqual({ terms: 2 });
    expect((await http('POST', `${base}/reset`, { session_id: 'k2', terms: 'two' })).status).toBe(422);
    expect(server.sessions.keys()).not.toContain(`http:${CALC}:k2`);
  });

  it('answers a deeply nested action with a 422 that echoes a clipped input, not a 500', async () => {
    const deep = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
    await http('POST', `${server.url}/${CALC}/reset`, { seed: 1, session_id: 'deep' });
    const r = await http('POST', `${server.url}/${CALC}/step`, `{"action": ${deep}, "session_id": "deep"}`);
    expect(r.status).toBe(422);
    expect((r.body as { detail: { type: string }[] }).detail[0].type).toBe('dict_type');
    expect(JSON.stringify(r.body).length).toBeLessThan(1000);
  });

  it('serves get_observation for tool envs only', async () => {
    const res = await http('POST', `${server.url}/${DOOR}/get_observation`, { trajectory_ids: ['x'], actions: ['f'] });
    expect(res.status).toBe(404);
    expect((res.body as { detail: string }).detail).toMatch(/tool envs only/);
  });
});

describe('bad requests get 4xx JSON and the server stays up', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ envs: [CALC, DOOR], port: 0, latency: 'skip', maxBodyBytes: 4096 });
  });
  afterAll(() => server.close());

  it('refuses garbage over HTTP with the right status and a message, while another session plays on', async () => {
    const calc = `${server.url}/${CALC}`;
    const door = `${server.url}/${DOOR}`;
    const bystander = inProcessExpertEpisode(DOOR, 99);
    expect((await http('POST', `${door}/reset`, { seed: 99, session_id: 'bystander' })).body).toEqual(bystander.results[0]);

    await http('POST', `${calc}/reset`, { seed: 1, session_id: 'g' });
    const cases: [string, string, unknown, number, RegExp][] = [
      ['POST', `${calc}/step`, '{"action": {"text": "calc(1+1)"', 422, /json_invalid|JSON decode error/],
      ['POST', `${calc}/reset`, 'not json at all', 422, /JSON decode error/],
      ['POST', `${server.url}/tools/nope/reset`, { seed: 1 }, 404, /unknown env "tools\/nope"; served envs: tools\/calculator, grid\/door-key-6x6/],
      ['POST', `${calc}/step`, { action: { text: 42 }, session_id: 'g' }, 422, /string_type/],
      ['POST', `${door}/step`, { action: { action_id: 'forward' }, session_id: 'bystander' }, 422, /int_type/],
      ['POST', `${door}/step`, { action: { action_id: 9 }, session_id: 'bystander' }, 422, /less_than_equal/],
      ['POST', `${door}/step`, { action: 2, session_id: 'bystander' }, 422, /dict_type/],
      ['POST', `${calc}/step`, { action: { text: 'calc(1)', extra: 1 }, session_id: 'g' }, 422, /extra_forbidden/],
      ['POST', `${calc}/step`, { session_id: 'g' }, 422, /missing/],
      ['POST', `${calc}/step`, [1, 2, 3], 422, /body must be an object/],
      ['POST', `${calc}/step`, { action: { text: 'calc(1)' }, session_id: 'nobody' }, 404, /unknown session "nobody"/],
      ['GET', `${calc}/state?session_id=nobody`, undefined, 404, /unknown session "nobody"/],
      ['POST', `${calc}/close`, { session_id: 'nobody' }, 404, /unknown session/],
      ['POST', `${calc}/reset`, { seed: -1 }, 422, /seed must be an integer/],
      ['POST', `${calc}/reset`, { seed: 'x' }, 422, /seed must be an integer/],
      ['GET', `${calc}/reset`, undefined, 405, /answers POST only/],
      ['POST', `${calc}/reset`, { session_id: 'g', padding: 'x'.repeat(5000) }, 413, /over the 4096-byte limit/],
      ['GET', `${calc}/nowhere`, undefined, 404, /no route/],
      ['POST', `${calc}/get_observation`, { trajectory_ids: [], actions: [] }, 400, /Missing trajectory_ids or actions/],
      ['POST', `${calc}/get_observation`, { trajectory_ids: ['a', 'b'], actions: ['x'] }, 400, /length mismatch/],
      ['POST', `${calc}/get_observation`, { trajectory_ids: ['a'], actions: [7] }, 422, /string_type/],
      ['POST', `${calc}/get_observation`, { trajectory_ids: ['a'], actions: ['x'], finish: 'yes' }, 422, /Length mismatch for finish/],
    ];
    for (const [method, url, body, status, detail] of cases) {
      const r = await http(method, url, body);
      expect({ url, status: r.status, json: r.contentType }).toEqual({ url, status, json: 'application/json' });
      const d = (r.body as { detail: unknown }).detail;
      expect(typeof d === 'string' ? d : JSON.stringify(d)).toMatch(detail);
    }

    // Step after done.
    const g = inProcessExpertEpisode(CALC, 1);
    for (const a of g.actions) await http('POST', `${calc}/step`, { action: a, session_id: 'g' });
    const after = await http('POST', `${calc}/step`, { action: { text: 'answer(1)' }, session_id: 'g' });
    expect(after.status).toBe(409);
    expect((after.body as { detail: string }).detail).toMatch(/already ended after 2 steps: reset to start another/);
    // Step before any reset on the default session.
    expect((await http('POST', `${door}/step`, { action: { action_id: 2 } })).status).toBe(409);

    // A raw request that is not HTTP at all.
    const { connect } = await import('node:net');
    const raw = await new Promise<string>((resolve) => {
      const sock = connect(server.port, '127.0.0.1', () => sock.write('GARBAGE\r\n\r\n'));
      let text = '';
      sock.on('data', (d) => (text += d.toString()));
      sock.on('close', () => resolve(text));
    });
    expect(raw).toMatch(/^HTTP\/1\.1 400 Bad Request/);

    // A chunked body (no Content-Length) that grows past the limit gets the 413 reply too, not a reset.
    const { request } = await import('node:http');
    const chunked = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(`${calc}/reset`, { method: 'POST', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } }, (res) => {
        let body = '';
        res.on('data', (d) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.write('{"session_id": "g", "padding": "');
      for (let i = 0; i < 6; i++) req.write('x'.repeat(1000));
      req.end('"}');
    });
    expect(chunked.status).toBe(413);
    expect(JSON.parse(chunked.body).detail).toMatch(/over the 4096-byte limit/);

    // The bystander's episode went on untouched by all of the above.
    for (let t = 0; t < bystander.actions.length; t++) {
      expect((await http('POST', `${door}/step`, { action: bystander.actions[t], session_id: 'bystander' })).body).toEqual(bystander.results[t + 1]);
    }
    expect((await http('GET', `${server.url}/health`)).body).toEqual({ status: 'healthy' });
  });

  it('answers WebSocket garbage with error messages and keeps the connection', async () => {
    const ws = await WsSession.open(`${server.url.replace('http', 'ws')}/${CALC}/ws`);
    expect(await ws.request('{nope')).toMatchObject({ type: 'error', data: { code: 'INVALID_JSON' } });
    expect(await ws.request({ type: 'jump' })).toMatchObject({ type: 'error', data: { code: 'UNKNOWN_TYPE', message: expect.stringMatching(/Unknown message type: jump/) } });
    expect(await ws.request([1])).toMatchObject({ type: 'error', data: { code: 'VALIDATION_ERROR' } });
    expect(await ws.request({ type: 'mcp', data: { jsonrpc: '2.0', method: 'tools/list', id: 4 } })).toEqual({ type: 'mcp', data: { jsonrpc: '2.0', id: 4, error: { code: -32603, message: expect.stringMatching(/does not support MCP/), data: null } } });
    expect(await ws.request({ type: 'step', data: { text: 'calc(1)' } })).toMatchObject({ type: 'error', data: { code: 'EXECUTION_ERROR', message: expect.stringMatching(/reset first/) } });
    expect(await ws.request({ type: 'reset', data: { seed: 5 }, extra: 1 })).toMatchObject({ type: 'error', data: { code: 'VALIDATION_ERROR' } });
    expect(await ws.request({ type: 'reset', data: { seed: 5 } })).toMatchObject({ type: 'observation', data: { done: false } });
    expect(await ws.request({ type: 'step', data: { text: 5 } })).toMatchObject({ type: 'error', data: { code: 'VALIDATION_ERROR', errors: [{ type: 'string_type' }] } });
    const local = inProcessExpertEpisode(CALC, 5);
    for (const a of local.actions) await ws.request({ type: 'step', data: a });
    expect(await ws.request({ type: 'step', data: { text: 'answer(3)' } })).toMatchObject({ type: 'error', data: { code: 'EXECUTION_ERROR', message: expect.stringMatching(/already ended/) } });
    expect(await ws.request({ type: 'state' })).toMatchObject({ type: 'state', data: { seed: 5, step_count: 2, done: true } });
    await ws.close();
    expect(server.sessions.size).toBeGreaterThanOrEqual(0);
  });

  it('answers an upgrade to a path with no WebSocket endpoint with a 404', async () => {
    const err = await WsSession.open(`${server.url.replace('http', 'ws')}/tools/nope/ws`).then(
      () => null,
      (e: Error) => e.message,
    );
    expect(err).toMatch(/404/);
  });
});
