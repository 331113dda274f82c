/**
 * Distilling a token policy into a smaller transformer (trainer/tokenDistill.ts) on the real
 * engine (ort-web WASM in Node), through the staged trainer as the CLI and the tab run it:
 *
 * - learning: a teacher (d 48, 2 layers: imitation warm start + GRPO) on the 2-digit calculator,
 *   then a student with a quarter of its block weights (d 32, 1 layer) trained on the teacher's
 *   next-token distributions over its own episodes must come near the teacher's success on
 *   held-out seeds, and its KL to the teacher per token must fall by an order of magnitude;
 * - resume: a checkpoint taken inside the distill stage (JSON round trip) continues as the
 *   uninterrupted run does, and holds the teacher as `reference`.
 */
import { describe, expect, it } from 'vitest';
import { parseRunConfig, type RunConfig } from '../../core/presets/schema.ts';
import { createTrainer } from '../../core/trainer/createTrainer.ts';
import { checkpointFromJson, checkpointToJson } from '../../core/runs/checkpoint.ts';
import { policyOnnxFromCheckpoint } from '../../core/runs/policyExport.ts';
import { exportPolicyOnnx } from '../../core/models/export.ts';
import { heldOutSeeds } from '../../core/util/rng.ts';
import type { TokenEpisode } from '../../core/rollout/tokenEpisode.ts';
import { VirtualClock } from '../../core/envs/clock.ts';
import { loadNodeEngine } from './node.ts';

function config(input: Record<string, unknown>): RunConfig {
  const r = parseRunConfig(input);
  if (!r.ok) throw new Error(r.messages.join('\n'));
  return r.config;
}

const TEACHER = { kind: 'transformer', dModel: 48, nLayers: 2, nHeads: 8, dFF: 192, context: 96 };
const STUDENT = { kind: 'transformer', dModel: 32, nLayers: 1, nHeads: 4, dFF: 128, context: 96 };
const calc = (stages: unknown[], warmSteps: number, model = TEACHER) =>
  config({
    env: { id: 'tools/calculator', kwargs: { minDigits: 2, maxDigits: 2 } },
    model,
    warmStart: { steps: warmSteps, batch: 16, lr: 0.003 },
    algo: { algo: 'grpo', groupSize: 8, lr: 0.0003, klCoef: 0.001 },
    shaping: { format: { weight: 0.1 } },
    rollout: { groups: 8, learnerBatch: 16, maxActionTokens: 16 },
    stages,
    seed: 1,
  });
const rate = (eps: readonly { success: boolean }[]) => eps.filter((e) => e.success).length / eps.length;
const timeless = (m: Record<string, number>) => Object.fromEntries(Object.entries(m).filter(([k]) => !k.startsWith('perf/')));

