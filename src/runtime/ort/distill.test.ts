/**
 * The distillation loss of the train-step graph (update/distillLoss.ts) against an independent
 * reference: a smaller transformer student and a larger teacher each run through their own
 * policy graph, the reverse KL Σ_v π_s(v)(log π_s(v) − log π_t(v)) is summed by hand in float64
 * from the two models' log-probs, and the train graph's loss, its `distill/kl` metric and its
 * gradient (every parameter, vs central finite differences of the hand-computed loss) must match.
 */
import { describe, expect, it } from 'vitest';
import * as ortNode from 'onnxruntime-node';
import { buildTrainStep } from '../../core/update/trainStep.ts';
import { buildPolicyGraph } from '../../core/models/policyGraph.ts';
import { TransformerPolicy } from '../../core/models/transformer.ts';
import { initWeights, type Weights } from '../../core/models/types.ts';
import { TEACHER_LOGPROBS } from '../../core/update/distillLoss.ts';
import { Rng } from '../../core/util/rng.ts';
import { PolicySession, type OrtModule } from './session.ts';
import { rawTrainRunner } from './test/util.ts';

const node = ortNode as unknown as OrtModule;
const V = 11;
const B = 3;
const T = 6;
const student = new TransformerPolicy({ vocabSize: V, dModel: 8, nLayers: 1, nHeads: 2, dFF: 16, context: T });
const teacher = new TransformerPolicy({ vocabSize: V, dModel: 16, nLayers: 2, nHeads: 4, dFF: 32, context: T });

/** Weights far from init (std ≥ 0.3, noisy gains), so both distributions are far from uniform and from each other. */
function spread(model: TransformerPolicy, seed: number): Weights {
  const w = initWeights(model, seed);
  const rng = new Rng(seed + 1);
  for (const p of model.params) for (let i = 0; i < w[p.name].length; i++) w[p.name][i] = p.init.kind === 'normal' ? 0.3 * rng.normal() : w[p.name][i] + 0.3 * rng.normal();
  return w;
}

async function logprobsOf(model: TransformerPolicy, w: Weights, tokens: Int32Array): Promise<Float32Array> {
  const s = await PolicySession.create(node, buildPolicyGraph(model, B), w);
  const r = await s.run({ tokens });
  return r.logprobs;
}

/** Σ w_t · KL_t and the masked mean of KL_t, in float64 from the two models' log-probs [B·T·V]. */
function handKl(ls: Float32Array, lt: Float32Array, weights: Float32Array, mask: Float32Array): { loss: number; meanKl: number } {
  let loss = 0, sum = 0, n = 0;
  for (let i = 0; i < B * T; i++) {
    let kl = 0;
    for (let v = 0; v < V; v++) kl += Math.exp(ls[i * V + v]) * (ls[i * V + v] - lt[i * V + v]);
    loss += weights[i] * kl;
    if (mask[i]) {
      sum += kl;
      n++;
    }
  }
  return { loss, meanKl: sum / n };
}

describe('distillation loss (reverse KL to a teacher over the vocabulary)', () => {
  it('loss, distill/kl and every parameter gradient match a hand-computed KL from the two models and finite differences', { timeout: 120_000 }, async () => {
    const rng = new Rng(4);
    const tokens = Int32Array.from({ length: B * T }, () => rng.int(0, V));
    const actions = Int32Array.from({ length: B * T }, () => rng.int(0, V));
    const mask = Float32Array.from({ length: B * T }, (_, i) => (i % T === 0 || rng.random() < 0.25 ? 0 : 1));
    const count = mask.reduce((a, b) => a + b, 0);
    const weights = mask.map((m) => m / count);
    const klCoef = 0.7;
    const spec = buildTrainStep(student, { batch: B, loss: { kind: 'distill', klCoef }, exposeGradients: true });
    expect(spec.batchInputs.find((b) => b.name === TEACHER_LOGPROBS)?.shape).toEqual([B, T, V]);
    const ws = spread(student, 1);
    const lt = await logprobsOf(teacher, spread(teacher, 2), tokens);
    const run = await rawTrainRunner(node, spec);
    const batch = { tokens, actions, mask, weights, [TEACHER_LOGPROBS]: lt };
    const res = await run({ weights: ws }, batch);
    const ref = handKl(await logprobsOf(student, ws, tokens), lt, weights, mask);
    // A real gap between the models (not two near-uniform distributions).
    expect(ref.meanKl).toBeGreaterThan(0.05);
    expect(res.loss[0]).toBeCloseTo(klCoef * ref.loss, 5);
    expect(res.distill_kl[0]).toBeCloseTo(ref.meanKl, 5);

    const h = 3e-3;
    let worst = 0, biggest = 0;
    for (const p of student.params) {
      const ana = res[`grad.${p.name}`];
      for (let k = 0; k < 3; k++) {
        const j = rng.int(0, ana.length);
        const at = async (d: number) => {
          const w = { ...ws, [p.name]: ws[p.name].slice() };
          w[p.name][j] += d;
          return klCoef * handKl(await logprobsOf(student, w, tokens), lt, weights, mask).loss;
        };
        const fd = ((await at(h)) - (await at(-h))) / (2 * h);
        worst = Math.max(worst, Math.abs(fd - ana[j]) / (Math.abs(fd) + Math.abs(ana[j]) + 1e-2));
        biggest = Math.max(biggest, Math.abs(ana[j]));
      }
    }
    expect(biggest).toBeGreaterThan(1e-2);
    expect(worst).toBeLessThan(2e-2);
  });

  it('the KL is 0, with a zero gradient, when the teacher is the student', async () => {
    const rng = new Rng(8);
    const tokens = Int32Array.from({ length: B * T }, () => rng.int(0, V));
    const mask = new Float32Array(B * T).fill(1);
    const spec = buildTrainStep(student, { batch: B, loss: { kind: 'distill' }, exposeGradients: true });
    const ws = spread(student, 3);
    const self = await logprobsOf(student, ws, tokens);
    const res = await (await rawTrainRunner(node, spec))({ weights: ws }, { tokens, actions: tokens, mask, weights: mask.map(() => 1 / (B * T)), [TEACHER_LOGPROBS]: self });
    expect(Math.abs(res.distill_kl[0])).toBeLessThan(1e-5);
    for (const p of student.params) for (const x of res[`grad.${p.name}`]) expect(Math.abs(x)).toBeLessThan(1e-4);
  });
});
