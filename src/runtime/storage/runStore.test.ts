/** The run store on fake-indexeddb, and the recorder's batching, trajectory cap and full-disk behaviour. */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import '../../core/envs/index.ts';
import { parseRunConfig, type RunConfig } from '../../core/presets/schema.ts';
import type { TrajectoryLine } from '../../core/runs/format.ts';
import { isQuotaError, newRunMeta, RunStore, writeCheckpoint } from './runStore.ts';
import { RunRecorder } from './recorder.ts';
import { trajectoryReserveBytes, type RecorderHooks } from './recorderOptions.ts';
import { CHECKPOINT_FORMAT, CHECKPOINT_VERSION, type Checkpoint } from '../../core/runs/checkpoint.ts';

const parsed = parseRunConfig(JSON.parse(readFileSync('presets/grid-empty-8x8-grpo.json', 'utf8')));
if (!parsed.ok) throw new Error('preset');
const config: RunConfig = parsed.config;

let dbCount = 0;
const freshStore = () => new RunStore(`test-${++dbCount}`, { indexedDB: new IDBFactory(), IDBKeyRange });

const line = (iteration: number, index: number): TrajectoryLine => ({ iteration, env: 'grid/empty-8x8', seed: index, group: 0, reward: 1, advantage: 0, env_rewards: [1], terminated: true, truncated: false, success: true, actions: [2], logprobs: [-0.1], versions: [iteration] });
const eps = (iteration: number) => (n: number) => Array.from({ length: n }, (_, i) => line(iteration, i));

/** Hooks that flush only when the test says so, and collect problems. */
function hooks(): RecorderHooks & { problems: string[]; run(): void; queued: number } {
  let queue: (() => void)[] = [];
  const h = {
    problems: [] as string[],
    onProblem: (m: string) => h.problems.push(m),
    schedule: (fn: () => void) => queue.push(fn),
    lock: () => () => undefined,
    run: () => {
      const q = queue;
      queue = [];
      q.forEach((f) => f());
    },
    get queued() {
      return queue.length;
    },
  };
  return h;
}

const quota = () => Object.assign(new Error('QuotaExceededError: the disk is full'), { name: 'QuotaExceededError' });

describe('RunStore', () => {
  it('create, append, list, load, rename, delete with undo, purge', async () => {
    const store = freshStore();
    const meta = newRunMeta(config, { name: 'a' }, 1000);
    await store.createRun(meta);
    await store.appendMetrics(meta.id, [{ iteration: 0, wall_s: 1, 'episode/success_rate': 0.5 } as never], { iterations: 1, bestSuccess: 0.5 });
    await store.appendTrajectories(meta.id, [{ index: 0, line: line(0, 0) }], { trajectoryCount: 1 });
    const b = newRunMeta(config, { name: 'b' }, 2000);
    await store.createRun(b);
    expect((await store.listRuns()).map((r) => r.name)).toEqual(['b', 'a']);
    await store.updateRun(meta.id, { name: 'renamed', tags: ['x'], note: 'n' });
    const loaded = await store.loadRun(meta.id);
    expect(loaded?.info).toMatchObject({ name: 'renamed', tags: ['x'], note: 'n' });
    expect(loaded?.metrics).toHaveLength(1);
    expect(loaded?.trajectories).toEqual([line(0, 0)]);
    await store.deleteRun(meta.id, 5000);
    expect((await store.listRuns()).map((r) => r.name)).toEqual(['b']);
    await store.restoreRun(meta.id);
    expect((await store.listRuns()).map((r) => r.name)).toEqual(['b', 'renamed']);
    await store.deleteRun(meta.id, 5000);
    expect(await store.purgeDeleted(6000)).toBe(1);
    expect(await store.getMetrics(meta.id)).toEqual([]);
    expect(await store.getTrajectories(meta.id)).toEqual([]);
    expect(await store.getRun(b.id)).toBeDefined();
  });

  it('a run left running by a tab that is gone becomes interrupted at its saved iteration', async () => {
    const store = freshStore();
    const live = newRunMeta(config, { name: 'live' });
    const dead = newRunMeta(config, { name: 'dead' });
    await store.createRun(live);
    await store.createRun(dead);
    await store.updateRun(dead.id, { iterations: 7 });
    const marked = await store.markInterrupted((id) => id === live.id);
    expect(marked.map((r) => r.name)).toEqual(['dead']);
    expect((await store.getRun(dead.id))?.status).toBe('interrupted');
    expect((await store.getRun(live.id))?.status).toBe('running');
  });

  it('an import that fails part-way writes nothing', async () => {
    const store = freshStore();
    const rows = [{ iteration: 0, wall_s: 0 }, { iteration: 0, wall_s: 0 }] as never[]; // duplicate key: bulkAdd fails
    await expect(store.importRun({ info: { name: 'x', tags: [], note: '', createdAt: 0, updatedAt: 0, status: 'finished', error: null, liveEdits: [], source: 'import' }, config, metrics: rows, trajectories: [] })).rejects.toThrow();
    expect(await store.listRuns()).toEqual([]);
  });

  it('recognises quota errors however dexie wraps them', () => {
    expect(isQuotaError(quota())).toBe(true);
    expect(isQuotaError({ name: 'AbortError', inner: quota() })).toBe(true);
    expect(isQuotaError({ name: 'BulkError', failures: [quota()] })).toBe(true);
    expect(isQuotaError(new Error('x'))).toBe(false);
  });
});

