import { describe, expect, it } from 'vitest';
import { decide, formatMs, summarize, type Candidate } from './choose.ts';
import { iterationCost, measureEngine, warmEstimate, type EngineTiming } from './measure.ts';
import { probeShapeFor } from './shape.ts';
import { learnerThreads } from './threads.ts';
import { parseRunConfig } from '../presets/schema.ts';
import type { Engine, Learner, PolicyRunner, TokenDecoder } from './types.ts';
import '../envs/index.ts';

const timing = (engine: string, trainMs: number, rolloutMs = NaN, iterationMs = trainMs): EngineTiming => ({
  engine,
  setupMs: 100,
  trainMs,
  rolloutMs,
  trainSamples: 5,
  rolloutSamples: 5,
  iterationMs,
  totalMs: 500,
});

describe('decide', () => {
  const wasm: Candidate = { id: 'wasm', label: 'WASM · 1 thread', timing: timing('ort-web-wasm', 3.1, NaN, 3.1), eligible: true };
  const gpu: Candidate = { id: 'webgpu', label: 'WebGPU', timing: timing('ort-web-webgpu', 41, NaN, 41), eligible: true };

  it('picks the lower estimated iteration time and says by how much', () => {
    const d = decide([wasm, gpu], 'wasm');
    expect(d.chosen).toBe('wasm');
    expect(d.reason).toBe("WASM · 1 thread is 13× faster than WebGPU on this run's model (measured)");
    expect(summarize(d)).toBe('WASM · 1 thread · 3.1 ms/step — WebGPU 41 ms/step');
    const fast = { ...gpu, timing: timing('ort-web-webgpu', 1.2, NaN, 1.2) };
    expect(decide([wasm, fast], 'wasm').chosen).toBe('webgpu');
    expect(decide([wasm, fast], 'wasm').reason).toMatch(/2\.6× faster than WASM/);
  });

  it('never picks an ineligible (software) adapter, however fast it measured', () => {
    const soft = { ...gpu, label: 'WebGPU (software)', eligible: false, timing: timing('ort-web-webgpu', 0.5, NaN, 0.5) };
    const d = decide([wasm, soft], 'wasm');
    expect(d.chosen).toBe('wasm');
    expect(summarize(d)).toBe('WASM · 1 thread · 3.1 ms/step — WebGPU (software) 0.50 ms/step (not used)');
  });

  it('falls back when nothing finished, and names what was not timed', () => {
    const late = { ...gpu, timing: null, note: 'no result within the 1.5 s budget' };
    expect(decide([{ ...wasm, timing: null, note: 'failed: x' }, late], 'wasm')).toMatchObject({ chosen: 'wasm', reason: 'no backend finished its measurement; WASM · 1 thread always works' });
    const d = decide([wasm, late], 'wasm');
    expect(d.chosen).toBe('wasm');
    expect(d.reason).toBe('only WASM · 1 thread was timed here (WebGPU: no result within the 1.5 s budget)');
    expect(summarize(d)).toBe('WASM · 1 thread · 3.1 ms/step — WebGPU: no result within the 1.5 s budget');
  });

  it('formats milliseconds with 2–3 significant figures', () => {
    expect([0.4231, 3.14, 41.2, 588.4, NaN].map(formatMs)).toEqual(['0.42', '3.1', '41', '588', '–']);
  });
});

describe('measurement arithmetic', () => {
  it('warm estimate: the fastest of the later half (tier-up and neighbours only add time)', () => {
    expect(warmEstimate([120, 45, 32, 15, 16, 18])).toBe(15);
    expect(warmEstimate([9])).toBe(9);
    expect(warmEstimate([])).toBeNaN();
  });

  it('iteration cost weighs train steps and in-thread rollout calls', () => {
    expect(iterationCost({ trainStepsPerIteration: 4, rolloutCallsPerIteration: 256 }, 3, 0.5)).toBe(4 * 3 + 256 * 0.5);
    expect(iterationCost({ trainStepsPerIteration: 2, rolloutCallsPerIteration: 0 }, 3, NaN)).toBe(6);
  });
});

describe('thread budget', () => {
  it('one core for the browser, one per rollout worker, at most 4, 1 without isolation', () => {
    expect(learnerThreads({ cores: 2, isolated: true, rolloutWorkers: 0 })).toBe(1);
    expect(learnerThreads({ cores: 8, isolated: true, rolloutWorkers: 0 })).toBe(4);
    expect(learnerThreads({ cores: 4, isolated: true, rolloutWorkers: 1 })).toBe(2);
    expect(learnerThreads({ cores: 8, isolated: false, rolloutWorkers: 0 })).toBe(1);
    expect(learnerThreads({ cores: 2, isolated: true, rolloutWorkers: 0, reserved: 0 })).toBe(2);
    expect(learnerThreads({ cores: 4, isolated: true, rolloutWorkers: 16 })).toBe(1);
  });
});

