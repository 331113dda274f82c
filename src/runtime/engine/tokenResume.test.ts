/**
 * Resume for the token trainers (the sibling of resume.test.ts, which covers the grid trainer):
 * a run on the lockstep token loop checkpointed after k iterations, serialised to JSON text, restored
 * into a fresh trainer and continued gives the same metrics and weights, bit for bit, as the run
 * that never stopped. A run on the continuous loop resumes validly and trains on. A tiny
 * transformer (d 16, 1 layer, context 128) on the calculator tool env keeps each case to seconds.
 */
import { describe, expect, it } from 'vitest';
import { parseRunConfig, type RunConfig } from '../../core/presets/schema.ts';
import { createTrainer } from '../../core/trainer/createTrainer.ts';
import { checkpointFromJson, checkpointToJson, type Checkpoint } from '../../core/runs/checkpoint.ts';
import { policyOnnxFromCheckpoint } from '../../core/runs/policyExport.ts';
import { exportPolicyOnnx } from '../../core/models/export.ts';
import type { RunTrainer } from '../../core/trainer/api.ts';
import type { Engine } from '../../core/engine/types.ts';
import { VirtualClock } from '../../core/envs/clock.ts';
import { loadNodeEngine } from './node.ts';
import { nodeTokenWorker } from '../tokenWorker/node.ts';

const TINY = { kind: 'transformer', dModel: 16, nLayers: 1, nHeads: 2, dFF: 32, context: 128 };

function config(extra: Record<string, unknown> = {}): RunConfig {
  const r = parseRunConfig({
    env: { id: 'tools/calculator' },
    model: TINY,
    algo: { algo: 'reinforce', lr: 0.003, baseline: 'ema' },
    rollout: { episodes: 8, learnerBatch: 8, maxActionTokens: 12 },
    iterations: 4,
    seed: 5,
    ...extra,
  });
  if (!r.ok) throw new Error(r.messages.join('\n'));
  return r.config;
}

/** Metrics that measure time (perf/*) differ between any two runs; everything else must not. */
const timeless = (m: Record<string, number>) => Object.fromEntries(Object.entries(m).filter(([k]) => !k.startsWith('perf/')));

/** Through JSON text and back, as a file or the run store would carry it. */
function roundTrip(cp: Checkpoint): Checkpoint {
  const parsed = checkpointFromJson(JSON.parse(JSON.stringify(checkpointToJson(cp))));
  if (!parsed.ok) throw new Error(parsed.messages.join('\n'));
  return parsed.checkpoint;
}

/** Async token runs wait for tool latency on a virtual clock here (no real waiting, reproducible). */
const make = (cfg: RunConfig, engine: Engine, resume?: Checkpoint): Promise<RunTrainer> => createTrainer(cfg, engine, { clock: new VirtualClock(), resume });

async function run(cfg: RunConfig, n: number, k: number) {
  const engine = await loadNodeEngine('ort-web-wasm');
  const straight = await make(cfg, engine);
  const ref: Record<string, number>[] = [];
  for (let i = 0; i < n; i++) ref.push(timeless((await straight.step()).metrics));
  const refWeights = await straight.getWeights();
  await straight.release();

  const first = await make(cfg, engine);
  expect(first.canCheckpoint).toBe(true);
  for (let i = 0; i < k; i++) await first.step();
  const cp = roundTrip(await first.checkpoint());
  await first.release();
  const resumed = await make(cfg, engine, cp);
  await resumed.restore(cp);
  expect(resumed.iteration).toBe(k);
  const after: Record<string, number>[] = [];
  for (let i = k; i < n; i++) {
    const r = await resumed.step();
    expect(r.iteration).toBe(i);
    after.push(timeless(r.metrics));
  }
  const weights = await resumed.getWeights();
  const last = await resumed.checkpoint();
  await resumed.release();
  return { ref, refWeights, after, weights, cp, last };
}

function expectSameWeights(a: Record<string, Float32Array>, b: Record<string, Float32Array>): void {
  expect(Object.keys(a).sort()).toEqual(Object.keys(b).sort());
  for (const [name, w] of Object.entries(a)) expect(new Uint32Array(b[name].buffer), name).toEqual(new Uint32Array(w.buffer));
}

