/**
 * The app store with IndexedDB (fake-indexeddb): a run trained through the train slice is saved
 * as it goes and finishes as 'finished'; a reset mid-run leaves it 'stopped'; live edits are
 * noted; the Runs slice renames, deletes with undo, and imports (a bad file changes nothing).
 */
import 'fake-indexeddb/auto';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { IterationView } from '../../runtime/trainWorker/types.ts';

let stepDelay = 0;
let step = 0;

vi.mock('../train/client.ts', async () =>
  (await import('../train/fakeTrainWorker.testkit.ts')).fakeTrainWorkerModule(() => ({
    step: async (): Promise<IterationView> => {
      const i = step++;
      await new Promise((r) => setTimeout(r, stepDelay));
      return {
        iteration: i,
        metrics: { 'episode/success_rate': Math.min(1, i / 4), 'reward/mean': i, 'reward/std': 1 },
        allApplied: true,
        wallS: 0.01,
        episodes: [{ kind: 'grid', seed: i, group: 0, reward: 1, advantage: 0.5, actions: new Int32Array([2, 2]), logprobs: new Float32Array([-0.1, -0.2]), entropies: new Float32Array(2), values: new Float32Array(2), versions: new Int32Array([i, i]), rewards: new Float64Array([0, 1]), terminated: true, truncated: false, success: true }],
      };
    },
    start: () => {
      step = 0;
    },
  })),
);

const { useStore } = await import('../store.ts');
const { flushRunRecord } = await import('../train/slice.ts');
const { browserRunStore } = await import('../../runtime/storage/browser.ts');
const s = () => useStore.getState();
const store = browserRunStore()!;
const until = async (cond: () => boolean | Promise<boolean>, ms = 5000) => {
  const t0 = Date.now();
  while (!(await cond())) {
    if (Date.now() - t0 > ms) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
};

beforeEach(async () => {
  s().resetRun();
  step = 0;
  stepDelay = 0;
  s().choosePreset('grid-empty-8x8-grpo');
  await store.db.runs.clear();
  await store.db.metrics.clear();
  await store.db.trajectories.clear();
});

describe('runs recorded from the train slice', () => {
  it('a run is saved as it trains and ends finished, with its config, metrics and trajectories', async () => {
    s().editField('iterations', 6);
    await s().startRun();
    expect(s().status).toBe('finished');
    const id = s().recordId!;
    await until(async () => (await store.getRun(id))?.status === 'finished');
    const run = await store.loadRun(id);
    expect(run?.meta).toMatchObject({ iterations: 6, bestSuccess: 1, name: 'grid-empty-8x8-grpo · seed 1' });
    expect(run?.config.iterations).toBe(6);
    expect(run?.metrics.map((r) => r.iteration)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(run?.metrics[5].wall_s).toBeCloseTo(0.06, 6);
    expect(run?.trajectories).toHaveLength(6);
    expect(run?.trajectories[0]).toMatchObject({ iteration: 0, env: 'grid/empty-8x8', actions: [2, 2], env_rewards: [0, 1] });
  });

  it('a reset mid-run leaves it stopped at the iterations saved; a live edit is noted', async () => {
    stepDelay = 5;
    s().editField('iterations', 1000);
    void s().startRun();
    await until(() => s().history.length >= 3);
    s().editField('algo.lr', 0.005);
    await until(() => s().history.length >= 5);
    const id = s().recordId!;
    await flushRunRecord();
    s().resetRun();
    await until(async () => (await store.getRun(id))?.status === 'stopped');
    const meta = (await store.getRun(id))!;
    expect(meta.iterations).toBeGreaterThanOrEqual(5);
    expect(meta.liveEdits).toEqual([expect.objectContaining({ path: 'algo.lr', value: 0.005 })]);
  });

  it('the Runs slice: rename, delete with undo, a bad import changes nothing, a good one lists', async () => {
    s().editField('iterations', 2);
    await s().startRun();
    const id = s().recordId!;
    await until(async () => (await store.getRun(id))?.status === 'finished');
    await s().refreshRuns();
    expect(s().runs?.map((r) => r.id)).toEqual([id]);
    await s().updateRunInfo(id, { name: '  renamed  ', tags: ['a', ' a ', 'b', ''] });
    expect(s().runs?.[0]).toMatchObject({ name: 'renamed', tags: ['a', 'b'] });
    await s().updateRunInfo(id, { name: '   ' });
    expect(s().runs?.[0].name).toBe('renamed');
    s().resetRun();
    await s().deleteRun(id);
    expect(s().runs).toEqual([]);
    expect(s().undoable?.name).toBe('renamed');
    await s().undoDelete();
    expect(s().runs?.map((r) => r.id)).toEqual([id]);

    const { runToFile } = await import('../../core/runs/format.ts');
    const full = (await store.loadRun(id))!;
    const text = runToFile(full);
    const bad = JSON.parse(text);
    bad.metrics[0]['reward/mean'] = 'x';
    expect(await s().importRunFiles([{ name: 'bad.run.json', text: JSON.stringify(bad) }])).toBe(false);
    expect(s().importProblems).toEqual(['bad.run.json: metrics[0].reward/mean: expected a number (or null)']);
    expect(s().runs).toHaveLength(1);
    expect(await s().importRunFiles([{ name: 'good.run.json', text }])).toBe(true);
    expect(s().importProblems).toEqual([]);
    expect(s().runs).toHaveLength(2);
    const imported = s().runs!.find((r) => r.id !== id)!;
    expect(imported).toMatchObject({ name: 'renamed', source: 'import', status: 'finished', iterations: 2 });
    expect(await store.getMetrics(imported.id)).toEqual(full.metrics);
  });
});