function config(raw: unknown) {
  const r = parseRunConfig(raw);
  if (!r.ok) throw new Error(r.messages.join('; '));
  return r.config;
}

describe('probe shape', () => {
  it('names the model, batches and who rolls out; equal configs give equal keys', () => {
    const grid = config({ env: { id: 'grid/empty-8x8' }, model: { kind: 'mlp', hidden: [64, 64] }, algo: { algo: 'grpo', groupSize: 8 }, rollout: { groups: 8, learnerBatch: 512 } });
    const s = probeShapeFor(grid);
    expect(s.key).toBe('mlp 984→64→64→7 tanh | learn 512 | roll 64');
    expect(s.label).toBe('MLP 984→64→64→7 (68k params)');
    expect(s.rollout).toEqual({ kind: 'policy', rows: 64, obsDim: 984 });
    expect(s.rolloutCallsPerIteration).toBe(256);
    const workers = probeShapeFor({ ...grid, rollout: { ...grid.rollout, workers: 2 } });
    expect(workers.rolloutCallsPerIteration).toBe(0);
    expect(workers.key).not.toBe(s.key);
    const calc = config({ env: { id: 'tools/calculator' }, model: { kind: 'transformer', dModel: 64, nLayers: 2, nHeads: 8, dFF: 256, context: 128 }, algo: { algo: 'grpo' }, rollout: { learnerBatch: 16 } });
    const t = probeShapeFor(calc);
    expect(t.key).toBe('transformer d64 L2 h8 ff256 ctx128 | learn 16 | roll 64');
    expect(t.rollout).toEqual({ kind: 'decode', rows: 64 });
    expect(t.seqLen).toBe(128);
  });
});

describe('measureEngine', () => {
  /** An engine whose calls take known times on a virtual clock. */
  function fakeEngine(stepMs: number[], rolloutMs: number) {
    let clock = 0;
    let steps = 0;
    const released: string[] = [];
    const learner: Learner = {
      batch: 1,
      hyper: {},
      seqLens: [],
      step: async () => {
        clock += stepMs[Math.min(steps++, stepMs.length - 1)];
        return { applied: true, metrics: {}, logprobs: new Float32Array(0) };
      },
      getWeights: async () => ({}),
      setWeights: () => undefined,
      release: async () => void released.push('learner'),
    } as unknown as Learner;
    const policy: PolicyRunner = {
      batch: 1,
      version: 0,
      setWeights: () => undefined,
      run: async () => {
        clock += rolloutMs;
        return {};
      },
      release: async () => void released.push('policy'),
    };
    const engine: Engine = {
      name: 'fake',
      createLearner: async () => learner,
      createPolicy: async () => policy,
      createDecoder: async () => ({}) as TokenDecoder,
    };
    return { engine, now: () => clock, released, steps: () => steps };
  }

  const grid = config({ env: { id: 'grid/empty-8x8' }, model: { kind: 'mlp', hidden: [8] }, algo: { algo: 'grpo', groupSize: 2 }, rollout: { groups: 2, learnerBatch: 16 } });

  it('skips the first (cold) calls, reads the warm speed, stops at the budget, and releases', async () => {
    const f = fakeEngine([500, 40, 30, 10, 10, 10, 10, 10, 10], 1);
    const t = await measureEngine(f.engine, probeShapeFor(grid), { budgetMs: 600, now: f.now });
    // Untimed: 500 + 1 → clock 501. Timed pairs end at 542, 573, 584, 595, 606: the 5th passes
    // the 600 ms budget. Later half of [40, 30, 10, 10, 10] → 10.
    expect(t.setupMs).toBe(501);
    expect(t.trainSamples).toBe(5);
    expect(t.trainMs).toBe(10);
    expect(t.rolloutMs).toBe(1);
    expect(t.iterationMs).toBe(10 * 1 + 1 * probeShapeFor(grid).rolloutCallsPerIteration);
    expect(f.released.sort()).toEqual(['learner', 'policy']);
  });

  it('takes the minimum samples past the budget, and stops at maxSamples when it is generous', async () => {
    const slow = fakeEngine([700, 50, 40, 30], 1);
    expect((await measureEngine(slow.engine, probeShapeFor(grid), { budgetMs: 600, now: slow.now })).trainSamples).toBe(3);
    const f = fakeEngine([5], 1);
    const t = await measureEngine(f.engine, probeShapeFor(grid), { budgetMs: 1e9, maxSamples: 7, now: f.now });
    expect(t.trainSamples).toBe(7);
    expect(f.steps()).toBe(8);
  });
});