describe('distilling a token policy into a smaller transformer', () => {
  it('the student nears the teacher on held-out calculator seeds and its KL per token falls', { timeout: 420_000 }, async () => {
    const DISTILL = 90;
    const cfg = calc([{ name: 'GRPO', iterations: 2 }, { name: 'distill', iterations: DISTILL, algo: { lr: 0.003 }, distill: { student: STUDENT } }], 300);
    const engine = await loadNodeEngine('ort-web-wasm');
    // The GRPO stage runs on continuous batching, which waits for tool latency on a clock: a
    // virtual one makes the teacher, and so the whole run, the same every time.
    const t = await createTrainer(cfg, engine, { clock: new VirtualClock() });
    const seeds = heldOutSeeds(200);
    for (let i = 0; i < 2; i++) await t.step();
    // Still the teacher: the hand-over happens at the next step.
    const teacherParams = Object.values(await t.getWeights()).reduce((n, w) => n + w.length, 0);
    const teacher = { greedy: rate((await t.evaluate(seeds, 0)) as TokenEpisode[]), sampled: rate((await t.evaluate(seeds, 1)) as TokenEpisode[]) };
    const kl: number[] = [];
    const success: number[] = [];
    for (let i = 0; i < DISTILL; i++) {
      const m = (await t.step()).metrics;
      expect(m['pipeline/stage']).toBe(2);
      kl.push(m['distill/kl'] ?? NaN);
      success.push(m['episode/success_rate'] ?? NaN);
    }
    const studentParams = Object.values(await t.getWeights()).reduce((n, w) => n + w.length, 0);
    const student = { greedy: rate((await t.evaluate(seeds, 0)) as TokenEpisode[]), sampled: rate((await t.evaluate(seeds, 1)) as TokenEpisode[]) };
    const klAfter = kl.slice(-5).reduce((a, b) => a + b, 0) / 5;
    console.log(
      `teacher ${teacherParams} params: greedy ${teacher.greedy.toFixed(3)}, sampled ${teacher.sampled.toFixed(3)}; student ${studentParams} params: ` +
        `first iteration's sampled success ${success[0].toFixed(3)}, KL/token ${kl[0].toFixed(3)}; after ${DISTILL} iterations greedy ${student.greedy.toFixed(3)}, ` +
        `sampled ${student.sampled.toFixed(3)}, KL/token (last 5) ${klAfter.toFixed(3)}`,
    );
    await t.release();
    expect(studentParams).toBeLessThan(teacherParams / 2.5);
    // A trained teacher, a student that starts knowing nothing.
    expect(teacher.greedy).toBeGreaterThan(0.6);
    expect(success[0]).toBeLessThan(0.05);
    expect(kl[0]).toBeGreaterThan(2);
    // Near the teacher: within 0.15 of its success, greedy and sampled.
    expect(student.greedy).toBeGreaterThan(teacher.greedy - 0.15);
    expect(student.sampled).toBeGreaterThan(teacher.sampled - 0.15);
    expect(klAfter).toBeLessThan(kl[0] / 10);
  });

  it('a checkpoint inside the distill stage resumes as the uninterrupted run continues, with the teacher as its reference', { timeout: 300_000 }, async () => {
    const tiny = { kind: 'transformer', dModel: 16, nLayers: 2, nHeads: 2, dFF: 32, context: 96 };
    const cfg = calc([{ name: 'GRPO', iterations: 1 }, { name: 'distill', iterations: 3, distill: { student: { ...tiny, nLayers: 1 } } }], 20, tiny);
    const engine = await loadNodeEngine('ort-web-wasm');
    const straight = await createTrainer(cfg, engine, { clock: new VirtualClock() });
    const ref: Record<string, number>[] = [];
    for (let i = 0; i < 4; i++) ref.push(timeless((await straight.step()).metrics));
    const refWeights = await straight.getWeights();
    await straight.release();
    expect(ref.map((m) => m['pipeline/stage'])).toEqual([1, 2, 2, 2]);
    expect(ref.map((m) => m['train/policy_version'])).toEqual([1, 2, 3, 4]);

    const first = await createTrainer(cfg, engine, { clock: new VirtualClock() });
    for (let i = 0; i < 2; i++) await first.step();
    const text = JSON.stringify(checkpointToJson(await first.checkpoint()));
    const direct = exportPolicyOnnx(first.model, await first.getWeights(), { batch: 1, graph: 'decode' });
    await first.release();
    const parsed = checkpointFromJson(JSON.parse(text));
    if (!parsed.ok) throw new Error(parsed.messages.join('\n'));
    const cp = parsed.checkpoint;
    expect(cp.trainer).toBe('token-distill');
    expect(cp.pipeline).toEqual({ stage: 1, offset: 1, versionOffset: 1 });
    // The teacher (stage 1's weights: 2 layers) rides along; the learner holds the 1-layer student.
    expect(cp.reference?.['h1.ln1.g']).toBeDefined();
    expect(cp.learner.tensors['h1.ln1.g']).toBeUndefined();
    expect(Buffer.from(policyOnnxFromCheckpoint(cfg, cp)).equals(Buffer.from(direct))).toBe(true);

    const resumed = await createTrainer(cfg, engine, { resume: cp, clock: new VirtualClock() });
    await resumed.restore(cp);
    expect(resumed.iteration).toBe(2);
    for (let i = 2; i < 4; i++) {
      const r = await resumed.step();
      expect(r.iteration).toBe(i);
      expect(timeless(r.metrics), `iteration ${i}`).toEqual(ref[i]);
    }
    const weights = await resumed.getWeights();
    for (const [name, w] of Object.entries(refWeights)) expect(new Uint32Array(weights[name].buffer), name).toEqual(new Uint32Array(w.buffer));
    // A checkpoint of another trainer is refused with its name, leaving the trainer fresh.
    const other = await createTrainer(cfg, engine, { resume: cp, clock: new VirtualClock() });
    await expect(other.restore({ ...cp, trainer: 'token' })).rejects.toThrow("written by the 'token' trainer, this run's is 'token-distill'");
    await resumed.release();
    await other.release();
  });
});
