/**
 * Staged pipelines on the real engine (ort-web WASM in Node, serial rollouts): a run of RL on one
 * grid, RL on another and distillation into a smaller MLP hands its weights from stage to stage,
 * learns in each, and resumes from a checkpoint taken inside a stage.
 */
import { describe, expect, it } from 'vitest';
import { parseRunConfig, type RunConfig } from '../../core/presets/schema.ts';
import { createTrainer } from '../../core/trainer/createTrainer.ts';
import { checkpointFromJson, checkpointToJson } from '../../core/runs/checkpoint.ts';
import { loadNodeEngine } from './node.ts';
import { exportPolicyOnnx } from '../../core/models/export.ts';
import { policyOnnxFromCheckpoint } from '../../core/runs/policyExport.ts';

function config(stages: unknown[], extra: Record<string, unknown> = {}): RunConfig {
  const r = parseRunConfig({
    env: { id: 'grid/empty-5x5' },
    model: { kind: 'mlp', hidden: [64, 64], activation: 'tanh' },
    algo: { algo: 'grpo', groupSize: 8, lr: 0.003, entropyCoef: 0.01 },
    rollout: { groups: 8, learnerBatch: 512 },
    seed: 1,
    stages,
    ...extra,
  });
  if (!r.ok) throw new Error(r.messages.join('\n'));
  return r.config;
}

const timeless = (m: Record<string, number>) => Object.fromEntries(Object.entries(m).filter(([k]) => !k.startsWith('perf/')));

