/**
 * One suite, run against every RolloutPool (the serial in-thread pool and the worker
 * pool pass the same tests). The reference for "identical episodes" is an independent
 * SerialRolloutPool over one undivided batch.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Worker } from 'node:worker_threads';
import { initWeights, type Weights } from '../../core/models/types.ts';
import { buildPoolModel, gridMlpSpec, SerialRolloutPool, type CollectRequest, type RolloutPool } from '../../core/rollout/stepPool.ts';
import { stepFeatures, type StepEpisode } from '../../core/rollout/stepEpisode.ts';
import { encodeGridObs } from '../../core/rollout/features.ts';
import type { GridObs } from '../../core/envs/types.ts';
import type { Engine } from '../../core/engine/types.ts';
import { loadNodeEngine } from '../engine/node.ts';
import { spawnNodeThread, spawnNodeWorker } from './node.ts';
import { DeathSignal } from '../workerDeath.ts';
import { nodeEndpoint } from './nodeEndpoint.ts';
import { WorkerRolloutPool, type WorkerHandle } from './workerPool.ts';

const ENV = { id: 'grid/empty-5x5' };
const SPEC = gridMlpSpec(ENV, { hidden: [32, 32] });
const MODEL = buildPoolModel(SPEC);
const W0 = initWeights(MODEL, 7);
const FORWARD = 2; // grid action id of 'forward'

/** Policy that plays `action` with probability ≈ 1 (head bias dominates the ~0 logits). */
function always(action: number): Weights {
  const w: Weights = { ...W0, 'pi.b': new Float32Array(MODEL.numActions) };
  w['pi.b'][action] = 30;
  return w;
}

function request(n: number, samplingSeed = 11): CollectRequest {
  // Two GRPO-style groups of equal seeds plus distinct seeds.
  const seeds = Array.from({ length: n }, (_, i) => (i < 4 ? 100 : i < 8 ? 200 : 300 + i));
  return { env: ENV, seeds, groups: seeds.map((_, i) => (i < 8 ? i >> 2 : -1)), samplingSeed };
}

function comparable(ep: StepEpisode) {
  return { seed: ep.seed, group: ep.group, infos: ep.infos, actions: Array.from(ep.actions), rewards: Array.from(ep.rewards), versions: Array.from(ep.versions), success: ep.success, terminated: ep.terminated, truncated: ep.truncated, T: ep.actions.length };
}

/** [T, D] policy features of an episode's recorded observations. */
function features(ep: StepEpisode): Float32Array {
  const D = SPEC.config.obsDim;
  const out = new Float32Array(ep.actions.length * D);
  for (let t = 0; t < ep.actions.length; t++) stepFeatures(ep, t, out, t * D);
  return out;
}

interface Made {
  pool: RolloutPool;
  /** Live workers (serial: 1 until closed). */
  alive(): number;
  /** Resolves once a batch started after this call has taken a few steps. */
  midBatch(): Promise<void>;
}

/** An engine whose runners report each inference call (to act in the middle of a batch, in-thread). */
function observedEngine(engine: Engine, onRun: () => void): Engine {
  return {
    ...engine,
    createLearner: engine.createLearner.bind(engine),
    async createPolicy(model, batch, weights) {
      const r = await engine.createPolicy(model, batch, weights);
      const run = r.run.bind(r);
      r.run = (inputs) => {
        onRun();
        return run(inputs);
      };
      return r;
    },
  };
}

let reference: SerialRolloutPool;
beforeAll(async () => {
  reference = new SerialRolloutPool({ engine: await loadNodeEngine('ort-web-wasm'), model: SPEC, weights: W0 });
});
afterAll(() => reference.close());

