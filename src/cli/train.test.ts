import { mkdtempSync, readFileSync, existsSync, writeFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import * as ortNode from 'onnxruntime-node';
import { spawn } from 'node:child_process';
import { EXIT_INTERRUPTED, main, STOP_SIGNALS } from './train.ts';
import { presetIds, loadRunConfig } from './presets.ts';
import { parseRunConfig } from '../core/presets/schema.ts';
import { parseCliFolder, runToFile } from '../core/runs/format.ts';

describe('npm run train', () => {
  it('writes config, metrics, trajectories and a standalone policy.onnx', async () => {
    const out = mkdtempSync(join(tmpdir(), 'train-'));
    expect(await main(['--config', 'grid-empty-8x8-grpo', '--iterations', '2', '--seed', '5', '--out', out, '--quiet'])).toBe(0);
    const config = JSON.parse(readFileSync(join(out, 'config.json'), 'utf8'));
    expect(config.seed).toBe(5);
    expect(config.algo.clipHigh).toBeGreaterThan(0); // defaults filled in
    const lines = readFileSync(join(out, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(lines).toHaveLength(2);
    for (const key of ['reward/mean', 'episode/success_rate', 'adv/std', 'groups/frac_zero_std', 'actor/entropy', 'actor/pg_loss', 'actor/grad_norm', 'mismatch/logprob_abs_diff_max', 'perf/env_steps_per_s']) {
      expect(lines[1][key], key).toBeTypeOf('number');
      expect(Number.isFinite(lines[1][key]), key).toBe(true);
    }
    const m = lines[1];
    for (const key of ['episode/success_rate', 'groups/frac_zero_std']) {
      expect(m[key], key).toBeGreaterThanOrEqual(0);
      expect(m[key], key).toBeLessThanOrEqual(1);
    }
    // 7 actions: entropy in (0, ln 7]; an untrained policy is still near uniform.
    expect(m['actor/entropy']).toBeGreaterThan(0.5 * Math.log(7));
    expect(m['actor/entropy']).toBeLessThanOrEqual(Math.log(7) + 1e-6);
    expect(m['adv/std']).toBeGreaterThanOrEqual(0);
    expect(m['actor/grad_norm']).toBeGreaterThan(0);
    expect(m['mismatch/logprob_abs_diff_max']).toBeLessThanOrEqual(1e-4);
    expect(m['perf/env_steps_per_s']).toBeGreaterThan(0);
    const traj = readFileSync(join(out, 'trajectories.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(traj.length).toBeGreaterThan(0);
    expect(traj[0].actions.length).toBe(traj[0].logprobs.length);
    // Any ONNX runtime loads the exported policy: one observation in, 7 action log-probs out.
    const session = await ortNode.InferenceSession.create(join(out, 'policy.onnx'));
    const obs = new ortNode.Tensor('float32', new Float32Array(984), [1, 984]);
    const res = await session.run({ obs });
    const logp = res.logprobs.data as Float32Array;
    expect(logp.length).toBe(7);
    expect(logp.reduce((s, x) => s + Math.exp(x), 0)).toBeCloseTo(1, 5);
  });

  for (const algo of ['cispo', 'gspo', 'gigpo', 'remax', 'reinforcepp', 'mt-grpo'] as const) {
    it(`algo '${algo}' trains grid/empty-8x8 for 2 iterations from a JSON config`, { timeout: 60_000 }, async () => {
      const out = mkdtempSync(join(tmpdir(), `train-${algo}-`));
      const file = join(out, 'run.json');
      writeFileSync(file, JSON.stringify({ env: { id: 'grid/empty-8x8' }, model: { kind: 'mlp', hidden: [64, 64], activation: 'tanh' }, algo: { algo, groupSize: 8, lr: 0.001 }, rollout: { groups: 4, learnerBatch: 512 }, seed: 2 }));
      expect(await main(['--config', file, '--iterations', '2', '--out', join(out, 'run'), '--quiet'])).toBe(0);
      const lines = readFileSync(join(out, 'run', 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      expect(lines).toHaveLength(2);
      expect(JSON.parse(readFileSync(join(out, 'run', 'config.json'), 'utf8')).algo.algo).toBe(algo);
      for (const m of lines) {
        expect(m['actor/grad_norm']).toBeGreaterThan(0);
        expect(m['mismatch/logprob_abs_diff_max']).toBeLessThanOrEqual(1e-4);
        expect(m['adv/abs_mean']).toBeGreaterThan(0);
        // GiGPO found states that several of a group's episodes acted from (random walks revisit cells).
        if (algo === 'gigpo') expect(m['groups/step_groups_mean']).toBeGreaterThan(1);
        // ReMax played one greedy episode per group as its baseline.
        if (algo === 'remax') expect(Number.isFinite(m['remax/greedy_reward_mean'])).toBe(true);
      }
    });
  }

  it('tree rollouts train a tool env end to end: branches join their groups, their log-probs are the learner\'s', { timeout: 90_000 }, async () => {
    const out = mkdtempSync(join(tmpdir(), 'train-tree-'));
    const file = join(out, 'run.json');
    const tree = { enabled: true, entropyThreshold: 0.1, branches: 2, maxPoints: 1 };
    writeFileSync(file, JSON.stringify({ env: { id: 'tools/kv-lookup' }, model: { kind: 'transformer', dModel: 32, nLayers: 1, nHeads: 2, dFF: 64, context: 256 }, algo: { algo: 'grpo', groupSize: 4, lr: 0.001 }, rollout: { groups: 2, learnerBatch: 8, maxActionTokens: 8, tree }, seed: 4 }));
    expect(await main(['--config', file, '--iterations', '2', '--out', join(out, 'run'), '--quiet'])).toBe(0);
    const lines = readFileSync(join(out, 'run', 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    for (const m of lines) {
      // A fresh policy is unsure after every reply: each trunk with two turns or more branched twice.
      expect(m['train/batch_episodes']).toBeGreaterThan(8);
      expect(m['mismatch/logprob_abs_diff_max']).toBeLessThanOrEqual(1e-4);
    }
  });

  it('tree rollouts with constrained decoding: branches are decoded under the grammar masks as their trunks are', { timeout: 90_000 }, async () => {
    // Unmasked branches would mix masked and unmasked episodes in one batch (the learner refuses it),
    // and their actions would be free text (a fresh policy writes malformed calls and forced ends).
    const out = mkdtempSync(join(tmpdir(), 'train-tree-masked-'));
    const file = join(out, 'run.json');
    const tree = { enabled: true, entropyThreshold: 0.1, branches: 2, maxPoints: 1 };
    const env = { id: 'tools/kv-lookup', kwargs: { hops: 2, maxTurns: 5 } };
    writeFileSync(file, JSON.stringify({ env, model: { kind: 'transformer', dModel: 32, nLayers: 1, nHeads: 2, dFF: 64, context: 256 }, algo: { algo: 'grpo', groupSize: 4, lr: 0.001 }, rollout: { groups: 2, learnerBatch: 8, maxActionTokens: 16, constrained: true, tree }, seed: 4 }));
    expect(await main(['--config', file, '--iterations', '2', '--out', join(out, 'run'), '--quiet'])).toBe(0);
    const lines = readFileSync(join(out, 'run', 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(lines).toHaveLength(2);
    for (const m of lines) {
      expect(m['train/batch_episodes']).toBeGreaterThan(8);
      // The learner scores every position under the mask it was sampled with, branches included.
      expect(m['mismatch/logprob_abs_diff_max']).toBeLessThanOrEqual(1e-4);
      expect(m['episode/forced_end_ratio']).toBe(0);
    }
  });

  it('a tool config without a learner batch gets 16 sequences, not the grid default of 512 rows', () => {
    const r = parseRunConfig({ env: { id: 'tools/calculator' }, model: { kind: 'transformer' }, algo: { algo: 'grpo' } });
    expect(r.ok && r.config.rollout.learnerBatch).toBe(16);
    const g = parseRunConfig({ env: { id: 'grid/empty-5x5' }, model: { kind: 'mlp' }, algo: { algo: 'grpo' } });
    expect(g.ok && g.config.rollout.learnerBatch).toBe(512);
  });

  it('trains a tool env asynchronously with a token rollout worker: async keys in metrics.jsonl, a policy.onnx', { timeout: 60_000 }, async () => {
    const out = mkdtempSync(join(tmpdir(), 'train-async-'));
    const file = join(out, 'async.json');
    writeFileSync(
      file,
      JSON.stringify({
        env: { id: 'tools/flaky-api', kwargs: { latencyMedianMs: 2 } },
        model: { kind: 'transformer', dModel: 16, nLayers: 1, nHeads: 2, dFF: 32, context: 256 },
        algo: { algo: 'grpo', groupSize: 4, tis: { enabled: true, cap: 2 } },
        rollout: { groups: 2, learnerBatch: 8, maxActionTokens: 8, mode: 'async', maxStaleness: 1, kvRows: 4, workers: 1 },
        iterations: 3,
      }),
    );
    expect(await main(['--config', file, '--out', out, '--quiet', '--eval', '3'])).toBe(0);
    const lines = readFileSync(join(out, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(lines).toHaveLength(3);
    // --eval: rates before and after RL, and every held-out episode (3 seeds, greedy and sampled, twice).
    const evals = JSON.parse(readFileSync(join(out, 'eval.json'), 'utf8'));
    expect(evals.map((e: { when: string }) => e.when)).toEqual(['before RL', 'after RL']);
    const episodes = readFileSync(join(out, 'eval-episodes.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(episodes.map((e) => `${e.when}/${e.temperature}/${e.seed}`)).toEqual(
      ['before RL', 'after RL'].flatMap((w) => [0, 1].flatMap((t) => [0, 1, 2].map((i) => `${w}/${t}/${2_000_000_000 + i}`))),
    );
    for (const e of episodes) {
      expect(e.transcript.startsWith('task: fetch the value')).toBe(true);
      expect(e.actions.every((a: unknown) => typeof a === 'string')).toBe(true);
    }
    // The greedy rate in eval.json is the share of successful greedy episodes.
    const greedyBefore = episodes.filter((e) => e.when === 'before RL' && e.temperature === 0);
    expect(evals[0].greedy_success).toBeCloseTo(greedyBefore.filter((e) => e.success).length / 3, 9);
    // After RL: seeds fixed (failed before, solved after) and broke (the reverse), recounted from the episodes.
    for (const [t, name] of [[0, 'greedy'], [1, 'sampled']] as const) {
      const won = (when: string) => new Map(episodes.filter((e) => e.when === when && e.temperature === t).map((e) => [e.seed, e.success]));
      const [b, a] = [won('before RL'), won('after RL')];
      expect(evals[1][`${name}_fixed`]).toBe([...a].filter(([seed, ok]) => ok && !b.get(seed)).length);
      expect(evals[1][`${name}_broke`]).toBe([...a].filter(([seed, ok]) => !ok && b.get(seed)).length);
    }
    expect(evals[0]).not.toHaveProperty('greedy_fixed');
    for (const l of lines) {
      expect(l['train/batch_episodes']).toBe(8);
      expect(l['async/staleness_max']).toBeLessThanOrEqual(1);
      expect(l['perf/kv_cache_hit_rate']).toBeGreaterThanOrEqual(0);
      expect(l['perf/kv_cache_hit_rate']).toBeLessThanOrEqual(1);
      expect(Number.isInteger(l['async/kv_evictions']) && l['async/kv_evictions'] >= 0).toBe(true);
    }
    expect(existsSync(join(out, 'policy.onnx'))).toBe(true);
  });

  it('async token runs take a group algorithm; tool envs take at most one rollout worker', () => {
    const base = { env: { id: 'tools/calculator' }, model: { kind: 'transformer' } };
    const r = parseRunConfig({ ...base, algo: { algo: 'reinforce' }, rollout: { mode: 'async' } });
    expect(!r.ok && r.messages.join()).toMatch(/rollout\.mode: async token training takes a group algorithm/);
    const w = parseRunConfig({ ...base, algo: { algo: 'grpo' }, rollout: { workers: 2 } });
    expect(!w.ok && w.messages.join()).toMatch(/rollout\.workers: tool envs decode in the training thread \(0\) or in one rollout worker \(1\)/);
  });

  it('potential shaping under PPO must use the learner\'s discount', () => {
    const base = { env: { id: 'grid/empty-5x5' }, model: { kind: 'mlp' }, algo: { algo: 'ppo', gamma: 0.99 } };
    const bad = parseRunConfig({ ...base, shaping: { potential: { weight: 0.1, gamma: 1 } } });
    expect(!bad.ok && bad.messages.join()).toMatch(/shaping\.potential\.gamma: must equal algo\.gamma \(0\.99\)/);
    expect(parseRunConfig({ ...base, shaping: { potential: { weight: 0.1, gamma: 0.99 } } }).ok).toBe(true);
  });

  it('Ctrl-C on the default engine: finishes the iteration, writes every output, says where it stopped, exits 130', { timeout: 60_000 }, async () => {
    const out = mkdtempSync(join(tmpdir(), 'train-sigint-'));
    // Its own process group, as a terminal's Ctrl-C signals the whole foreground group.
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/train.ts', '--config', 'grid-empty-8x8-grpo', '--iterations', '100000', '--out', out], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stderr.on('data', () => undefined);
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    await new Promise<void>((resolve) =>
      child.stdout.on('data', (d: Buffer) => {
        stdout += d.toString();
        if (/\bit +3 /.test(stdout)) resolve();
      }),
    );
    process.kill(-child.pid!, 'SIGINT');
    expect(await exited).toBe(EXIT_INTERRUPTED);
    const at = Number(/interrupted at iteration (\d+); wrote config\.json, metrics\.jsonl, trajectories\.jsonl, policy\.onnx/.exec(stdout)?.[1]);
    expect(at).toBeGreaterThanOrEqual(4);
    expect(readFileSync(join(out, 'metrics.jsonl'), 'utf8').trim().split('\n')).toHaveLength(at);
    // Ctrl-C also saves the checkpoint of the last finished iteration, and says how to continue.
    expect(JSON.parse(readFileSync(join(out, 'checkpoint.json'), 'utf8')).iteration).toBe(at);
    expect(stdout).toContain(`continue with: npm run train -- --resume ${out}`);
    const session = await ortNode.InferenceSession.create(join(out, 'policy.onnx'));
    const res = await session.run({ obs: new ortNode.Tensor('float32', new Float32Array(984), [1, 984]) });
    expect((res.logprobs.data as Float32Array).every(Number.isFinite)).toBe(true);
  });

  /** Starts the CLI in a child process (its own process group, as a terminal runs it); resolves its exit code and gathers stdout. */
  function spawnTrain(args: string[]) {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/train.ts', ...args], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const run = { child, stdout: '', stderr: '', exited: new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code))) };
    child.stdout.on('data', (d: Buffer) => void (run.stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => void (run.stderr += d.toString()));
    const until = (re: RegExp, timeoutMs = 120_000) =>
      new Promise<number>((resolve, reject) => {
        const t0 = performance.now();
        const timer = setInterval(() => {
          if (re.test(run.stdout)) {
            clearInterval(timer);
            resolve(performance.now());
          } else if (performance.now() - t0 > timeoutMs || child.exitCode !== null) {
            clearInterval(timer);
            reject(new Error(`never printed ${re}: ${run.stdout}${run.stderr}`));
          }
        }, 10);
      });
    return { ...run, until, out: () => run.stdout };
  }

  it('SIGTERM (as a process manager sends it) at iteration 3: checkpoint, policy.onnx, status 143, and --resume continues the folder', { timeout: 120_000 }, async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'train-sigterm-')), 'run');
    const run = spawnTrain(['--config', 'grid-empty-8x8-grpo', '--iterations', '100000', '--out', out]);
    await run.until(/\bit +3 /);
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(STOP_SIGNALS.SIGTERM);
    const stdout = run.out();
    expect(stdout).toMatch(/SIGTERM received: stopping after this iteration and writing outputs/);
    const at = Number(/interrupted by SIGTERM at iteration (\d+); wrote config\.json, metrics\.jsonl, trajectories\.jsonl, policy\.onnx, policy\.json, checkpoint\.json/.exec(stdout)?.[1]);
    expect(at).toBeGreaterThanOrEqual(4);
    expect(stdout).toContain(`continue with: npm run train -- --resume ${out}`);
    expect(JSON.parse(readFileSync(join(out, 'checkpoint.json'), 'utf8')).iteration).toBe(at);
    expect(readFileSync(join(out, 'metrics.jsonl'), 'utf8').trim().split('\n')).toHaveLength(at);
    const session = await ortNode.InferenceSession.create(join(out, 'policy.onnx'));
    expect(((await session.run({ obs: new ortNode.Tensor('float32', new Float32Array(984), [1, 984]) })).logprobs.data as Float32Array).every(Number.isFinite)).toBe(true);
    // The folder resumes: two more iterations, appended.
    expect(await main(['--resume', out, '--iterations', String(at + 2), '--quiet'])).toBe(0);
    const rows = readFileSync(join(out, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(rows.map((r) => r.iteration)).toEqual(Array.from({ length: at + 2 }, (_, i) => i));
    expect(JSON.parse(readFileSync(join(out, 'checkpoint.json'), 'utf8')).iteration).toBe(at + 2);
  });

  it('a second SIGTERM during a long warm start quits at once (status 143), saying where it stopped and what the folder keeps', { timeout: 180_000 }, async () => {
    // flaky-api-async trains 1200 imitation steps before RL (minutes here); its learner's steps
    // resolve without I/O, so without a macrotask turn per step no signal is heard until the end.
    const out = join(mkdtempSync(join(tmpdir(), 'train-sigterm-warm-')), 'run');
    const run = spawnTrain(['--config', 'flaky-api-async', '--iterations', '3', '--out', out]);
    await run.until(/^warm start +1\/1200 /m);
    const sent = performance.now();
    run.child.kill('SIGTERM');
    await run.until(/SIGTERM received: stopping once the warm start is done, before the first iteration, and writing outputs \(a signal again to quit at once\)/, 60_000);
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(STOP_SIGNALS.SIGTERM);
    const quitAfterS = (performance.now() - sent) / 1000;
    console.log(`two SIGTERMs in the warm start: exited ${quitAfterS.toFixed(1)} s after the first`);
    // Generous: the warm start alone runs minutes; a held signal would surface only after it.
    expect(quitAfterS).toBeLessThan(60);
    const stdout = run.out();
    const step = Number(/SIGTERM again: quitting now during the warm start \(step (\d+) of 1200; its weights are not kept\)/.exec(stdout)?.[1]);
    expect(step).toBeGreaterThanOrEqual(1);
    expect(step).toBeLessThan(1200);
    expect(stdout).toContain(`${out} keeps what was written so far (config.json, metrics.jsonl, trajectories.jsonl; metrics.jsonl: 0 iterations); no checkpoint was saved: run it again to start over`);
    expect(stdout).not.toMatch(/^it +0 /m);
    expect(JSON.parse(readFileSync(join(out, 'config.json'), 'utf8')).id).toBe('flaky-api-async');
    expect(existsSync(join(out, 'checkpoint.json'))).toBe(false);
    expect(existsSync(join(out, 'policy.onnx'))).toBe(false);
  });

  it('Ctrl-C while a slow reward term scores: acknowledged at once, the iteration is dropped within a second, the folder resumes', { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'train-sigint-terms-'));
    // 8 short episodes a batch (rollouts take milliseconds), and a term taking ~5 ms a step: seconds of scoring.
    writeFileSync(join(dir, 'small.json'), JSON.stringify({ env: { id: 'grid/empty-5x5' }, model: { kind: 'mlp', hidden: [16] }, algo: { algo: 'grpo', groupSize: 4 }, rollout: { groups: 2, learnerBatch: 64 }, seed: 1 }));
    writeFileSync(join(dir, 'slow.js'), 'export const slow = (s) => {\n  const t = Date.now();\n  while (Date.now() - t < 5) {}\n  return 0;\n};\n');
    const out = join(dir, 'run');
    const run = spawnTrain(['--config', join(dir, 'small.json'), '--iterations', '100000', '--reward', join(dir, 'slow.js'), '--out', out]);
    // Printed right before the first iteration starts.
    await run.until(/^reward code /m);
    await new Promise((r) => setTimeout(r, 1000));
    const sent = performance.now();
    process.kill(-run.child.pid!, 'SIGINT');
    const acked = await run.until(/interrupted: stopping after this iteration \(or dropping it while its reward terms score\)/);
    expect(await run.exited).toBe(EXIT_INTERRUPTED);
    const exited = performance.now();
    console.log(`Ctrl-C during scoring: acknowledged after ${(acked - sent).toFixed(0)} ms, exited after ${(exited - sent).toFixed(0)} ms`);
    expect(acked - sent).toBeLessThan(1000);
    const stdout = run.out();
    expect(run.stderr).not.toMatch(/error in iteration/);
    const at = Number(/interrupted at iteration (\d+) \(iteration \1 was being scored by the reward terms: dropped/.exec(stdout)?.[1]);
    expect(at).toBeGreaterThanOrEqual(0);
    // The checkpoint is the last finished iteration's, and the metrics stop there.
    expect(JSON.parse(readFileSync(join(out, 'checkpoint.json'), 'utf8')).iteration).toBe(at);
    expect(readFileSync(join(out, 'metrics.jsonl'), 'utf8').split('\n').filter(Boolean)).toHaveLength(at);
    expect(existsSync(join(out, 'policy.onnx'))).toBe(true);
    // --resume trains the dropped iteration again.
    expect(await main(['--resume', out, '--iterations', String(at + 1), '--quiet'])).toBe(0);
    const rows = readFileSync(join(out, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(rows.map((r) => r.iteration)).toEqual(Array.from({ length: at + 1 }, (_, i) => i));
    expect(rows[at]['reward/slow/mean']).toBe(0);
  });

  it('--out "" is refused, and a refused --resume creates no folder', async () => {
    await expect(main(['--config', 'grid-empty-8x8-grpo', '--out', ''])).rejects.toThrow(/--out must name a folder \(got an empty string/);
    await expect(main(['--resume', ''])).rejects.toThrow(/--resume must name a run folder/);
    const dir = mkdtempSync(join(tmpdir(), 'resume-nothing-'));
    const a = join(dir, 'a');
    expect(await main(['--config', 'grid-empty-8x8-grpo', '--iterations', '1', '--out', a, '--quiet'])).toBe(0);
    // A checkpoint of another model: refused (its tensors named) before anything is written.
    const cfg = JSON.parse(readFileSync(join(a, 'config.json'), 'utf8'));
    writeFileSync(join(a, 'config.json'), JSON.stringify({ ...cfg, model: { ...cfg.model, hidden: [32] } }));
    await expect(main(['--resume', a, '--iterations', '3', '--out', join(dir, 'new', 'deeper'), '--quiet'])).rejects.toThrow(/the checkpoint does not fit the run's config/);
    expect(readdirSync(dir)).toEqual(['a']);
    // The same from a run file, into the default folder under runs/ (made and taken away again).
    const runsBefore = existsSync('runs') ? readdirSync('runs') : null;
    const folder = parseCliFolder(['config.json', 'metrics.jsonl', 'trajectories.jsonl', 'checkpoint.json'].map((f) => ({ name: f, text: readFileSync(join(a, f), 'utf8') })), 'a');
    if (!folder.ok) throw new Error(folder.messages.join('\n'));
    writeFileSync(join(dir, 'a.run.json'), runToFile(folder.run));
    await expect(main(['--resume', join(dir, 'a.run.json'), '--iterations', '3', '--quiet'])).rejects.toThrow(/the checkpoint does not fit the run's config/);
    expect(existsSync('runs') ? readdirSync('runs') : null).toEqual(runsBefore);
  });

  it('lr 1e300 is refused with its bound before anything runs (no NaN policy can be written)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lr-'));
    const file = join(dir, 'lr.json');
    writeFileSync(file, JSON.stringify({ env: { id: 'grid/empty-5x5' }, model: { kind: 'mlp' }, algo: { algo: 'grpo', lr: 1e300, adamEps: 1e-300 } }));
    const err = await main(['--config', file, '--out', join(dir, 'o')]).then(
      () => null,
      (e: Error) => e.message,
    );
    expect(err).toMatch(/algo\.lr: must be ≤ 1 .*algo\.adamEps: must be ≥ 1e-12/s);
    expect(existsSync(join(dir, 'o', 'policy.onnx'))).toBe(false);
  });

  it('--out: a folder holding a run is refused unless --force; an unwritable path fails at once with its reason', async () => {
    const out = mkdtempSync(join(tmpdir(), 'out-'));
    expect(await main(['--config', 'grid-empty-8x8-grpo', '--iterations', '1', '--out', out, '--quiet'])).toBe(0);
    await expect(main(['--config', 'grid-empty-8x8-grpo', '--iterations', '1', '--out', out, '--quiet'])).rejects.toThrow(
      /^--out .* already holds a run \(config\.json, metrics\.jsonl, trajectories\.jsonl, policy\.onnx, policy\.json, checkpoint\.json\): pass --force/,
    );
    expect(await main(['--config', 'grid-empty-8x8-grpo', '--iterations', '1', '--out', out, '--quiet', '--force'])).toBe(0);
    // It used to hang here (Node's recursive mkdir on /proc); the test's own timeout would catch that.
    await expect(main(['--config', 'grid-empty-8x8-grpo', '--iterations', '1', '--out', '/proc/x', '--quiet'])).rejects.toThrow(/^cannot write the run to --out \/proc\/x: /);
    writeFileSync(join(out, 'a-file'), '');
    await expect(main(['--config', 'grid-empty-8x8-grpo', '--out', join(out, 'a-file')])).rejects.toThrow(/it exists and is not a folder/);
  });

  it('--resume continues a run folder from its checkpoint: the metrics after it equal an uninterrupted run\'s; a run file resumes into a new folder', { timeout: 180_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'resume-'));
    const timeless = (m: Record<string, unknown>) => Object.fromEntries(Object.entries(m).filter(([k]) => !k.startsWith('perf/') && k !== 'wall_s'));
    const read = (d: string) => readFileSync(join(d, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    // The reference: 5 iterations without a stop.
    expect(await main(['--config', 'grid-empty-8x8-grpo', '--iterations', '5', '--out', join(dir, 'straight'), '--quiet'])).toBe(0);
    const ref = read(join(dir, 'straight'));
    // 3 iterations, checkpoints every 2 and at the end (iteration 3), then resumed in place to 5.
    const a = join(dir, 'a');
    expect(await main(['--config', 'grid-empty-8x8-grpo', '--iterations', '3', '--checkpoint-every', '2', '--out', a, '--quiet'])).toBe(0);
    expect(JSON.parse(readFileSync(join(a, 'checkpoint.json'), 'utf8')).iteration).toBe(3);
    expect(await main(['--resume', a, '--iterations', '5', '--quiet'])).toBe(0);
    const resumed = read(a);
    expect(resumed.map((r) => r.iteration)).toEqual([0, 1, 2, 3, 4]);
    for (let i = 3; i < 5; i++) expect(timeless(resumed[i]), `iteration ${i}`).toEqual(timeless(ref[i]));
    expect(resumed[3].wall_s).toBeGreaterThanOrEqual(resumed[2].wall_s);
    expect(JSON.parse(readFileSync(join(a, 'checkpoint.json'), 'utf8')).iteration).toBe(5);
    expect(JSON.parse(readFileSync(join(a, 'config.json'), 'utf8')).iterations).toBe(5);

    // The same run as an app run file (what the Runs view exports), resumed into a new folder.
    const folder = parseCliFolder(['config.json', 'metrics.jsonl', 'trajectories.jsonl', 'checkpoint.json'].map((f) => ({ name: f, text: readFileSync(join(a, f), 'utf8') })), 'a');
    if (!folder.ok) throw new Error(folder.messages.join('\n'));
    const file = join(dir, 'a.run.json');
    writeFileSync(file, runToFile(folder.run));
    const c = join(dir, 'c');
    expect(await main(['--resume', file, '--iterations', '6', '--out', c, '--quiet'])).toBe(0);
    const fromFile = read(c);
    expect(fromFile.map((r) => r.iteration)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(timeless(fromFile[4])).toEqual(timeless(resumed[4]));
    // Nothing to do at the end of the budget; --config and --seed do not go with --resume.
    await expect(main(['--resume', a, '--quiet'])).rejects.toThrow(/checkpoint is at iteration 5 of 5; pass --iterations N with N > 5/);
    await expect(main(['--resume', a, '--config', 'grid-empty-8x8-grpo'])).rejects.toThrow(/leave out --config and --seed/);
    // --out to another folder that holds a run is refused as for any run.
    await expect(main(['--resume', file, '--iterations', '7', '--out', c, '--quiet'])).rejects.toThrow(/already holds a run/);
  });

  it('--resume continues a token run (tool env, warm start, KL reference) bit for bit, without training the warm start again', { timeout: 180_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'resume-token-'));
    const timeless = (m: Record<string, unknown>) => Object.fromEntries(Object.entries(m).filter(([k]) => !k.startsWith('perf/') && k !== 'wall_s'));
    const read = (d: string) => readFileSync(join(d, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    // REINFORCE trains on the lockstep token loop (no tool latency waited on: reproducible).
    const config = join(dir, 'calc-tiny.json');
    writeFileSync(
      config,
      JSON.stringify({
        env: { id: 'tools/calculator' },
        model: { kind: 'transformer', dModel: 16, nLayers: 1, nHeads: 2, dFF: 32, context: 128 },
        warmStart: { steps: 30, batch: 8, lr: 0.01 },
        algo: { algo: 'reinforce', lr: 0.003, baseline: 'ema', klCoef: 0.001 },
        rollout: { episodes: 8, learnerBatch: 8, maxActionTokens: 12 },
        seed: 3,
      }),
    );
    expect(await main(['--config', config, '--iterations', '4', '--out', join(dir, 'straight'), '--quiet'])).toBe(0);
    const ref = read(join(dir, 'straight'));
    const a = join(dir, 'a');
    expect(await main(['--config', config, '--iterations', '2', '--checkpoint-every', '1', '--out', a, '--quiet'])).toBe(0);
    const cp = JSON.parse(readFileSync(join(a, 'checkpoint.json'), 'utf8'));
    expect([cp.trainer, cp.iteration, Object.keys(cp.reference ?? {}).length > 0]).toEqual(['token', 2, true]);
    const printed: string[] = [];
    const log = vi.spyOn(console, 'log').mockImplementation((line: unknown) => void printed.push(String(line)));
    try {
      expect(await main(['--resume', a, '--iterations', '4'])).toBe(0);
    } finally {
      log.mockRestore();
    }
    expect(printed.some((l) => l.startsWith('resuming '))).toBe(true);
    expect(printed.filter((l) => l.startsWith('warm start'))).toEqual([]);
    const resumed = read(a);
    expect(resumed.map((r) => r.iteration)).toEqual([0, 1, 2, 3]);
    for (let i = 2; i < 4; i++) expect(timeless(resumed[i]), `iteration ${i}`).toEqual(timeless(ref[i]));
    expect(resumed[3]['train/policy_version']).toBe(4);
  });

  it('--resume refuses a file without a checkpoint or with a bad one, naming the field, and changes nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'resume-bad-'));
    const a = join(dir, 'a');
    expect(await main(['--config', 'grid-empty-8x8-grpo', '--iterations', '1', '--out', a, '--quiet'])).toBe(0);
    const files = ['config.json', 'metrics.jsonl', 'trajectories.jsonl', 'checkpoint.json'].map((f) => ({ name: f, text: readFileSync(join(a, f), 'utf8') }));
    const folder = parseCliFolder(files, 'a');
    if (!folder.ok) throw new Error(folder.messages.join('\n'));
    const f = JSON.parse(runToFile(folder.run));
    f.checkpoint.learner.tensors['adam.m'].base64 = 'not base64!';
    writeFileSync(join(dir, 'bad.run.json'), JSON.stringify(f));
    await expect(main(['--resume', join(dir, 'bad.run.json'), '--iterations', '3'])).rejects.toThrow(/bad\.run\.json: checkpoint\.learner\.tensors\["adam\.m"\]\.base64: not base64/);
    f.checkpoint = null;
    writeFileSync(join(dir, 'none.run.json'), JSON.stringify(f));
    await expect(main(['--resume', join(dir, 'none.run.json'), '--iterations', '3'])).rejects.toThrow(/checkpoint: null \(the run saved no checkpoint\)/);
    const metricsBefore = readFileSync(join(a, 'metrics.jsonl'), 'utf8');
    writeFileSync(join(a, 'checkpoint.json'), JSON.stringify({ ...JSON.parse(files[3].text), policyVersion: -1 }));
    await expect(main(['--resume', a, '--iterations', '3'])).rejects.toThrow(/checkpoint\.json: policyVersion: /);
    expect(readFileSync(join(a, 'metrics.jsonl'), 'utf8')).toBe(metricsBefore);
    // A checkpoint of another model: refused, its tensors named, before any file is rewritten.
    const cfg = JSON.parse(files[0].text);
    writeFileSync(join(a, 'checkpoint.json'), files[3].text);
    writeFileSync(join(a, 'config.json'), JSON.stringify({ ...cfg, model: { ...cfg.model, hidden: [32] } }));
    await expect(main(['--resume', a, '--iterations', '3', '--quiet'])).rejects.toThrow(/--resume .*: the checkpoint does not fit the run's config:\n {2}- checkpoint\.learner\.tensors\./);
    expect(readFileSync(join(a, 'metrics.jsonl'), 'utf8')).toBe(metricsBefore);
    await expect(main(['--resume', join(dir, 'nope')])).rejects.toThrow(/--resume .*nope: no such file or folder/);
  });

  it('--help lists every env\'s kwargs with defaults and ranges', async () => {
    const lines: string[] = [];
    const log = console.log;
    console.log = (t: string) => void lines.push(t);
    try {
      expect(await main(['--help'])).toBe(0);
    } finally {
      console.log = log;
    }
    expect(lines.join('\n')).toMatch(/grid\/door-key-6x6: size=6 \(5\.\.64\), maxSteps=360 \(1\.\.100000\), viewSize=7 \(odd, 3\.\.15\)/);
    expect(lines.join('\n')).toMatch(/tools\/calculator: maxTurns=4 \(1\.\.100\), minDigits=3/);
  });

  it('an oversized --eval is refused before anything runs', async () => {
    await expect(main(['--config', 'grid-empty-8x8-grpo', '--eval', '2147483647'])).rejects.toThrow(/--eval must be an integer from 0 to 100000/);
  });

  it('every preset validates', () => {
    expect(presetIds().length).toBeGreaterThanOrEqual(2);
    for (const id of presetIds()) expect(() => loadRunConfig(id), id).not.toThrow();
  });

  it('says exactly what is wrong with a bad config file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bad-'));
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify({ env: { id: 'grid/empty-5x5' }, model: { kind: 'mlp', hidden: [0] }, algo: { algo: 'grpo', clipHigh: -1 } }));
    await expect(main(['--config', file, '--out', join(dir, 'o')])).rejects.toThrow(/model\.hidden\.0/);
    writeFileSync(file, JSON.stringify({ env: { id: 'grid/empty-5x5' }, model: { kind: 'mlp' }, algo: { algo: 'grpo', clipHigh: -1 } }));
    await expect(main(['--config', file, '--out', join(dir, 'o')])).rejects.toThrow(/algo\.clipHigh/);
    await expect(main(['--config', 'no-such-preset'])).rejects.toThrow(/grid-empty-8x8-grpo/);
    await expect(main(['--config', 'grid-empty-8x8-grpo', '--iterations', 'x'])).rejects.toThrow(/--iterations must be an integer/);
    await expect(main(['--config', 'grid-empty-8x8-grpo', '--seed', ''])).rejects.toThrow(/--seed must be an integer/);
    writeFileSync(file, JSON.stringify({ env: { id: 'grid/nope' }, model: { kind: 'mlp' }, algo: { algo: 'grpo' } }));
    await expect(main(['--config', file, '--out', join(dir, 'o')])).rejects.toThrow(/env: unknown env "grid\/nope"/);
    writeFileSync(file, JSON.stringify({ env: { id: 'tools/calculator' }, model: { kind: 'mlp' }, algo: { algo: 'grpo' } }));
    await expect(main(['--config', file, '--out', join(dir, 'o')])).rejects.toThrow(/model\.kind: tool envs train a 'transformer'/);
    expect(existsSync(join(dir, 'o', 'metrics.jsonl'))).toBe(false);
  });
});
