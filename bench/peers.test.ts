/**
 * The peers compute the function the benchmark claims they compute: on tiny versions of both
 * models, three tfjs and jax-js train steps report the same losses as an independent float64
 * reference (forward from the definitions, finite-difference gradients, textbook Adam). Step 1
 * checks the forward pass and loss; steps 2 and 3 check that the gradient and the
 * bias-corrected Adam update really happen each step (without them the loss would not move the
 * ~1e-2 the reference moves; the tolerance is 1e-5).
 */
import { describe, expect, it } from 'vitest';
import { MODELS, initParams, makeBatch, paramCount } from './train-step/models.ts';
import type { ModelConfig, TrainStep } from './train-step/models.ts';
import { erf, referenceLosses } from './train-step/reference.ts';
import { createTfjsTrainStep } from './train-step/tfjs.ts';
import { createJaxTrainStep } from './train-step/jax.ts';
import { createOrtTrainStep, specMismatch } from './train-step/ort.ts';
import { MODEL_PRESETS } from '../src/core/models/presets.ts';

const STEPS = 3;
const TOL = 1e-5;

async function losses(make: () => Promise<TrainStep>): Promise<number[]> {
  const s = await make();
  try {
    const out: number[] = [];
    for (let i = 0; i < STEPS; i++) out.push(await s.step());
    return out;
  } finally {
    s.dispose();
  }
}

describe('train-step models', () => {
  it('have the documented sizes', () => {
    // 160*256+256 + 256*128+128 + 128*7+7 + 128+1
    expect(paramCount(MODELS['mlp-76k'])).toBe(75_144);
    // emb 108*128 + pos 32*128 + 5 * (2*256 + 128*384+384 + 128*128+128 + 128*512+512 + 512*128+128)
    //   + 256 + 128*108+108
    expect(paramCount(MODELS['transformer-1m'])).toBe(1_023_468);
  });

  it('are the engine presets the bench names (same parameter names, shapes, order)', () => {
    expect(specMismatch(MODELS['mlp-76k'], MODEL_PRESETS['mlp-76k'].make())).toBeNull();
    expect(specMismatch(MODELS['transformer-1m'], MODEL_PRESETS['transformer-1m'].make())).toBeNull();
  });

  it('reference erf matches known values', () => {
    // erf(0.5), erf(1), erf(3) from tables (Abramowitz & Stegun 7.1).
    expect(erf(0.5)).toBeCloseTo(0.5204998778130465, 14);
    expect(erf(-1)).toBeCloseTo(-0.8427007929497149, 14);
    expect(erf(3)).toBeCloseTo(0.9999779095030014, 14);
  });
});

const tiny: [string, ModelConfig][] = [
  ['mlp-tiny', MODELS['mlp-tiny']],
  ['transformer-tiny', MODELS['transformer-tiny']],
];

describe.each(tiny)('peers on %s', (_name, cfg) => {
  const params = initParams(cfg, 11);
  const batch = makeBatch(cfg, 12);
  const ref = referenceLosses(cfg, params, batch, STEPS);

  it('reference loss moves by more than the tolerance each step', () => {
    for (let i = 1; i < STEPS; i++) expect(Math.abs(ref[i] - ref[i - 1])).toBeGreaterThan(100 * TOL);
  });

  it.each(['fast', 'stock'] as const)('tfjs-wasm (%s MatMul gradient) matches the float64 reference', async (variant) => {
    const got = await losses(() => createTfjsTrainStep(cfg, params, batch, variant));
    got.forEach((l, i) => expect(Math.abs(l - ref[i])).toBeLessThan(TOL));
  });

  it('jax-js-wasm matches the float64 reference', async () => {
    const got = await losses(() => createJaxTrainStep(cfg, params, batch));
    got.forEach((l, i) => expect(Math.abs(l - ref[i])).toBeLessThan(TOL));
  });

  it.each(['web-wasm', 'node'] as const)('ort-%s (our graph) matches the float64 reference', async (runtime) => {
    const got = await losses(() => createOrtTrainStep(runtime, cfg, params, batch));
    got.forEach((l, i) => expect(Math.abs(l - ref[i])).toBeLessThan(TOL));
  });
});