function poolSuite(name: string, make: () => Promise<Made>) {
  describe(`RolloutPool contract: ${name}`, () => {
    let made: Made;
    beforeAll(async () => {
      made = await make();
    }, 60_000);
    afterAll(() => made.pool.close());

    it('plays the same episodes as one undivided serial batch (same seeds, same sampling seed)', async () => {
      const req = request(12);
      const [got, want] = await Promise.all([made.pool.collect(req), reference.collect(req)]);
      expect(got.episodes.map(comparable)).toEqual(want.episodes.map(comparable));
      got.episodes.forEach((ep, i) => {
        expect(Array.from(ep.images)).toEqual(Array.from(want.episodes[i].images));
        expect(Array.from(ep.directions)).toEqual(Array.from(want.episodes[i].directions));
        for (let t = 0; t < ep.logprobs.length; t++) expect(ep.logprobs[t]).toBeCloseTo(want.episodes[i].logprobs[t], 5);
      });
      expect(got.envSteps).toBe(want.envSteps);
      expect(got.envSteps).toBe(got.episodes.reduce((s, e) => s + e.actions.length, 0));
      // Equal seeds start equal: a group's first observation is shared, its actions are not all equal.
      const g0 = got.episodes.slice(0, 4);
      expect(new Set(g0.map((e) => features(e).subarray(0, SPEC.config.obsDim).join(','))).size).toBe(1);
      expect(new Set(g0.map((e) => e.actions.join(','))).size).toBeGreaterThan(1);
      // Another sampling seed gives other episodes.
      const other = await made.pool.collect(request(12, 12));
      expect(other.episodes.map((e) => e.actions.join(','))).not.toEqual(got.episodes.map((e) => e.actions.join(',')));
    });

    it('records what happened: features encode the observation each action saw; Φ has T + 1 entries', async () => {
      // Long episodes first (the slots' reused buffers fill up), then the batch under test.
      await made.pool.collect({ ...request(4), env: { id: 'grid/empty-8x8' } });
      const { episodes } = await made.pool.collect({ ...request(4), keepObservations: true, potential: 'grid/neg-goal-distance' });
      const D = SPEC.config.obsDim;
      for (const ep of episodes) {
        const T = ep.actions.length;
        expect(ep.observations).toHaveLength(T + 1);
        expect(ep.directions).toHaveLength(T);
        const obs = ep.observations as GridObs[];
        expect(ep.images).toHaveLength(T * obs[0].image.length);
        const want = new Float32Array(T * D);
        for (let t = 0; t < T; t++) encodeGridObs(obs[t], want, t * D);
        // One comparison, not T (each toEqual of 984 floats is slow).
        const got = features(ep);
        expect(got.length).toBe(T * D);
        expect(got.every((x, k) => x === want[k])).toBe(true);
        expect(ep.potentials).toHaveLength(T + 1);
        // Φ = −(walking distance to the goal): 0 exactly when the episode ends on it.
        expect(ep.potentials![T] === 0).toBe(ep.success);
        expect([ep.rewards.length, ep.logprobs.length, ep.entropies.length, ep.values.length, ep.versions.length, ep.infos.length]).toEqual(new Array(6).fill(T));
      }
    });

    it('a batch split by slotOffset equals the whole batch', async () => {
      const req = request(10);
      const whole = await made.pool.collect(req);
      const a = await made.pool.collect({ ...req, seeds: req.seeds.slice(0, 3), groups: req.groups.slice(0, 3) });
      const b = await made.pool.collect({ ...req, seeds: req.seeds.slice(3), groups: req.groups.slice(3), slotOffset: 3 });
      expect([...a.episodes, ...b.episodes].map(comparable)).toEqual(whole.episodes.map(comparable));
    });

    it('syncs weights by version: a new version changes behaviour, a repeated version is skipped', async () => {
      const req = request(6);
      await made.pool.setWeights(always(FORWARD), 1);
      expect(made.pool.version).toBe(1);
      const fwd = await made.pool.collect(req);
      for (const ep of fwd.episodes) {
        expect(Array.from(ep.versions)).toEqual(new Array(ep.actions.length).fill(1));
        expect(ep.actions.every((a) => a === FORWARD)).toBe(true);
        // Walking straight into a wall never reaches the goal of empty-5x5 from the start pose.
        expect(ep.truncated).toBe(true);
      }
      // Same version, other weights: already held, so nothing changes.
      await made.pool.setWeights(always(0), 1);
      const still = await made.pool.collect(req);
      expect(still.episodes.every((ep) => ep.actions.every((a) => a === FORWARD))).toBe(true);
      await made.pool.setWeights(W0, 2);
      const back = await made.pool.collect(req);
      expect(back.episodes.some((ep) => ep.actions.some((a) => a !== FORWARD))).toBe(true);
      expect(back.episodes.every((ep) => ep.versions.every((v) => v === 2))).toBe(true);
      await made.pool.setWeights(W0, 0);
    });

    it('records the version per step when weights change mid-batch (partial rollouts)', async () => {
      const req: CollectRequest = { env: { id: 'grid/empty-8x8' }, seeds: [1, 2, 3, 4, 5, 6], groups: [-1, -1, -1, -1, -1, -1], samplingSeed: 3 };
      // grid/empty-8x8 has the same view (and so the same model) as empty-5x5; episodes are long.
      const mid = made.midBatch();
      const running = made.pool.collect(req);
      await mid;
      await made.pool.setWeights(W0, 5);
      const { episodes } = await running;
      for (const ep of episodes) {
        // Versions never go back within an episode and only take the two values pushed.
        for (let t = 1; t < ep.versions.length; t++) expect(ep.versions[t]).toBeGreaterThanOrEqual(ep.versions[t - 1]);
        expect(ep.versions.every((v) => v === 0 || v === 5)).toBe(true);
      }
      expect(episodes.some((ep) => ep.versions[0] === 0 && ep.versions[ep.versions.length - 1] === 5)).toBe(true);
      await made.pool.setWeights(W0, 0);
    });

    it('rejects a bad request with the cause, and keeps working', async () => {
      await expect(made.pool.collect({ ...request(4), env: { id: 'grid/nope' } })).rejects.toThrow(/unknown env "grid\/nope"/);
      await expect(made.pool.collect({ ...request(4), env: { id: 'tools/calculator' } })).rejects.toThrow(/tools\/calculator is a tool env/);
      const ok = await made.pool.collect(request(4));
      expect(ok.episodes).toHaveLength(4);
    });

    it('close() ends it: workers gone, later calls reject', async () => {
      expect(made.alive()).toBe(made.pool.size);
      await made.pool.close();
      expect(made.alive()).toBe(0);
      await expect(made.pool.collect(request(2))).rejects.toThrow(/closed/);
      await expect(made.pool.setWeights(W0, 9)).rejects.toThrow(/closed/);
    });
  });
}