describe('staged pipelines', () => {
  it('RL 5×5 → RL 8×8 → distill into [8]: 2 + 2 + 2 iterations; a checkpoint in stage 2 resumes bit for bit through the hand-over, one in the distill stage to float rounding', { timeout: 180_000 }, async () => {
    const cfg = config([
      { name: 'small room', iterations: 2 },
      { name: 'big room', iterations: 2, env: { id: 'grid/empty-8x8' }, algo: { lr: 0.001 } },
      { name: 'distill', iterations: 2, env: { id: 'grid/empty-8x8' }, distill: { student: { kind: 'mlp', hidden: [8] } } },
    ]);
    expect(cfg.iterations).toBe(6);
    const engine = await loadNodeEngine('ort-web-wasm');
    const straight = await createTrainer(cfg, engine);
    const ref: Record<string, number>[] = [];
    const params: number[] = [];
    for (let i = 0; i < 6; i++) {
      const r = await straight.step();
      expect(r.iteration).toBe(i);
      ref.push(timeless(r.metrics));
      params.push(Object.values(await straight.getWeights()).reduce((n, w) => n + w.length, 0));
    }
    const refWeights = await straight.getWeights();
    await straight.release();
    expect(ref.map((m) => m['pipeline/stage'])).toEqual([1, 1, 2, 2, 3, 3]);
    // Stage 2 plays the 8×8 room (its time limit is 4·8² = 256 steps), with the stage's lr.
    expect(ref[2]['actor/lr']).toBeCloseTo(0.001, 9);
    expect(ref[0]['actor/lr']).toBeCloseTo(0.003, 9);
    // The distill stage trains the student: fewer weights than the teacher's [64, 64] MLP.
    expect(params[5]).toBeLessThan(params[3] / 4);
    expect(ref[4]['distill/teacher_prob']).toBeGreaterThan(0);
    expect(ref[3]['distill/teacher_prob']).toBeUndefined();
    // Policy versions keep counting across stages.
    expect(ref.map((m) => m['train/policy_version'])).toEqual([1, 2, 3, 4, 5, 6]);

    for (const k of [3, 5]) {
      const first = await createTrainer(cfg, engine);
      for (let i = 0; i < k; i++) await first.step();
      const text = JSON.stringify(checkpointToJson(await first.checkpoint()));
      const direct = exportPolicyOnnx(first.model, await first.getWeights(), { batch: 1, graph: 'full' });
      await first.release();
      const parsed = checkpointFromJson(JSON.parse(text));
      if (!parsed.ok) throw new Error(parsed.messages.join('\n'));
      expect(parsed.checkpoint.pipeline?.stage).toBe(k === 3 ? 1 : 2);
      // A distill stage's checkpoint carries its teacher; an RL stage without a KL penalty needs none.
      expect(parsed.checkpoint.reference !== undefined).toBe(k === 5);
      // The run's policy file is the stage's policy (the student's in the distill stage): the
      // file made from the checkpoint is the one the trainer's own model and weights make.
      expect(Buffer.from(policyOnnxFromCheckpoint(cfg, parsed.checkpoint)).equals(Buffer.from(direct))).toBe(true);
      const resumed = await createTrainer(cfg, engine, { resume: parsed.checkpoint });
      await resumed.restore(parsed.checkpoint);
      expect(resumed.iteration).toBe(k);
      for (let i = k; i < 6; i++) {
        const r = await resumed.step();
        expect(r.iteration).toBe(i);
        const got = timeless(r.metrics);
        if (k === 3) expect(got, `resumed at ${k}, iteration ${i}`).toEqual(ref[i]);
        else {
          // Resumed inside the distill stage, the run agrees to ~1e-7 relative but not to the last
          // bit (the per-step KL rewards differ in float32 rounding; the teacher's and student's
          // weights in the checkpoint are bit-identical to the uninterrupted run's). Not yet
          // explained; resuming before the distill stage and handing over into it is exact.
          expect(Object.keys(got).sort()).toEqual(Object.keys(ref[i]).sort());
          for (const [key, v] of Object.entries(got)) expect(Math.abs(v - ref[i][key]), `${key}, resumed at ${k}`).toBeLessThanOrEqual(1e-6 * Math.max(1, Math.abs(ref[i][key])));
        }
      }
      const weights = await resumed.getWeights();
      for (const [name, w] of Object.entries(refWeights)) {
        if (k === 3) expect(new Uint32Array(weights[name].buffer), `${name} resumed at ${k}`).toEqual(new Uint32Array(w.buffer));
        else expect(Math.max(...w.map((x, j) => Math.abs(x - weights[name][j]))), `${name} resumed at ${k}`).toBeLessThan(1e-5);
      }
      await resumed.release();
    }
  });

  it('token policies: a tool-env RL stage continues the weights the stage before it ended with (and its KL reference is them)', { timeout: 180_000 }, async () => {
    const cfg = config(
      [
        { name: 'RL', iterations: 1 },
        // A learning rate of ~0 keeps the weights where the stage began: the previous stage's.
        { name: 'frozen', iterations: 1, algo: { lr: 1e-12 } },
      ],
      {
        env: { id: 'tools/kv-lookup' },
        model: { kind: 'transformer', dModel: 16, nLayers: 1, nHeads: 2, dFF: 32, context: 128 },
        algo: { algo: 'grpo', groupSize: 4, lr: 0.003, klCoef: 0.01 },
        rollout: { groups: 2, learnerBatch: 8 },
      },
    );
    const engine = await loadNodeEngine('ort-web-wasm');
    const trainer = await createTrainer(cfg, engine);
    const r1 = await trainer.step();
    const w1 = await trainer.getWeights();
    const r2 = await trainer.step();
    const w2 = await trainer.getWeights();
    await trainer.release();
    expect([r1.metrics['pipeline/stage'], r2.metrics['pipeline/stage']]).toEqual([1, 2]);
    const drift = Math.max(...Object.entries(w1).map(([name, w]) => Math.max(...w.map((x, j) => Math.abs(x - w2[name][j])))));
    expect(drift).toBeLessThan(1e-6);
    // …and stage 1 did move them (else the check above says nothing); the stage-2 policy is its own KL reference.
    expect(r1.metrics['actor/grad_norm']).toBeGreaterThan(0);
    expect(r2.metrics['actor/kl_ref']).toBeLessThan(1e-6);
  });

  it('distillation alone teaches a small student: [64, 64] GRPO on empty 8×8, then an [8] student rewarded only by the KL to it comes to act like it and succeed', { timeout: 180_000 }, async () => {
    const cfg = config(
      [
        { name: 'teacher', iterations: 15 },
        { name: 'distill', iterations: 15, algo: { lr: 0.003 }, distill: { student: { kind: 'mlp', hidden: [8] }, outcomeWeight: 0 } },
      ],
      { env: { id: 'grid/empty-8x8' }, algo: { algo: 'grpo', groupSize: 8, lr: 0.001, entropyCoef: 0.01 } },
    );
    const engine = await loadNodeEngine('ort-web-wasm');
    const trainer = await createTrainer(cfg, engine);
    const ms: Record<string, number>[] = [];
    for (let i = 0; i < cfg.iterations; i++) ms.push((await trainer.step()).metrics);
    await trainer.release();
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const last3 = (xs: Record<string, number>[], key: string) => mean(xs.slice(-3).map((m) => m[key]));
    const teacher = ms.slice(0, 15);
    const student = ms.slice(15);
    // Measured (seed 1): the teacher ends at 100% success; the student goes 23% → 95% success,
    // p(teacher) 0.14 → 0.31 and KL to the teacher 0.60 → 0.15 nats per step.
    expect(last3(teacher, 'episode/success_rate'), 'the teacher learnt the task').toBeGreaterThanOrEqual(0.9);
    // A fresh student acts near uniformly over the 7 actions: most episodes time out.
    expect(student[0]['episode/success_rate']).toBeLessThan(0.5);
    expect(student[0]['distill/teacher_prob']).toBeLessThan(0.2);
    // The env's reward has weight 0: the KL to the teacher is the only signal.
    expect(student.every((m) => m['reward/mean'] === 0)).toBe(true);
    expect(last3(student, 'distill/teacher_prob')).toBeGreaterThan(student[0]['distill/teacher_prob'] + 0.1);
    expect(last3(student, 'actor/kl_ref')).toBeLessThan(student[0]['actor/kl_ref'] / 2);
    expect(last3(student, 'episode/success_rate')).toBeGreaterThanOrEqual(0.85);
  });
});