describe('RunRecorder', () => {
  it('batches: nothing is written until N iterations wait, then one idle flush writes them', async () => {
    const store = freshStore();
    const h = hooks();
    const rec = RunRecorder.start(store, config, 'r', h, { flushEveryIterations: 3, flushEveryMs: 60_000 });
    rec.add(0, { 'episode/success_rate': 0.2 }, 0.5, eps(0));
    rec.add(1, { 'episode/success_rate': 0.6 }, 0.5, eps(1));
    expect(h.queued).toBe(0);
    rec.add(2, { 'episode/success_rate': 0.4 }, 0.5, eps(2));
    expect(h.queued).toBe(1);
    expect(await store.getMetrics(rec.id)).toEqual([]);
    h.run();
    await rec.flush();
    const rows = await store.getMetrics(rec.id);
    expect(rows.map((r) => [r.iteration, r.wall_s])).toEqual([[0, 0.5], [1, 1], [2, 1.5]]);
    const meta = await store.getRun(rec.id);
    expect(meta).toMatchObject({ iterations: 3, bestSuccess: 0.6, status: 'running', trajectoryCount: 12 });
    await rec.finish('finished');
    expect((await store.getRun(rec.id))?.status).toBe('finished');
  });

  it('keeps trajectories under the per-run cap, spread over the run', async () => {
    const store = freshStore();
    const rec = RunRecorder.start(store, config, 'r', hooks(), { trajectoriesPerIteration: 2, maxTrajectories: 10, flushEveryIterations: 1000 });
    for (let i = 0; i < 40; i++) {
      rec.add(i, {}, 0.1, eps(i));
      if (i % 4 === 3) await rec.flush();
    }
    await rec.finish('finished');
    const t = await store.getTrajectories(rec.id);
    expect(t.length).toBeLessThanOrEqual(10);
    expect(t.length).toBeGreaterThanOrEqual(4);
    const its = [...new Set(t.map((x) => x.iteration))];
    expect(its[0]).toBe(0);
    expect(its[its.length - 1]).toBeGreaterThanOrEqual(20); // not only the first iterations
    expect((await store.getRun(rec.id))?.trajectoryCount).toBe(t.length);
  });

  it('a full disk stops trajectories first, keeps saving metrics, and loses nothing saved', async () => {
    const store = freshStore();
    const h = hooks();
    const rec = RunRecorder.start(store, config, 'r', h, { flushEveryIterations: 1000 });
    rec.add(0, { 'episode/success_rate': 0.1 }, 0.1, eps(0));
    await rec.flush();
    const real = store.appendTrajectories.bind(store);
    store.appendTrajectories = async () => {
      throw quota();
    };
    rec.add(1, { 'episode/success_rate': 0.2 }, 0.1, eps(1));
    await rec.flush();
    expect(h.problems[0]).toMatch(/Storage is full: this run's trajectories are no longer saved.*metrics still are/);
    rec.add(2, { 'episode/success_rate': 0.3 }, 0.1, eps(2));
    await rec.flush();
    store.appendTrajectories = real;
    expect((await store.getMetrics(rec.id)).map((r) => r.iteration)).toEqual([0, 1, 2]);
    expect((await store.getTrajectories(rec.id)).map((t) => t.iteration)).toEqual([0, 0, 0, 0]);
    expect((await store.getRun(rec.id))?.storageProblem).toMatch(/Storage is full/);
  });

  it('nearly full (free space under the reserve): trajectories stop before any write fails, metrics go on', async () => {
    const store = freshStore();
    const h = hooks();
    let usage = 0;
    const q = 1_000_000;
    const rec = RunRecorder.start(store, config, 'r', { ...h, estimate: async () => ({ usage, quota: q }) }, { flushEveryIterations: 1000 });
    rec.add(0, { 'episode/success_rate': 0.1 }, 0.1, eps(0));
    await rec.flush();
    expect(h.problems).toEqual([]);
    // 1 byte under the reserve (a quarter of the quota here).
    usage = q - trajectoryReserveBytes(q) + 1;
    rec.add(1, { 'episode/success_rate': 0.2 }, 0.1, eps(1));
    await rec.flush();
    rec.add(2, { 'episode/success_rate': 0.3 }, 0.1, eps(2));
    await rec.flush();
    expect(h.problems).toEqual([expect.stringMatching(/^Storage is nearly full: this run's trajectories are no longer saved \(from iteration 2\); its metrics still are/)]);
    expect((await store.getMetrics(rec.id)).map((r) => r.iteration)).toEqual([0, 1, 2]);
    expect((await store.getTrajectories(rec.id)).map((t) => t.iteration)).toEqual([0, 0, 0, 0]);
    expect((await store.getRun(rec.id))?.storageProblem).toMatch(/nearly full/);
  });

  it('the reserve is a quarter of the quota, at most 8 MB, and at least two checkpoints', () => {
    expect(trajectoryReserveBytes(400_000)).toBe(100_000);
    expect(trajectoryReserveBytes(10 * 2 ** 30)).toBe(8 * 2 ** 20);
    expect(trajectoryReserveBytes(10 * 2 ** 30, 800_000)).toBe(8 * 2 ** 20);
    expect(trajectoryReserveBytes(1_000_000, 800_000)).toBe(1_600_000);
  });

  it('when metrics hit the quota: trajectories stop and the metrics are tried again at once; a lasting full disk keeps them in memory, retries, and writes the gap once there is room', async () => {
    const store = freshStore();
    const h = hooks();
    const recovered: string[] = [];
    const rec = RunRecorder.start(store, config, 'r', { ...h, onRecovered: (m) => recovered.push(m) }, { flushEveryIterations: 1000, retryMs: 5, retryMaxMs: 20 });
    rec.add(0, {}, 0.1, eps(0));
    await rec.flush();
    const real = store.appendMetrics.bind(store);
    let failures = 1;
    store.appendMetrics = async (...a) => {
      if (failures-- > 0) throw quota();
      return real(...a);
    };
    rec.add(1, {}, 0.1, eps(1));
    await rec.flush();
    expect(h.problems).toEqual([expect.stringMatching(/trajectories are no longer saved/)]);
    expect((await store.getMetrics(rec.id)).map((r) => r.iteration)).toEqual([0, 1]);
    // Full for a while: nothing is dropped, the person hears it once.
    failures = Infinity;
    for (let i = 2; i < 6; i++) {
      rec.add(i, {}, 0.1, eps(i));
      await rec.flush();
    }
    expect(h.problems[1]).toBe("Storage is full: its metrics from iteration 2 on wait in memory (up to 2000 iterations) and are saved as soon as that works again. Delete old runs in Runs to make room.");
    expect(h.problems).toHaveLength(2);
    expect(rec.unsavedRows).toBe(4);
    expect((await store.getRun(rec.id))?.iterations).toBe(2);
    // Room again: the retry timer writes the gap without anyone flushing.
    failures = 0;
    await new Promise((r) => setTimeout(r, 100));
    await rec.flush();
    expect(recovered).toEqual(['Saving works again: iterations 2–5 were saved; the saved run has every iteration.']);
    expect((await store.getMetrics(rec.id)).map((r) => r.iteration)).toEqual([0, 1, 2, 3, 4, 5]);
    await rec.finish('finished');
    expect(await store.getRun(rec.id)).toMatchObject({ iterations: 6, status: 'finished', missingIterations: [] });
  });

  it('past the memory bound the oldest unsaved rows are dropped, and the run names exactly which iterations are missing', async () => {
    const store = freshStore();
    const h = hooks();
    const rec = RunRecorder.start(store, config, 'r', h, { flushEveryIterations: 1000, memoryRows: 5, retryMs: 5, retryMaxMs: 20, trajectoriesPerIteration: 0 });
    for (let i = 0; i < 3; i++) rec.add(i, { 'episode/success_rate': 0.1 }, 0.1, eps(i));
    await rec.flush();
    const real = store.appendMetrics.bind(store);
    let full = true;
    store.appendMetrics = async (...a) => {
      if (full) throw quota();
      return real(...a);
    };
    // Iterations 3..11 while full: 5 rows fit in memory (3 of them saved), so 3..6 are pushed out.
    for (let i = 3; i < 12; i++) {
      rec.add(i, { 'episode/success_rate': 0.1 }, 0.1, eps(i));
      await rec.flush();
    }
    expect(rec.missingIterations).toEqual([[3, 6]]);
    expect(h.problems.at(-1)).toMatch(/^Saving still fails: past 5 unsaved iterations the oldest are dropped from memory, so iteration 3 is missing from the saved run/);
    full = false;
    await rec.flush();
    await rec.finish('finished');
    const run = (await store.loadRun(rec.id))!;
    expect(run.metrics.map((m) => m.iteration)).toEqual([0, 1, 2, 7, 8, 9, 10, 11]);
    expect(run.meta).toMatchObject({ iterations: 8, status: 'finished', missingIterations: [[3, 6]] });
  });

  it('a run that finishes while the disk is full names its unsaved rows as missing, and drops them from the list once a retry writes them', async () => {
    const store = freshStore();
    const rec = RunRecorder.start(store, config, 'r', hooks(), { flushEveryIterations: 1000, retryMs: 5, retryMaxMs: 10, trajectoriesPerIteration: 0 });
    rec.add(0, {}, 0.1, eps(0));
    await rec.flush();
    const real = store.appendMetrics.bind(store);
    let full = true;
    store.appendMetrics = async (...a) => {
      if (full) throw quota();
      return real(...a);
    };
    rec.add(1, {}, 0.1, eps(1));
    rec.add(2, {}, 0.1, eps(2));
    await rec.finish('finished');
    // The small status write went through; the rows did not (yet).
    expect(await store.getRun(rec.id)).toMatchObject({ status: 'finished', iterations: 1, missingIterations: [[1, 2]] });
    full = false;
    await new Promise((r) => setTimeout(r, 100));
    await rec.flush();
    expect(await store.getRun(rec.id)).toMatchObject({ status: 'finished', iterations: 3, missingIterations: [] });
  });

  it('a checkpoint is never newer than the saved metrics: it is held back while rows wait, and saved once they are written', async () => {
    const store = freshStore();
    const h = hooks();
    const rec = RunRecorder.start(store, config, 'r', h, { flushEveryIterations: 1000, retryMs: 5, retryMaxMs: 10, trajectoriesPerIteration: 0 });
    const cp = (iteration: number) => ({ iteration }) as unknown as Checkpoint;
    const written: number[] = [];
    const writer = (it: number) => async () => (written.push(it), { iteration: it, floats: 1 });
    rec.add(0, {}, 0.1, eps(0));
    await rec.saveCheckpoint(writer(1));
    expect(written).toEqual([1]);
    const real = store.appendMetrics.bind(store);
    let full = true;
    store.appendMetrics = async (...a) => {
      if (full) throw quota();
      return real(...a);
    };
    rec.add(1, {}, 0.1, eps(1));
    await rec.saveCheckpoint(writer(2));
    rec.add(2, {}, 0.1, eps(2));
    await rec.saveCheckpoint(writer(3));
    expect(written).toEqual([1]);
    expect(h.problems.filter((p) => /checkpoint/.test(p))).toEqual(['The checkpoint at iteration 2 was not saved: the metrics before it are not saved yet (Resume would continue from iteration 1).']);
    full = false;
    rec.add(3, {}, 0.1, eps(3));
    await rec.saveCheckpoint(writer(4));
    expect(written).toEqual([1, 4]);
    expect((await store.getMetrics(rec.id)).map((r) => r.iteration)).toEqual([0, 1, 2, 3]);
    void cp;
  });

  it('a database deleted mid-run is noticed at the next write: the run is written again from memory, and the person is told', async () => {
    const factory = new IDBFactory();
    const name = `test-${++dbCount}`;
    const store = new RunStore(name, { indexedDB: factory, IDBKeyRange });
    const h = hooks();
    const rec = RunRecorder.start(store, config, 'r', h, { flushEveryIterations: 1000, memoryRows: 4, checkpointEvery: 2 });
    for (let i = 0; i < 3; i++) rec.add(i, { 'episode/success_rate': 0.25 * i }, 1, eps(i));
    await rec.flush();
    await rec.saveCheckpoint(async () => ({ iteration: 3, floats: 1 }));
    rec.liveEdit([{ iteration: 2, path: 'algo.lr', value: 0.01 }]);
    await rec.flush();
    // Another connection deletes the database (DevTools "Clear site data", or a script).
    const warn = console.warn;
    console.warn = () => undefined;
    await new Promise<void>((resolve, reject) => {
      const req = factory.deleteDatabase(name);
      req.onsuccess = () => resolve();
      req.onerror = () => reject(req.error);
    });
    console.warn = warn;
    for (let i = 3; i < 6; i++) rec.add(i, { 'episode/success_rate': 0.25 * i }, 1, eps(i));
    await rec.flush();
    // Memory held iterations 2..5 (memoryRows 4): 0..1 are missing, and the person hears which.
    expect(h.problems.at(-1)).toBe("This run's saved copy was deleted while it trained (the site's data was cleared?). It is saved again from memory (iterations 2–5; missing: iterations 0–1); its earlier trajectories and checkpoint are gone.");
    const run = (await store.loadRun(rec.id))!;
    expect(run.metrics.map((m) => m.iteration)).toEqual([2, 3, 4, 5]);
    expect(run.meta).toMatchObject({ name: 'r', status: 'running', iterations: 4, missingIterations: [[0, 1]], checkpointAt: null, liveEdits: [{ iteration: 2, path: 'algo.lr', value: 0.01 }] });
    expect(run.meta.bestSuccess).toBe(1.25);
    expect(run.checkpoint).toBeNull();
    // The next iteration is due a checkpoint again (the old one went with the database).
    expect(rec.checkpointDue(6)).toBe(true);
    rec.add(6, {}, 1, eps(6));
    await rec.finish('finished');
    expect(await store.getRun(rec.id)).toMatchObject({ status: 'finished', iterations: 5 });
    // Trajectories written before the deletion are gone; those waiting in memory then (3..5) and later are saved.
    expect([...new Set((await store.getTrajectories(rec.id)).map((t) => t.iteration))]).toEqual([3, 4, 5, 6]);
  });

  it('a connection closed under the recorder is opened again; nothing is lost', async () => {
    const store = freshStore();
    const h = hooks();
    const rec = RunRecorder.start(store, config, 'r', h, { flushEveryIterations: 1000 });
    rec.add(0, {}, 1, eps(0));
    await rec.flush();
    store.db.close();
    rec.add(1, {}, 1, eps(1));
    await rec.flush();
    expect((await store.getMetrics(rec.id)).map((r) => r.iteration)).toEqual([0, 1]);
    expect((await store.getTrajectories(rec.id)).map((t) => t.iteration)).toEqual([0, 0, 0, 0, 1, 1, 1, 1]);
    expect(h.problems).toEqual([]);
  });

  it('a first write refused by a full disk: the run is created later, from memory, when there is room', async () => {
    const store = freshStore();
    const h = hooks();
    const realCreate = store.createRun.bind(store);
    store.createRun = async () => {
      throw quota();
    };
    const rec = RunRecorder.start(store, config, 'r', h, { flushEveryIterations: 1000, retryMs: 5, retryMaxMs: 10 });
    store.createRun = realCreate;
    const realRecreate = store.recreateRun.bind(store);
    let full = true;
    store.recreateRun = async (...a) => {
      if (full) throw quota();
      return realRecreate(...a);
    };
    rec.add(0, {}, 1, eps(0));
    await rec.flush();
    expect(await store.getRun(rec.id)).toBeUndefined();
    expect(h.problems).toEqual([expect.stringMatching(/^Storage is full: its metrics from iteration 0 on wait in memory/)]);
    full = false;
    rec.add(1, {}, 1, eps(1));
    await rec.flush();
    expect(await store.getRun(rec.id)).toMatchObject({ iterations: 2, status: 'running' });
    expect((await store.getMetrics(rec.id)).map((r) => r.iteration)).toEqual([0, 1]);
    expect(h.problems).toHaveLength(2);
    expect(h.problems[1]).toBe('Saving works again: iterations 0–1 were saved; the saved run has every iteration.');
  });
});

describe('checkpoints in the run store', () => {
  const cp = (iteration: number): Checkpoint => ({
    format: CHECKPOINT_FORMAT,
    version: CHECKPOINT_VERSION,
    trainer: 'step',
    iteration,
    policyVersion: iteration,
    learner: { updates: iteration, tensors: { 'l0.w': Float32Array.of(iteration, -0, 0.5), 'adam.step': Float32Array.of(iteration) } },
    hyper: { lr: 0.001 },
    rng: { minibatch: [1, 2, 3, 4] },
    ema: { value: 0, initialized: false },
    schedule: null,
    rewardWeights: { outcome: 1, progress: 0, format: 0, toolCost: 0, length: 0, potential: 0 },
  });

  it('keeps only the latest checkpoint per run, with typed arrays intact; a resume drops the rows past it and records into the same run', async () => {
    const store = freshStore();
    const h = hooks();
    const rec = RunRecorder.start(store, config, 'r', h, { flushEveryIterations: 100, checkpointEvery: 2 });
    for (let i = 0; i < 5; i++) {
      rec.add(i, { 'episode/success_rate': i / 10 }, 1, eps(i));
      if (rec.checkpointDue(i)) await rec.saveCheckpoint(cp(i + 1));
    }
    // The first iteration is checkpointed too (a record without one could not be resumed).
    expect([0, 1, 2, 3, 4].filter((i) => rec.checkpointDue(i))).toEqual([1, 3]);
    expect(RunRecorder.start(freshStore(), config, 'r2', hooks(), { checkpointEvery: 2 }).checkpointDue(0)).toBe(true);
    await rec.flush();
    expect(await store.db.checkpoints.count()).toBe(1);
    const saved = await store.getCheckpoint(rec.id);
    expect(saved?.iteration).toBe(4);
    expect(saved?.learner.tensors['l0.w']).toBeInstanceOf(Float32Array);
    expect(Object.is(saved!.learner.tensors['l0.w'][1], -0)).toBe(true);
    expect((await store.getRun(rec.id))?.checkpointAt).toBe(4);
    // The tab is gone: interrupted at 5 saved iterations, resumable from 4.
    await store.markInterrupted(() => false);
    const kept = await store.truncateRun(rec.id, 4);
    expect(kept.metrics.map((m) => m.iteration)).toEqual([0, 1, 2, 3]);
    expect((await store.getTrajectories(rec.id)).every((t) => t.iteration < 4)).toBe(true);
    const meta = (await store.getRun(rec.id))!;
    expect(meta.iterations).toBe(4);
    const again = RunRecorder.resume(store, meta, kept.metrics, kept.trajectoryCount, h, { flushEveryIterations: 100 });
    expect(again.id).toBe(rec.id);
    expect(again.wallS).toBe(4);
    for (let i = 4; i < 7; i++) again.add(i, { 'episode/success_rate': 0.9 }, 1, eps(i));
    await again.finish('finished');
    const run = (await store.loadRun(rec.id))!;
    expect(run.metrics.map((m) => [m.iteration, m.wall_s])).toEqual([0, 1, 2, 3, 4, 5, 6].map((i) => [i, i + 1]));
    expect(run.meta).toMatchObject({ status: 'finished', iterations: 7, bestSuccess: 0.9 });
    expect(run.checkpoint?.iteration).toBe(4);
    // The run file carries the checkpoint; importing it stores it for the new copy.
    const copy = await store.importRun(run);
    expect(copy.checkpointAt).toBe(4);
    expect((await store.getCheckpoint(copy.id))?.learner.tensors['adam.step'][0]).toBe(4);
    // Deleting a run deletes its checkpoint.
    await store.deleteRun(copy.id, 0);
    await store.purgeDeleted(0);
    expect(await store.getCheckpoint(copy.id)).toBeNull();
    expect(await store.getCheckpoint(rec.id)).not.toBeNull();
  });

  it("a writer (the training worker's) is called in its turn after the metrics; a full disk, a failure or a crash is reported and the older checkpoint stays", async () => {
    const store = freshStore();
    const h = hooks();
    const rec = RunRecorder.start(store, config, 'r', h, { flushEveryIterations: 100 });
    const order: string[] = [];
    const realAppend = store.appendMetrics.bind(store);
    store.appendMetrics = async (...a) => {
      order.push('metrics');
      return realAppend(...a);
    };
    rec.add(0, {}, 1, eps(0));
    // The worker writes into the same database: another RunStore on it stands in for its connection.
    await rec.saveCheckpoint(async () => {
      order.push('checkpoint');
      return writeCheckpoint(store, rec.id, cp(1));
    });
    expect(order).toEqual(['metrics', 'checkpoint']);
    expect((await store.getCheckpoint(rec.id))?.iteration).toBe(1);
    // A full disk in the worker: reported by iteration, the checkpoint at 1 kept.
    const full = { ...store, putCheckpoint: async () => Promise.reject(quota()) } as unknown as RunStore;
    await rec.saveCheckpoint(() => writeCheckpoint(full, rec.id, cp(2)));
    expect(h.problems.at(-1)).toMatch(/Storage is full: the checkpoint at iteration 2 was not saved/);
    const broken = { putCheckpoint: async () => Promise.reject(new Error('disk I/O')) } as unknown as RunStore;
    await rec.saveCheckpoint(() => writeCheckpoint(broken, rec.id, cp(3)));
    expect(h.problems.at(-1)).toBe('Saving the checkpoint at iteration 3 failed: disk I/O');
    await rec.saveCheckpoint(async () => Promise.reject(new Error('the worker stopped')));
    expect(h.problems.at(-1)).toBe('The checkpoint was not saved: the worker stopped');
    // null: a trainer without checkpoints; nothing is written or reported.
    const before = h.problems.length;
    await rec.saveCheckpoint(async () => null);
    expect(h.problems).toHaveLength(before);
    expect((await store.getCheckpoint(rec.id))?.iteration).toBe(1);
    expect((await store.getRun(rec.id))?.checkpointAt).toBe(1);
  });
});
