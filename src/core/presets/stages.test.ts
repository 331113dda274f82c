/** Staged run configs: each stage merged over the run, the chaining rules, and their messages. */
import { describe, expect, it } from 'vitest';
import { parseRunConfig, stageConfig, stageStarts, type RunConfig } from './schema.ts';

const base = {
  env: { id: 'grid/door-key-6x6' },
  model: { kind: 'mlp', hidden: [64, 64], activation: 'tanh' },
  algo: { algo: 'gigpo', groupSize: 8, lr: 0.001, entropyCoef: 0.01 },
  rollout: { groups: 8, learnerBatch: 512 },
  shaping: { progress: { weight: 0.2 } },
  seed: 1,
};
const pipeline = [
  { name: 'RL 1', iterations: 30 },
  { name: 'RL 2', iterations: 20, env: { id: 'grid/door-key-6x6', kwargs: { size: 8 } }, algo: { lr: 0.0005 }, shaping: { progress: { weight: 0 } } },
  { name: 'Distill', iterations: 10, env: { id: 'grid/door-key-6x6', kwargs: { size: 8 } }, distill: { student: { kind: 'mlp', hidden: [16] } } },
];

function ok(input: unknown): RunConfig {
  const r = parseRunConfig(input);
  if (!r.ok) throw new Error(r.messages.join('\n'));
  return r.config;
}
function messages(input: unknown): string[] {
  const r = parseRunConfig(input);
  expect(r.ok).toBe(false);
  return r.ok ? [] : r.messages;
}