poolSuite('serial (in-thread)', async () => {
  let waiter: { calls: number; resolve: () => void } | null = null;
  const onRun = () => {
    if (waiter && --waiter.calls === 0) waiter.resolve();
  };
  const pool = new SerialRolloutPool({ engine: observedEngine(await loadNodeEngine('ort-web-wasm'), onRun), model: SPEC, weights: W0 });
  let open = true;
  const close = pool.close.bind(pool);
  pool.close = async () => {
    open = false;
    await close();
  };
  return {
    pool,
    alive: () => (open ? 1 : 0),
    midBatch: () => new Promise<void>((resolve) => (waiter = { calls: 10, resolve })),
  };
});

poolSuite('worker_threads × 2', async () => {
  let live = 0;
  const spawn = (): WorkerHandle => {
    const h = spawnNodeWorker();
    live++;
    h.death.on(() => live--);
    return h;
  };
  const pool = await WorkerRolloutPool.create({ size: 2, spawn, model: SPEC, weights: W0 });
  return {
    pool,
    alive: () => live,
    // Workers run beside this thread: wall time is "some steps in" (a step takes ≲ 1 ms).
    midBatch: () => new Promise<void>((r) => setTimeout(r, 30)),
  };
});

describe('worker pool failure', () => {
  const faulty = (fault: 'throw' | 'crash' | 'exit' | 'hang' | 'silent' | 'spin', onCollect: number) => (): WorkerHandle =>
    spawnNodeThread(new URL('./faultWorker.node.mjs', import.meta.url), 'fault worker', { fault, onCollect });

  it('a worker that dies rejects the call with the cause instead of hanging', async () => {
    const spawn = (): WorkerHandle => {
      const worker = new Worker('setTimeout(() => { throw new Error("boom in worker"); }, 50)', { eval: true });
      const death = new DeathSignal();
      worker.once('error', (e: Error) => death.fail(new Error(`crashed: ${e.message}`)));
      worker.once('exit', (c) => death.fail(new Error(`exited ${c}`)));
      return { endpoint: nodeEndpoint(worker), death, name: 'eval worker', terminate: async () => void (await worker.terminate()) };
    };
    await expect(WorkerRolloutPool.create({ size: 1, spawn, model: SPEC, weights: W0 })).rejects.toThrow(/boom in worker/);
  });

  it('calls leave nothing subscribed to a live worker (the leak: every batch was kept alive)', async () => {
    const handles: WorkerHandle[] = [];
    const pool = await WorkerRolloutPool.create({
      size: 2,
      spawn: () => {
        const h = spawnNodeWorker();
        handles.push(h);
        return h;
      },
      model: SPEC,
      weights: W0,
    });
    for (let i = 0; i < 3; i++) {
      await pool.collect(request(12, i));
      await pool.setWeights(W0, i + 1);
    }
    expect(handles.map((h) => h.death.waiting)).toEqual([0, 0]);
    await pool.close();
  });

  // Each fault hits worker 0's 2nd collect; the replacement (a healthy worker) collects its part
  // again, and the batch equals an undisturbed pool's (same seeds, same slot indices). The hang's
  // deadline (5 s) is far above a healthy call here: at 1.5 s a loaded machine (load 4–9) once
  // timed out the healthy worker too, and the pool restarted twice.
  for (const fault of ['crash', 'exit', 'hang'] as const) {
    it(`a worker that ${fault === 'hang' ? 'hangs' : fault === 'crash' ? 'crashes' : 'exits'} mid-batch is replaced once; the batch is complete and identical`, async () => {
      let spawns = 0;
      const names: string[] = [];
      const spawn = (): WorkerHandle => {
        const h = spawns++ === 0 ? faulty(fault, 2)() : spawnNodeWorker();
        names.push(h.name);
        return h;
      };
      const pool = await WorkerRolloutPool.create({ size: 2, spawn, model: SPEC, weights: W0, callDeadlineMs: fault === 'hang' ? 5000 : undefined });
      const ref = await WorkerRolloutPool.create({ size: 2, spawn: spawnNodeWorker, model: SPEC, weights: W0 });
      try {
        await pool.collect(request(12, 1));
        const got = await pool.collect(request(12, 2));
        const want = await ref.collect(request(12, 2));
        expect(pool.restartCount).toBe(1);
        expect(got.episodes.map(comparable)).toEqual(want.episodes.map(comparable));
        expect(spawns).toBe(3);
        expect(names[0]).toMatch(/^fault worker \d+$/);
      } finally {
        await pool.close();
        await ref.close();
      }
    });
  }

  // The watchdog: a worker that goes quiet (a browser worker that closes itself fires no event)
  // or spins is noticed by its unanswered pings within stallMs, replaced, and its part collected
  // again; nobody waits for the 120 s call deadline.
  for (const fault of ['silent', 'spin'] as const) {
    it(`a worker that ${fault === 'silent' ? 'goes quiet without an event' : 'spins in a loop'} mid-batch is noticed within stallMs and replaced; the batch is complete and identical`, async () => {
      let spawns = 0;
      const restarts: string[] = [];
      const spawn = (): WorkerHandle => (spawns++ === 0 ? faulty(fault, 2)() : spawnNodeWorker());
      const pool = await WorkerRolloutPool.create({ size: 2, spawn, model: SPEC, weights: W0, stallMs: 5000, pingEveryMs: 200, onRestart: (m) => restarts.push(m) });
      const ref = await WorkerRolloutPool.create({ size: 2, spawn: spawnNodeWorker, model: SPEC, weights: W0 });
      try {
        await pool.collect(request(12, 1));
        const t0 = performance.now();
        const got = await pool.collect(request(12, 2));
        const took = performance.now() - t0;
        const want = await ref.collect(request(12, 2));
        expect(got.episodes.map(comparable)).toEqual(want.episodes.map(comparable));
        expect(pool.restartCount).toBe(1);
        expect(restarts).toEqual([expect.stringMatching(/^fault worker \d+ stopped answering for \d+(\.\d)? s during collect \(closed, stuck in a loop or out of memory\); rollout worker \d+ took its place and collects its part again$/)]);
        // Noticed at 5 s (+ a ping interval), not at the 120 s deadline; the replacement's start is the rest.
        expect(took).toBeLessThan(30_000);
      } finally {
        await pool.close();
        await ref.close();
      }
    });
  }

  it('a busy, healthy pool is never taken for stalled (pings are answered between lockstep steps)', async () => {
    const restarts: string[] = [];
    // 6 s, far under the default 15 s: the longest answer measured here at load 14 was 2.2 s.
    const pool = await WorkerRolloutPool.create({ size: 2, spawn: spawnNodeWorker, model: SPEC, weights: W0, stallMs: 6000, pingEveryMs: 100, onRestart: (m) => restarts.push(m) });
    try {
      // Long episodes (empty-8x8, a random policy): each collect runs well past the ping interval.
      for (let i = 0; i < 4; i++) await pool.collect({ ...request(12, i), env: { id: 'grid/empty-8x8' } });
      expect(restarts).toEqual([]);
      expect(pool.restartCount).toBe(0);
    } finally {
      await pool.close();
    }
  });

  it('a worker that goes quiet twice stops the run with the message, within the stall limits', async () => {
    const pool = await WorkerRolloutPool.create({ size: 1, spawn: faulty('silent', 1), model: SPEC, weights: W0, stallMs: 2000, pingEveryMs: 200 });
    try {
      const t0 = performance.now();
      const err = await pool.collect(request(4)).then(
        () => null,
        (e: Error) => e,
      );
      expect(err?.message).toMatch(/^fault worker \d+ stopped answering for \d+(\.\d)? s during collect .*\(it had been restarted 1 time; the run stops\)$/);
      expect(performance.now() - t0).toBeLessThan(30_000);
    } finally {
      await pool.close();
    }
  });

  it('a second failure stops the run with the worker\'s own message and its id', async () => {
    let spawns = 0;
    const names: string[] = [];
    const spawn = (): WorkerHandle => {
      // Slot 0's first worker exits at its 1st collect, its replacement at its 1st collect too.
      const h = spawns++ === 1 ? spawnNodeWorker() : faulty('exit', 1)();
      names.push(h.name);
      return h;
    };
    const pool = await WorkerRolloutPool.create({ size: 2, spawn, model: SPEC, weights: W0 });
    try {
      const err = await pool.collect(request(12)).then(
        () => null,
        (e: Error) => e,
      );
      expect(err?.message).toBe(`${names[2]} exited with code 3 (it had been restarted 1 time; the run stops)`);
      expect(names[2]).not.toMatch(/-1/);
    } finally {
      await pool.close();
    }
  });

  it('an error the worker reports (not a death) stops the batch at once, with no restart', async () => {
    const pool = await WorkerRolloutPool.create({ size: 1, spawn: faulty('throw', 1), model: SPEC, weights: W0 });
    try {
      await expect(pool.collect(request(4))).rejects.toThrow(/env step failed \(injected\)/);
      expect(pool.restartCount).toBe(0);
    } finally {
      await pool.close();
    }
  });

  it('a pool with a hung worker still closes (bounded wait, then terminate)', async () => {
    const pool = await WorkerRolloutPool.create({ size: 1, spawn: faulty('hang', 1), model: SPEC, weights: W0, callDeadlineMs: 60_000 });
    const pending = pool.collect(request(4)).catch((e: Error) => e);
    await new Promise((r) => setTimeout(r, 200));
    const t0 = performance.now();
    await pool.close();
    expect(performance.now() - t0).toBeLessThan(10_000);
    expect(String(await pending)).toMatch(/terminated|closed/);
  });
});

describe('in-thread pool progress', () => {
  it('reports each episode as it ends, done of total, counting up to the batch', async () => {
    const seen: [number, number][] = [];
    const pool = new SerialRolloutPool({ engine: await loadNodeEngine('ort-web-wasm'), model: SPEC, weights: W0, onEpisode: (done, total) => seen.push([done, total]) });
    try {
      await pool.collect(request(8));
      expect(seen).toEqual(Array.from({ length: 8 }, (_, i) => [i + 1, 8]));
    } finally {
      await pool.close();
    }
  });
});
