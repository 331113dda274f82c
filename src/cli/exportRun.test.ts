/**
 * `npm run export`: from reward-lab runs (a CLI output folder), both targets write their folders,
 * the README says what did not translate, and the exported reward, played over the wire by the
 * exported Python against `npm run serve`, equals the reward the playground's own terms give the
 * same episode (translated terms in Python, the rest via POST /score).
 */
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from './exportRun.ts';
import { startServer } from '../server/server.ts';
import { episodeScorer } from '../server/score.ts';
import { createRewardSandbox } from '../runtime/rewardSandbox/index.ts';
import { makeEnv, type Info } from '../core/envs/index.ts';
import { buildTextStepRecords } from '../core/reward/stepRecord.ts';
import { tarFolder } from '../core/export/tar.ts';
import { hasPython } from './testPython.ts';

const TERMS = `export const goodCall = (step) => (step.info.toolCall !== null && !step.info.toolFailed ? 0.05 : 0);
export function tidy(step) {
  return step.info.malformed ? -0.1 : 0;
}
export function repeatCost(step) {
  const prev = step.episode.steps[step.t - 1];
  return prev && prev.actionName === step.actionName ? -0.05 : 0;
}
`;

/** A CLI output folder as `npm run train -- --out DIR --reward FILE` writes it (one iteration). */
function runFolder(config: Record<string, unknown>, code: string): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'export-')), 'run');
  mkdirSync(dir);
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ ...config, reward: { code } }));
  writeFileSync(join(dir, 'metrics.jsonl'), JSON.stringify({ iteration: 0, wall_s: 1, 'reward/mean': 0 }) + '\n');
  writeFileSync(join(dir, 'reward-versions.json'), JSON.stringify([{ version: 1, iteration: 0, code }]));
  return dir;
}

const CALC = { env: { id: 'tools/calculator' }, model: { kind: 'transformer' }, algo: { algo: 'grpo', groupSize: 4, dynamicSampling: { enabled: true } }, shaping: { format: { weight: 0.1 } }, rollout: { groups: 2 }, iterations: 3, seed: 3 };
const HACKABLE = JSON.parse(readFileSync('presets/grid-empty-8x8-hackable.json', 'utf8')) as Record<string, unknown> & { reward: { code: string } };