describe('staged run configs', () => {
  it('a run lasts its stages: iterations is their sum, computed when left out', () => {
    expect(ok({ ...base, stages: pipeline }).iterations).toBe(60);
    expect(ok({ ...base, stages: pipeline, iterations: 60 }).iterations).toBe(60);
    expect(messages({ ...base, stages: pipeline, iterations: 100 })).toEqual(["iterations: a staged run lasts its stages' iterations (30 + 20 + 10 = 60); set 60 or leave it out (got 100)"]);
    expect(ok(base).stages).toEqual([]);
  });

  it("each stage is the run's config with the stage's fields merged over it", () => {
    const c = ok({ ...base, stages: pipeline });
    const [s1, s2, s3] = [0, 1, 2].map((k) => stageConfig(c, k));
    // Stage 1: the run itself (its seed too), no stages of its own.
    expect(s1.env).toEqual({ id: 'grid/door-key-6x6', kwargs: {} });
    expect(s1.seed).toBe(1);
    expect(s1.iterations).toBe(30);
    expect(s1.stages).toEqual([]);
    // Stage 2: its env and the merged fields; everything else the run's.
    expect(s2.env).toEqual({ id: 'grid/door-key-6x6', kwargs: { size: 8 } });
    expect(s2.algo.lr).toBe(0.0005);
    expect(s2.algo.entropyCoef).toBe(0.01);
    expect(s2.algo.algo).toBe('gigpo');
    expect(s2.shaping.progress.weight).toBe(0);
    expect(s1.shaping.progress.weight).toBe(0.2);
    expect(s2.model).toEqual(c.model);
    // Later stages play fresh episodes: their seed differs from the run's and from each other's.
    expect(new Set([s1.seed, s2.seed, s3.seed]).size).toBe(3);
    // Distill: the student model, the KL to the teacher as the per-step reward (k1), no env reward.
    expect(s3.model).toEqual({ kind: 'mlp', hidden: [16], activation: 'tanh', agents: 'shared' });
    expect(s3.algo.klCoef).toBe(1);
    expect(s3.algo.klMode).toBe('reward');
    expect(s3.algo.klEstimator).toBe('k1');
    expect(s3.shaping.outcome.weight).toBe(0);
    // …merged over the run's shaping, not stage 2's: the progress term is the run's 0.2.
    expect(s3.shaping.progress.weight).toBe(0.2);
  });

  it('where each stage begins on the charts (1-based iterations)', () => {
    expect(stageStarts(pipeline)).toEqual([1, 31, 51]);
    expect(stageStarts([])).toEqual([]);
  });

  it('refuses pipelines that cannot chain, naming the stage and the fix', () => {
    const m = (stages: unknown[], extra: Record<string, unknown> = {}) => messages({ ...base, ...extra, stages });
    expect(m([{ name: 'd', iterations: 5, distill: { student: { kind: 'mlp', hidden: [8] } } }])).toEqual(['stages.0.distill: distillation needs a teacher, so it cannot be the first stage']);
    expect(m([pipeline[0], pipeline[2], pipeline[1]])[0]).toMatch(/^stages\.1\.distill: distillation ends a pipeline/);
    expect(m([pipeline[0], { name: 'x', iterations: 5, algo: { algo: 'ppo' } }])).toEqual([`stages.1.algo.algo: a stage keeps the run's algorithm ('gigpo'; the learner's graph and weights are built for it); got "ppo"`]);
    // Another view size changes the observation: the policy could not carry over.
    expect(m([pipeline[0], { name: 'x', iterations: 5, env: { id: 'grid/door-key-6x6', kwargs: { viewSize: 5 } } }])[0]).toMatch(/^stages\.1\.env: its observations \(75 values\) or actions \(7\) differ from the run's env \(147, 7\)/);
    expect(m([pipeline[0], { name: 'x', iterations: 5, env: { id: 'tools/calculator' } }])[0]).toMatch(/^stages\.1\.env: a tool env, but the run trains on grid envs/);
    expect(m([pipeline[0], { name: 'x', iterations: 5, env: { id: 'grid/nope' } }])[0]).toMatch(/^stages\.1\.env: /);
    expect(m(pipeline, { stopAtSuccess: 0.9 })).toContain('stopAtSuccess: a staged run runs every stage; stopping on success would end it in its first stage (use null)');
    // A stage's own fields are validated as a run's are, under its name.
    expect(m([pipeline[0], { name: 'hot', iterations: 5, algo: { lr: -1 } }])[0]).toMatch(/^stages\.1 \(hot\): algo\.lr/);
    expect(m([{ name: '', iterations: 5 }])[0]).toMatch(/^stages\.0\.name: must name the stage/);
    expect(m(Array.from({ length: 9 }, (_, k) => ({ name: `s${k}`, iterations: 1 })))[0]).toMatch(/^stages: at most 8 stages/);
  });

  it('a token policy distils into a smaller transformer; the student must be the run\'s kind, fit its context, and train on the KL alone', () => {
    const tokens = { env: { id: 'tools/kv-lookup' }, model: { kind: 'transformer', dModel: 32, nLayers: 2, nHeads: 4, dFF: 64, context: 96 }, algo: { algo: 'grpo' } };
    const student = { kind: 'transformer', dModel: 16, nLayers: 1, nHeads: 2, dFF: 32, context: 96 };
    const c = ok({ ...tokens, stages: [{ name: 'a', iterations: 2 }, { name: 'd', iterations: 3, algo: { lr: 0.003 }, distill: { student, klCoef: 0.5 } }] });
    const s2 = stageConfig(c, 1);
    expect(s2.model).toEqual(student);
    expect(s2.algo.klCoef).toBe(0.5);
    expect(s2.algo.lr).toBe(0.003);
    const m = (d: unknown) => messages({ ...tokens, stages: [{ name: 'a', iterations: 2 }, { name: 'd', iterations: 2, distill: d }] });
    expect(m({ student: { kind: 'mlp', hidden: [8] } })).toEqual(["stages.1.distill.student.kind: the student must be the run's kind of policy ('transformer'), got 'mlp'"]);
    expect(m({ student: { ...student, context: 128 } })).toEqual(["stages.1.distill.student.context: at most the teacher's context (96), which scores every position of the student's episodes (got 128)"]);
    expect(m({ student, outcomeWeight: 1 })).toEqual(['stages.1.distill.outcomeWeight: a transformer student trains on the KL to the teacher alone (the loss has no reward term); use 0']);
    expect(messages({ ...base, stages: [pipeline[0], { name: 'd', iterations: 2, distill: { student } }] })).toEqual(["stages.1.distill.student.kind: the student must be the run's kind of policy ('mlp'), got 'transformer'"]);
  });
});
