/**
 * The two-tower MLP (separate policies for two agents, models/mlp.ts): the output is tower 0's
 * on rows whose selector feature is 0 and tower 1's where it is 1; gradients match finite
 * differences; and a row of one agent gives the other tower exactly zero gradient.
 */
import { describe, expect, it } from 'vitest';
import * as ortNode from 'onnxruntime-node';
import { Graph, type Tensor } from '../../core/graph/builder.ts';
import { MlpPolicy, towerPrefix } from '../../core/models/mlp.ts';
import { initWeights } from '../../core/models/types.ts';
import { gradcheck } from './gradcheck.ts';
import type { OrtModule } from './session.ts';

const node = ortNode as unknown as OrtModule;
const D = 6;
const SEL = 5; // the selector feature: 1 on the second agent's rows
const B = 4;
const make = () => new MlpPolicy({ obsDim: D, hidden: [5], numActions: 3, valueHead: true, towers: 2, towerFeature: SEL });

/** Observations with the selector set per row (`agents[r]` 0 or 1) and other features fixed. */
function observations(agents: readonly number[]): Float32Array {
  const x = new Float32Array(agents.length * D);
  agents.forEach((a, r) => {
    for (let j = 0; j < D - 1; j++) x[r * D + j] = Math.sin(1 + r * 7 + j * 3);
    x[r * D + SEL] = a;
  });
  return x;
}

/** Runs logits, value and d(Σ logits ⊙ R + Σ value ⊙ R')/dθ for every parameter. */
async function run(model: MlpPolicy, w: Record<string, Float32Array>, agents: readonly number[]) {
  const g = new Graph('towers');
  const P: Record<string, Tensor> = {};
  for (const p of model.params) P[p.name] = g.input(p.name, p.shape);
  const obs = g.input('obs', [agents.length, D]);
  const out = model.forward(g, P, { obs });
  const R = Float32Array.from({ length: agents.length * 3 }, (_, i) => Math.cos(i * 1.3));
  const R2 = Float32Array.from({ length: agents.length }, (_, i) => 0.5 + i);
  const loss = g.add(g.reduceSum(g.mul(out.logits, g.constant(R, [agents.length, 3]))), g.reduceSum(g.mul(out.value!, g.constant(R2, [agents.length]))));
  g.output(out.logits, 'logits');
  g.output(out.value!, 'value');
  const grads = g.grad(loss, model.params.map((p) => P[p.name]));
  grads.forEach((gr, i) => g.output(gr, `grad:${model.params[i].name}`));
  const sess = await node.InferenceSession.create(g.toOnnx());
  const feeds: Record<string, ortNode.Tensor> = { obs: new ortNode.Tensor('float32', observations(agents), [agents.length, D]) };
  for (const p of model.params) feeds[p.name] = new ortNode.Tensor('float32', w[p.name], p.shape);
  const r = await sess.run(feeds);
  await sess.release();
  const grad: Record<string, Float32Array> = {};
  for (const p of model.params) grad[p.name] = r[`grad:${p.name}`].data as Float32Array;
  return { logits: r.logits.data as Float32Array, value: r.value.data as Float32Array, grad };
}

describe('two-tower MLP', () => {
  it('declares two parameter sets; tower 0 keeps the one-tower names', () => {
    const names = make().params.map((p) => p.name);
    expect(names).toEqual(['l0.w', 'l0.b', 'pi.w', 'pi.b', 'v.w', 'v.b', 't1.l0.w', 't1.l0.b', 't1.pi.w', 't1.pi.b', 't1.v.w', 't1.v.b']);
    expect(() => new MlpPolicy({ obsDim: D, numActions: 3, towers: 2 })).toThrow(/towerFeature/);
  });

  it("each row's output is its agent's tower, computed as a one-tower MLP with that tower's weights", async () => {
    const model = make();
    const w = initWeights(model, 3);
    // A larger head init, so the towers' outputs differ visibly.
    for (const k of ['pi.w', 't1.pi.w']) w[k] = w[k].map((v) => v * 100);
    const agents = [0, 1, 1, 0];
    const both = await run(model, w, agents);
    const single = new MlpPolicy({ obsDim: D, hidden: [5], numActions: 3, valueHead: true });
    for (const k of [0, 1]) {
      const wk: Record<string, Float32Array> = {};
      for (const p of single.params) wk[p.name] = w[towerPrefix(k) + p.name];
      const one = await run(single, wk, agents);
      agents.forEach((a, r) => {
        if (a !== k) return;
        for (let j = 0; j < 3; j++) expect(both.logits[r * 3 + j]).toBeCloseTo(one.logits[r * 3 + j], 6);
        expect(both.value[r]).toBeCloseTo(one.value[r], 6);
      });
    }
    expect(Math.abs(both.logits[0] - both.logits[3])).toBeGreaterThan(0); // rows differ: not a constant
  });

  it('the acting tower gets the gradient, the other exactly zero', async () => {
    const model = make();
    const w = initWeights(model, 5);
    for (const [agents, idle] of [
      [[1, 1, 1, 1], 0],
      [[0, 0, 0, 0], 1],
    ] as const) {
      const { grad } = await run(model, w, agents);
      for (const p of model.params) {
        const inIdle = idle === 0 ? !p.name.startsWith('t1.') : p.name.startsWith('t1.');
        const maxAbs = Math.max(...Array.from(grad[p.name], Math.abs));
        if (inIdle) expect(maxAbs, p.name).toBe(0);
        else expect(maxAbs, p.name).toBeGreaterThan(0);
      }
    }
    // A mixed batch: both towers learn, each from its own rows.
    const mixed = await run(model, w, [0, 1, 0, 1]);
    for (const p of model.params) expect(Math.max(...Array.from(mixed.grad[p.name], Math.abs)), p.name).toBeGreaterThan(0);
  });

  it('gradients match central finite differences', async () => {
    const model = make();
    const w = initWeights(model, 7);
    const agents = [0, 1, 1, 0];
    const r = await gradcheck(
      node,
      [{ shape: [B, D], values: observations(agents), diff: false }, ...model.params.map((p) => ({ shape: p.shape, values: w[p.name].map((v) => v + 0.1) }))],
      (g, [obs, ...ps]) => {
        const P: Record<string, Tensor> = {};
        model.params.forEach((p, i) => (P[p.name] = ps[i]));
        const out = model.forward(g, P, { obs });
        return g.concat([out.logits, g.reshape(out.value!, [B, 1])], 1);
      },
      { h: 1e-2, maxEntries: 8 },
    );
    expect(r.maxAbsGrad).toBeGreaterThan(1e-3);
    expect(r.maxRelErr).toBeLessThan(2e-2);
  });
});