describe('npm run export', () => {
  it('trl and verl from a tool-env reward-lab run: the files, and what did not translate', async () => {
    const dir = runFolder(CALC, TERMS);
    expect(await main(['--run', dir, '--to', 'trl', '--out', join(dir, '..', 'trl')])).toBe(0);
    expect(readdirSync(join(dir, '..', 'trl')).sort()).toEqual(['README.txt', 'grpo_config.json', 'launch.sh', 'playground-config.json', 'reward_terms.js', 'reward_terms.py', 'train_trl.py']);
    const readme = readFileSync(join(dir, '..', 'trl', 'README.txt'), 'utf8');
    expect(readme).toMatch(/reward term 'goodCall': translated/);
    expect(readme).toMatch(/Did not translate:\n {2}- reward term 'repeatCost': not translated to Python .*scored by the env server/);
    expect(readme).toMatch(/algo.dynamicSampling/);
    expect(readme).toMatch(/--reward-file reward_terms.js/);
    expect(JSON.parse(readFileSync(join(dir, '..', 'trl', 'grpo_config.json'), 'utf8'))).toMatchObject({ num_generations: 4, generation_batch_size: 8, max_steps: 3, seed: 3 });

    expect(await main(['--run', dir, '--to', 'verl', '--out', join(dir, '..', 'verl')])).toBe(0);
    expect(readdirSync(join(dir, '..', 'verl')).sort()).toEqual(['README.txt', 'launch.sh', 'playground-config.json', 'playground_reward.py', 'prepare_data.py', 'reward_terms.js', 'reward_terms.py', 'stop_tokens.txt', 'terms_reward.py', 'verl_overrides.txt']);
    expect(readFileSync(join(dir, '..', 'verl', 'launch.sh'), 'utf8')).toMatch(/custom_reward_function.path="\$PWD\/terms_reward.py"/);
    expect(readFileSync(join(dir, '..', 'verl', 'verl_overrides.txt'), 'utf8')).toMatch(/^algorithm.adv_estimator=grpo$/m);
  });

  it('a grid reward-lab run (the hackable preset) exports to trl; verl, a non-empty folder and a bad target are refused with the reason', async () => {
    const dir = runFolder(HACKABLE, HACKABLE.reward.code);
    const out = join(dir, '..', 'trl');
    expect(await main(['--run', dir, '--to', 'trl', '--out', out])).toBe(0);
    expect(readFileSync(join(out, 'README.txt'), 'utf8')).toMatch(/reward term 'closer': not translated to Python/);
    await expect(main(['--run', dir, '--to', 'trl', '--out', out])).rejects.toThrow(/already holds files: choose another folder or pass --force/);
    await expect(main(['--run', dir, '--to', 'verl'])).rejects.toThrow(/grid env: veRL exports go through verl-tool's tool server/);
    await expect(main(['--run', dir, '--to', 'rllib'])).rejects.toThrow(/--to must be trl or verl, got rllib/);
    await expect(main(['--run', join(dir, 'nope'), '--to', 'trl'])).rejects.toThrow(/no such file or folder/);
  });

  it.skipIf(!hasPython)("the exported reward over the wire equals the playground's terms on the same episode (python3)", { timeout: 60_000 }, async () => {
    const dir = runFolder(CALC, TERMS);
    const out = join(dir, '..', 'trl');
    expect(await main(['--run', dir, '--to', 'trl', '--out', out])).toBe(0);
    const server = await startServer({ envs: ['tools/calculator'], host: '127.0.0.1', port: 0, latency: 'skip', score: episodeScorer(await createRewardSandbox(readFileSync(join(out, 'reward_terms.js'), 'utf8'))) });
    const actions = ['calc(2+3)', 'calc(2+3)', 'hello', 'answer(5)'];
    try {
      const py = `
import json, urllib.request, reward_terms as rt
def post(p, b):
    r = urllib.request.Request(rt.SERVER + p, data=json.dumps(b).encode(), headers={"content-type": "application/json"})
    return json.load(urllib.request.urlopen(r))
r = post("/reset", {"seed": 11, "session_id": "t"})
ep = rt.new_episode(11, r["observation"]["text"])
for a in ${JSON.stringify(actions)}:
    if ep["terminated"] or ep["truncated"]:
        break
    s = post("/step", {"action": {"text": a}, "session_id": "t"})
    rt.record_step(ep, a, s["observation"], s["reward"], s["done"])
print(json.dumps(rt.episode_terms(ep)))`;
      // Asynchronously: the server answering python3 runs on this thread.
      const { stdout } = await promisify(execFile)('python3', ['-c', py], { cwd: out, env: { ...process.env, PLAYGROUND_SERVER: server.url }, timeout: 30_000 });
      const got = JSON.parse(stdout) as Record<string, number>;
      // Reference: the same actions in-process, step records as the trainer builds them, the JS terms themselves.
      const env = makeEnv('tools/calculator');
      const observations = [String((env.reset({ seed: 11 }).obs as { text: string }).text)];
      const rewards: number[] = [], infos: Info[] = [], played: string[] = [];
      let terminated = false, truncated = false;
      for (const a of actions) {
        if (terminated || truncated) break;
        const r = await env.step(a);
        played.push(a);
        rewards.push(r.reward);
        infos.push(r.info);
        observations.push(String((r.obs as { text: string }).text));
        ({ terminated, truncated } = r);
      }
      const rec = buildTextStepRecords({ envId: 'tools/calculator', seed: 11, actions: played, rewards, infos, observations, terminated, truncated });
      const mod = (await import(`data:text/javascript;base64,${Buffer.from(TERMS).toString('base64')}`)) as Record<string, (s: unknown) => number>;
      const sum = (f: (s: Record<string, unknown>, i: number) => number) => rec.steps.reduce((a, s, i) => a + f(s as unknown as Record<string, unknown>, i), 0);
      const expected = {
        outcome: rewards.reduce((a, b) => a + b, 0),
        format: -0.1 * infos.filter((i) => i.malformed === true).length,
        goodCall: sum((s) => mod.goodCall(s)),
        tidy: sum((s) => mod.tidy(s)),
        repeatCost: sum((s, i) => mod.repeatCost({ ...s, episode: { ...(s.episode as object), steps: rec.steps.slice(0, i) } })),
      };
      expect(Object.keys(got).sort()).toEqual(Object.keys(expected).sort());
      for (const [k, v] of Object.entries(expected)) expect(got[k], k).toBeCloseTo(v, 12);
      // The episode exercised each term: a repeated call, a malformed turn, an answer that ends it.
      expect(expected.repeatCost).toBeCloseTo(-0.05, 12);
      expect(expected.tidy).toBeCloseTo(-0.1, 12);
      expect(terminated).toBe(true);
    } finally {
      await server.close();
    }
  });

  it("the Runs view's .tar of an export unpacks with tar into the same files (modes: .sh executable)", () => {
    const files = { 'README.txt': 'Did not translate:\n  - é, ü\n', 'launch.sh': '#!/bin/sh\necho hi\n', 'empty.txt': '', 'block.txt': 'x'.repeat(512) };
    const dir = mkdtempSync(join(tmpdir(), 'tar-'));
    writeFileSync(join(dir, 'a.tar'), tarFolder('run-trl', files, 1_700_000_000_000));
    execFileSync('tar', ['-xf', 'a.tar'], { cwd: dir });
    expect(readdirSync(join(dir, 'run-trl')).sort()).toEqual(Object.keys(files).sort());
    for (const [name, text] of Object.entries(files)) expect(readFileSync(join(dir, 'run-trl', name), 'utf8')).toBe(text);
    expect(statSync(join(dir, 'run-trl', 'launch.sh')).mode & 0o777).toBe(0o755);
    expect(execFileSync('tar', ['-tvf', 'a.tar'], { cwd: dir }).toString()).toMatch(/2023-11-1\d/);
  });

  it('POST /score replays a grid episode from its seed and scores the terms as the JS module does; a reply that disagrees with the rewards is refused', { timeout: 30_000 }, async () => {
    const server = await startServer({ envs: ['grid/empty-8x8'], host: '127.0.0.1', port: 0, latency: 'skip', score: episodeScorer(await createRewardSandbox(HACKABLE.reward.code)) });
    try {
      const env = makeEnv('grid/empty-8x8');
      env.reset({ seed: 3 });
      const actions = [2, 2, 1, 2, 2, 0, 2];
      const rewards: number[] = [];
      for (const a of actions) rewards.push((await env.step(a)).reward);
      const post = (body: unknown) => fetch(`${server.url}/score`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const res = await post({ seed: 3, actions, rewards });
      expect(res.status).toBe(200);
      const got = (await res.json()) as { terms: Record<string, number> };
      // Reference: the preset's own term, imported as JS, over the replayed step records with the steps before each.
      const { buildGridStepRecords } = await import('../core/reward/stepRecord.ts');
      const rec = buildGridStepRecords(makeEnv('grid/empty-8x8') as Parameters<typeof buildGridStepRecords>[0], { envId: 'grid/empty-8x8', seed: 3, actions, rewards });
      const mod = (await import(`data:text/javascript;base64,${Buffer.from(HACKABLE.reward.code).toString('base64')}`)) as Record<string, (s: unknown) => number>;
      const expected = rec.steps.reduce((a, s, i) => a + mod.closer({ ...s, episode: { seed: 3, envId: 'grid/empty-8x8', length: rec.steps.length, steps: rec.steps.slice(0, i), returnSoFar: 0 } }), 0);
      expect(expected).toBeGreaterThan(0);
      expect(got.terms.closer).toBeCloseTo(expected, 12);
      const wrong = await post({ seed: 3, actions, rewards: rewards.map((r, i) => (i === rewards.length - 1 ? r + 1 : r)) });
      expect(wrong.status).toBe(422);
      expect(JSON.stringify(await wrong.json())).toMatch(/reward/);
    } finally {
      await server.close();
    }
  });
});
