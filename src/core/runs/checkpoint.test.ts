import { describe, expect, it } from 'vitest';
import { CHECKPOINT_FORMAT, CHECKPOINT_VERSION, checkpointFromJson, checkpointToJson, type Checkpoint } from './checkpoint.ts';
import { base64ToBytes, base64ToFloat32, bytesToBase64, float32ToBase64 } from '../util/base64.ts';
import { Rng } from '../util/rng.ts';

function sample(): Checkpoint {
  const rng = new Rng(7);
  const w = Float32Array.from({ length: 1001 }, () => rng.normal());
  // Values a float32 tensor can hold that text round trips tend to lose: −0, denormals, extremes.
  w.set([-0, 1e-45, -1e-45, 3.4028234663852886e38, -3.4028234663852886e38, Math.fround(0.1)], 0);
  return {
    format: CHECKPOINT_FORMAT,
    version: CHECKPOINT_VERSION,
    trainer: 'step',
    iteration: 3,
    policyVersion: 3,
    learner: { updates: 3, tensors: { 'l0.w': w, 'adam.m': Float32Array.from(w, (x) => x / 10), 'adam.v': Float32Array.from(w, (x) => Math.abs(x) / 7), 'adam.step': Float32Array.of(3) } },
    hyper: { lr: 0.001, clip_low: 0.2 },
    rng: { minibatch: rng.getState() },
    ema: { value: 0.25, initialized: true },
    schedule: { stage: 1, iterationsInStage: 2, streak: 1 },
    rewardWeights: { outcome: 1, progress: 0.1, format: 0, toolCost: 0, length: 0, potential: 0 },
  };
}

describe('checkpoint serialisation', () => {
  it('base64 matches an independent encoder (Node Buffer) for every length mod 3', () => {
    for (const n of [0, 1, 2, 3, 4, 5, 255, 256, 257, 40_000]) {
      const bytes = Uint8Array.from({ length: n }, (_, i) => (i * 131 + 7) & 255);
      const ref = Buffer.from(bytes).toString('base64');
      expect(bytesToBase64(bytes)).toBe(ref);
      expect(Array.from(base64ToBytes(ref))).toEqual(Array.from(bytes));
    }
    expect(() => base64ToBytes('ab$d')).toThrow(/character "\$" at 2/);
    expect(() => base64ToBytes('abc')).toThrow(/multiple of 4/);
  });

  it('float32 tensors survive base64 bit for bit (−0, denormals, extremes)', () => {
    const a = sample().learner.tensors['l0.w'];
    const b = base64ToFloat32(float32ToBase64(a));
    expect(new Uint32Array(b.buffer)).toEqual(new Uint32Array(a.buffer));
    expect(Object.is(b[0], -0)).toBe(true);
  });

  it('round-trips through JSON text: every tensor bit-identical, every other field equal', () => {
    const cp = sample();
    const text = JSON.stringify(checkpointToJson(cp));
    const r = checkpointFromJson(JSON.parse(text));
    if (!r.ok) throw new Error(r.messages.join('\n'));
    const back = r.checkpoint;
    for (const [k, t] of Object.entries(cp.learner.tensors)) expect(new Uint32Array(back.learner.tensors[k].buffer), k).toEqual(new Uint32Array(t.buffer));
    expect({ ...back, learner: null }).toEqual({ ...cp, learner: null });
    expect(back.learner.updates).toBe(3);
    // The restored RNG continues the saved stream.
    const a = new Rng(1);
    a.setState(back.rng.minibatch);
    const b = new Rng(1);
    b.setState(cp.rng.minibatch);
    expect(a.nextUint32()).toBe(b.nextUint32());
  });

  it('a bad checkpoint is refused with messages that name the field', () => {
    const j = JSON.parse(JSON.stringify(checkpointToJson(sample())));
    const bad = structuredClone(j);
    bad.learner.tensors['adam.m'].base64 = 'AAA$';
    bad.iteration = -1;
    let r = checkpointFromJson(bad);
    expect(!r.ok && r.messages.join('\n')).toMatch(/checkpoint\.iteration: /);
    delete bad.iteration;
    bad.iteration = 2;
    r = checkpointFromJson(bad);
    expect(!r.ok && r.messages.join('\n')).toMatch(/checkpoint\.learner\.tensors\["adam\.m"\]\.base64: not base64/);
    const short = structuredClone(j);
    short.learner.tensors['adam.v'].length = 5;
    r = checkpointFromJson(short, 'x.run.json: checkpoint');
    expect(!r.ok && r.messages.join('\n')).toMatch(/x\.run\.json: checkpoint\.learner\.tensors\["adam\.v"\]\.base64: holds 1001 values, but length says 5/);
    const newer = { ...j, version: CHECKPOINT_VERSION + 1 };
    r = checkpointFromJson(newer);
    expect(!r.ok && r.messages[0]).toMatch(/checkpoint\.version: 2 was written by a newer playground/);
    const rngBad = structuredClone(j);
    rngBad.rng.minibatch = [1, 2, 3];
    r = checkpointFromJson(rngBad);
    expect(!r.ok && r.messages.join('\n')).toMatch(/checkpoint\.rng\.minibatch/);
    const other = { ...j, trainer: 'mlp' };
    r = checkpointFromJson(other);
    expect(!r.ok && r.messages.join('\n')).toMatch(/checkpoint\.trainer: expected one of "step", "token", "async-token"/);
    const groups = { ...j, trainer: 'async-token', groups: { next: 4, pending: [5, 3] } };
    r = checkpointFromJson(groups);
    expect(!r.ok && r.messages.join('\n')).toMatch(/checkpoint\.groups: pending must be ascending group ids below next/);
    const ref = { ...j, trainer: 'token', reference: { 'l0.w': { dtype: 'float32', length: 2, base64: 'AAAAAA==' } } };
    r = checkpointFromJson(ref);
    expect(!r.ok && r.messages.join('\n')).toMatch(/checkpoint\.reference\["l0\.w"\]\.base64: holds 1 values, but length says 2/);
  });

  it("a token checkpoint's reference weights and group bookkeeping round-trip; a grid checkpoint's JSON has neither key (files written before stay readable)", () => {
    const grid = checkpointToJson(sample());
    expect('reference' in grid || 'groups' in grid).toBe(false);
    const w = sample().learner.tensors['l0.w'];
    const cp: Checkpoint = { ...sample(), trainer: 'async-token', schedule: null, reference: { 'l0.w': Float32Array.from(w, (x) => -x) }, groups: { next: 9, pending: [6, 8] } };
    const r = checkpointFromJson(JSON.parse(JSON.stringify(checkpointToJson(cp))));
    if (!r.ok) throw new Error(r.messages.join('\n'));
    expect(r.checkpoint.trainer).toBe('async-token');
    expect(r.checkpoint.groups).toEqual({ next: 9, pending: [6, 8] });
    expect(new Uint32Array(r.checkpoint.reference!['l0.w'].buffer)).toEqual(new Uint32Array(cp.reference!['l0.w'].buffer));
  });
});
