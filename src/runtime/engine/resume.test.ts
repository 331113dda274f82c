/**
 * Resume is exact: a synchronous grid run (in-thread rollouts) checkpointed after k iterations,
 * serialised to JSON text, restored into a fresh trainer and continued gives the same metrics,
 * bit for bit, as the run that never stopped. The uninterrupted run is the reference.
 */
import { describe, expect, it } from 'vitest';
import { parseRunConfig, type RunConfig } from '../../core/presets/schema.ts';
import { createTrainer } from '../../core/trainer/createTrainer.ts';
import { checkpointFromJson, checkpointToJson } from '../../core/runs/checkpoint.ts';
import { loadNodeEngine } from './node.ts';

/** The grid-empty-8x8-grpo preset (presets/grid-empty-8x8-grpo.json), with a reward schedule so its stage is carried too. */
function config(extra: Record<string, unknown> = {}): RunConfig {
  const r = parseRunConfig({
    env: { id: 'grid/empty-8x8' },
    model: { kind: 'mlp', hidden: [64, 64], activation: 'tanh' },
    algo: { algo: 'grpo', groupSize: 8, lr: 0.001, entropyCoef: 0.01 },
    rollout: { groups: 8, learnerBatch: 512 },
    iterations: 6,
    seed: 1,
    ...extra,
  });
  if (!r.ok) throw new Error(r.messages.join('\n'));
  return r.config;
}

/** Metrics that measure time (perf/*) differ between any two runs; everything else must not. */
const timeless = (m: Record<string, number>) => Object.fromEntries(Object.entries(m).filter(([k]) => !k.startsWith('perf/')));

async function run(cfg: RunConfig, n: number, k: number) {
  const engine = await loadNodeEngine('ort-web-wasm');
  const straight = await createTrainer(cfg, engine);
  const ref: Record<string, number>[] = [];
  for (let i = 0; i < n; i++) ref.push(timeless((await straight.step()).metrics));
  const refWeights = await straight.getWeights();
  await straight.release();

  const first = await createTrainer(cfg, engine);
  for (let i = 0; i < k; i++) await first.step();
  const text = JSON.stringify(checkpointToJson(await first.checkpoint()));
  await first.release();
  const parsed = checkpointFromJson(JSON.parse(text));
  if (!parsed.ok) throw new Error(parsed.messages.join('\n'));
  const resumed = await createTrainer(cfg, engine);
  await resumed.restore(parsed.checkpoint);
  expect(resumed.iteration).toBe(k);
  const after: { iteration: number; metrics: Record<string, number> }[] = [];
  for (let i = k; i < n; i++) {
    const r = await resumed.step();
    after.push({ iteration: r.iteration, metrics: timeless(r.metrics) });
  }
  const weights = await resumed.getWeights();
  await resumed.release();
  return { ref, refWeights, after, weights };
}

describe('resume from a checkpoint (ort-web WASM in Node, serial rollouts)', () => {
  it('grid-empty-8x8 GRPO: 3 + checkpoint → fresh trainer → 3 more equals 6 uninterrupted, metrics and weights bit for bit', { timeout: 120_000 }, async () => {
    const { ref, refWeights, after, weights } = await run(config(), 6, 3);
    expect(after.map((a) => a.iteration)).toEqual([3, 4, 5]);
    for (let i = 0; i < 3; i++) expect(after[i].metrics, `iteration ${3 + i}`).toEqual(ref[3 + i]);
    for (const [name, w] of Object.entries(refWeights)) expect(new Uint32Array(weights[name].buffer), name).toEqual(new Uint32Array(w.buffer));
    // The test would be vacuous if nothing changed after the checkpoint.
    expect(ref[5]['actor/grad_norm']).toBeGreaterThan(0);
    expect(after[2].metrics['train/policy_version']).toBe(6);
  });

  it('carries the reward schedule stage and a REINFORCE EMA baseline', { timeout: 120_000 }, async () => {
    const cfg = config({
      algo: { algo: 'reinforce', lr: 0.001 },
      rollout: { episodes: 16, learnerBatch: 512 },
      shaping: { progress: { weight: 0.1 } },
      // Stage 1 after 3 iterations: checkpointed after 2, the resumed run must know it has one to go.
      schedule: { stages: [{ name: 'dense', weights: { progress: 0.2 }, advance: { afterIterations: 3 } }, { name: 'sparse', weights: { progress: 0 } }] },
      iterations: 4,
    });
    const { ref, after } = await run(cfg, 4, 2);
    expect(after.map((a) => a.metrics['schedule/stage'])).toEqual([0, 1]);
    for (let i = 0; i < 2; i++) expect(after[i].metrics, `iteration ${2 + i}`).toEqual(ref[2 + i]);
  });

  it("a grid checkpoint and a token trainer's refuse each other, naming the trainer (token resume: tokenResume.test.ts)", { timeout: 60_000 }, async () => {
    const engine = await loadNodeEngine('ort-web-wasm');
    const tiny = { kind: 'transformer', dModel: 16, nLayers: 1, nHeads: 2, dFF: 32, context: 128 };
    const grid = await createTrainer(config(), engine);
    const gridCp = await grid.checkpoint();
    for (const algo of ['reinforce', 'grpo']) {
      const t = await createTrainer(config({ env: { id: 'tools/calculator' }, model: tiny, algo: { algo, groupSize: 4 }, rollout: { groups: 2, episodes: 8, learnerBatch: 8 } }), engine);
      expect(t.canCheckpoint, algo).toBe(true);
      await expect(t.restore(gridCp), algo).rejects.toThrow(/the checkpoint was written by the 'step' trainer/);
      const tokenCp = await t.checkpoint();
      await t.release();
      await expect(grid.restore(tokenCp), algo).rejects.toThrow(/Trainer.restore: the checkpoint was written by the '(async-)?token' trainer/);
    }
    await grid.release();
  });

  it('a checkpoint of another model is refused and leaves the trainer fresh', { timeout: 60_000 }, async () => {
    const engine = await loadNodeEngine('ort-web-wasm');
    const a = await createTrainer(config(), engine);
    await a.step();
    const cp = await a.checkpoint();
    await a.release();
    const b = await createTrainer(config({ model: { kind: 'mlp', hidden: [32], activation: 'tanh' } }), engine);
    await expect(b.restore(cp)).rejects.toThrow(/setState: .*(expected shape|missing state tensor|unknown state tensor)/);
    expect(b.iteration).toBe(0);
    await b.release();
  });
});