describe('token trainers resume from a checkpoint (ort-web WASM in Node)', () => {
  it('lockstep token loop REINFORCE (EMA baseline) on tools/calculator: 2 + checkpoint → fresh trainer → 2 more equals 4 uninterrupted, bit for bit', { timeout: 120_000 }, async () => {
    const { ref, refWeights, after, weights, cp } = await run(config(), 4, 2);
    expect(cp.trainer).toBe('token');
    expect(cp.ema.initialized).toBe(true);
    expect(cp.reference).toBeUndefined();
    for (let i = 0; i < 2; i++) expect(after[i], `iteration ${2 + i}`).toEqual(ref[2 + i]);
    expectSameWeights(refWeights, weights);
    // Vacuous if nothing trained after the checkpoint.
    expect(ref[3]['actor/grad_norm']).toBeGreaterThan(0);
    expect(after[1]['train/policy_version']).toBe(4);
  });

  it('lockstep token loop PPO with a value head, a KL reference and edited live hyper/reward weights: bit for bit', { timeout: 120_000 }, async () => {
    const cfg = config({ algo: { algo: 'ppo', lr: 0.003, klCoef: 0.01, klMode: 'loss' }, shaping: { format: { weight: 0.1 } } });
    const engine = await loadNodeEngine('ort-web-wasm');
    // Live edits before the checkpoint must survive it: both runs make them after iteration 1.
    const edit = (t: RunTrainer) => t.setHyper({ lr: 0.002, rewardWeights: { format: 0.3 } });
    const straight = await make(cfg, engine);
    const ref: Record<string, number>[] = [];
    for (let i = 0; i < 4; i++) {
      if (i === 1) edit(straight);
      ref.push(timeless((await straight.step()).metrics));
    }
    await straight.release();
    const first = await make(cfg, engine);
    await first.step();
    edit(first);
    await first.step();
    const cp = roundTrip(await first.checkpoint());
    await first.release();
    expect(cp.reference && Object.keys(cp.reference).length).toBeGreaterThan(0);
    expect(cp.rewardWeights.format).toBe(0.3);
    expect(cp.hyper.lr).toBe(0.002);
    const resumed = await make(cfg, engine, cp);
    await resumed.restore(cp);
    for (let i = 2; i < 4; i++) expect(timeless((await resumed.step()).metrics), `iteration ${i}`).toEqual(ref[i]);
    await resumed.release();
    expect(ref[3]['actor/lr']).toBe(0.002);
    expect(ref[3]['train/policy_version']).toBe(4);
  });

  it('lockstep token loop on a grid played as text (grid/empty-5x5, PPO with token GAE, 2 epochs × 2 minibatches): bit for bit', { timeout: 120_000 }, async () => {
    const cfg = config({
      env: { id: 'grid/empty-5x5', kwargs: { viewSize: 3, maxSteps: 8 } },
      model: { ...TINY, context: 160 },
      algo: { algo: 'ppo', lr: 0.003, updateEpochs: 2, minibatches: 2 },
      shaping: { format: { weight: 0.1 } },
      rollout: { episodes: 8, learnerBatch: 4, maxActionTokens: 2 },
    });
    const { ref, refWeights, after, weights, cp } = await run(cfg, 4, 2);
    expect(cp.trainer).toBe('token');
    for (let i = 0; i < 2; i++) expect(after[i], `iteration ${2 + i}`).toEqual(ref[2 + i]);
    expectSameWeights(refWeights, weights);
    expect(after[1]['train/policy_version']).toBe(4);
  });

  it('a token checkpoint is refused by another config, naming why, and leaves the trainer fresh', { timeout: 60_000 }, async () => {
    const engine = await loadNodeEngine('ort-web-wasm');
    const a = await make(config(), engine);
    await a.step();
    const cp = await a.checkpoint();
    await a.release();
    const wider = await make(config({ model: { ...TINY, dModel: 32 } }), engine);
    await expect(wider.restore(cp)).rejects.toThrow(/setState: .*(expected shape|missing state tensor|unknown state tensor)/);
    expect(wider.iteration).toBe(0);
    await wider.release();
    const withKl = await make(config({ algo: { algo: 'reinforce', lr: 0.003, klCoef: 0.01 } }), engine);
    await expect(withKl.restore(cp)).rejects.toThrow(/reference: the checkpoint has no KL reference weights/);
    await withKl.release();
    const grpo = await make(config({ algo: { algo: 'grpo', groupSize: 4 }, rollout: { groups: 2, learnerBatch: 8 } }), engine);
    await expect(grpo.restore(cp)).rejects.toThrow(/written by the 'token' trainer, this run's is 'async-token'/);
    await grpo.release();
  });

  it('continuous token loop (GRPO, staleness 1): checkpoint between iterations, resume, and train on', { timeout: 120_000 }, async () => {
    const cfg = config({ algo: { algo: 'grpo', groupSize: 4, lr: 0.003, klCoef: 0.01 }, rollout: { groups: 2, learnerBatch: 8, maxActionTokens: 12, mode: 'async', maxStaleness: 1 } });
    const { after, cp, last } = await run(cfg, 4, 2);
    expect(cp.trainer).toBe('async-token');
    expect(cp.policyVersion).toBe(2);
    expect(cp.groups!.next).toBeGreaterThanOrEqual(4);
    expect(cp.reference).toBeDefined();
    expect(after.map((m) => m['train/policy_version'])).toEqual([3, 4]);
    for (const m of after) expect(m['async/staleness_max']).toBeLessThanOrEqual(1);
    expect(last.iteration).toBe(4);
    expect(last.learner.updates).toBeGreaterThan(cp.learner.updates);
  });

  it('continuous token loop in sync mode (staleness 0, in-thread source, virtual clock) resumes bit for bit', { timeout: 120_000 }, async () => {
    const cfg = config({ algo: { algo: 'grpo', groupSize: 4, lr: 0.003 }, rollout: { groups: 2, learnerBatch: 8, maxActionTokens: 12 } });
    const { ref, refWeights, after, weights, cp } = await run(cfg, 4, 2);
    expect(cp.groups!.pending).toEqual([]);
    for (let i = 0; i < 2; i++) expect(after[i], `iteration ${2 + i}`).toEqual(ref[2 + i]);
    expectSameWeights(refWeights, weights);
    expect(after[1]['train/policy_version']).toBe(4);
  });

  it('continuous token loop with a rollout worker: the sampling stream is read from and restored into the worker; the resumed run trains on', { timeout: 120_000 }, async () => {
    const cfg = config({ algo: { algo: 'grpo', groupSize: 4, lr: 0.003 }, rollout: { groups: 2, learnerBatch: 8, maxActionTokens: 12, mode: 'async', maxStaleness: 1, workers: 1 } });
    const engine = await loadNodeEngine('ort-web-wasm');
    const first = await createTrainer(cfg, engine, { tokenWorker: nodeTokenWorker });
    for (let i = 0; i < 2; i++) await first.step();
    const cp = roundTrip(await first.checkpoint());
    await first.release();
    expect(cp.rng.sampling).toHaveLength(4);
    const resumed = await createTrainer(cfg, engine, { tokenWorker: nodeTokenWorker, resume: cp });
    await resumed.restore(cp);
    // Nothing is decoding yet: the worker's stream is exactly the saved one, groups and counters too.
    const same = await resumed.checkpoint();
    expect([same.rng.sampling, same.groups, same.iteration, same.policyVersion]).toEqual([cp.rng.sampling, cp.groups, 2, 2]);
    const r = await resumed.step();
    expect([r.iteration, r.metrics['train/policy_version']]).toEqual([2, 3]);
    expect((await resumed.checkpoint()).rng.sampling).not.toEqual(cp.rng.sampling);
    await resumed.release();
  });

  it('a token run exports its policy from a checkpoint as ONNX (the decode graph, as the CLI writes it)', { timeout: 60_000 }, async () => {
    const cfg = config();
    const engine = await loadNodeEngine('ort-web-wasm');
    const t = await make(cfg, engine);
    await t.step();
    const cp = await t.checkpoint();
    await t.release();
    const bytes = policyOnnxFromCheckpoint(cfg, cp);
    // Byte for byte what the CLI writes as policy.onnx from the trainer's weights.
    expect(Buffer.from(bytes).equals(Buffer.from(exportPolicyOnnx(t.model, cp.learner.tensors, { batch: 1, graph: 'decode' })))).toBe(true);
  });
});
