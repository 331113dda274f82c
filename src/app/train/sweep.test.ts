/**
 * The Train view's sweep: the form's checks and grid (named as `npm run sweep` names runs), and
 * the runner against fake training workers (core's runTraining over a scripted step, as the
 * worker runs it) recording into IndexedDB (fake-indexeddb): `slots` at a time, the rest queued,
 * a dead worker fails its run only, and Stop keeps what was recorded.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { runTraining, TrainerEvents } from '../../core/trainer/events.ts';
import { RunControl, type RunCommand } from '../../core/trainer/runControl.ts';
import emptyPreset from '../../../presets/grid-empty-8x8-grpo.json';
import { RunStore } from '../../runtime/storage/runStore.ts';
import type { RunEvent, RunOptions } from '../../runtime/trainWorker/types.ts';
import { draftFromPreset, loadPresets } from './config.ts';
import { MAX_SWEEP_RUNS, planSweep, sweepSlots } from './sweep.ts';
import { SweepRunner, type SweepRunJob, type SweepWorker } from './sweepRunner.ts';

const preset = loadPresets([emptyPreset]).presets[0];
const draft = () => draftFromPreset(preset, 'wasm');
const until = async (cond: () => boolean, ms = 5000) => {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > ms) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
};

describe('the sweep form', () => {
  it('seeds × the values of up to two fields, named as npm run sweep names them, each config with its seed', () => {
    const p = planSweep(draft(), { fields: [{ path: 'algo.lr', values: '1e-3, 3e-3' }, { path: '', values: '' }], seeds: '1-2' }, 3);
    if (!p.ok) throw new Error(p.message);
    expect(p.jobs.map((j) => j.name)).toEqual(['lr=0.001 · seed 1', 'lr=0.001 · seed 2', 'lr=0.003 · seed 1', 'lr=0.003 · seed 2']);
    expect(p.jobs.map((j) => [j.config.algo.lr, j.config.seed])).toEqual([[0.001, 1], [0.001, 2], [0.003, 1], [0.003, 2]]);
    expect([p.configs, p.slots]).toEqual([2, 3]);
    const seedsOnly = planSweep(draft(), { fields: [], seeds: '7-9' });
    expect(seedsOnly.ok && seedsOnly.jobs.map((j) => j.name)).toEqual(['grid-empty-8x8-grpo · seed 7', 'grid-empty-8x8-grpo · seed 8', 'grid-empty-8x8-grpo · seed 9']);
  });

  it('a swept algorithm brings its own defaults, as switching it in the form does, and the other swept field lands on it', () => {
    const p = planSweep(draft(), { fields: [{ path: 'algo.lr', values: '1e-3' }, { path: 'algo.algo', values: 'grpo, rloo, ppo' }], seeds: '1' }, 3);
    if (!p.ok) throw new Error(p.message);
    expect(p.jobs.map((j) => j.name)).toEqual(['lr=0.001 · algo=grpo · seed 1', 'lr=0.001 · algo=rloo · seed 1', 'lr=0.001 · algo=ppo · seed 1']);
    expect(p.jobs.map((j) => [j.config.algo.algo, j.config.algo.normalizeStd, j.config.algo.lr])).toEqual([
      ['grpo', true, 0.001],
      ['rloo', false, 0.001],
      ['ppo', false, 0.001],
    ]);
  });

  it('bad input gets a message naming the field and value', () => {
    const msg = (fields: { path: string; values: string }[], seeds = '1-2') => {
      const p = planSweep(draft(), { fields, seeds });
      return p.ok ? 'ok' : p.message;
    };
    expect(msg([{ path: 'algo.lr', values: '1e-3, abc' }])).toBe('Learning rate (algo.lr): "abc" is not a number');
    expect(msg([{ path: 'algo.lr', values: '-1' }])).toMatch(/"?-1"? is below its least value, 0/);
    expect(msg([{ path: 'algo.groupSize', values: '4.5' }])).toMatch(/is not a whole number/);
    expect(msg([{ path: 'model.hidden', values: '64' }])).toMatch(/model\.hidden cannot be swept for this config/);
    expect(msg([{ path: 'algo.nope', values: '1' }])).toMatch(/algo\.nope cannot be swept \(no such field\)/);
    expect(msg([{ path: 'algo.lr', values: '' }])).toMatch(/give its values/);
    expect(msg([{ path: 'algo.lr', values: '1,1' }])).toMatch(/listed twice/);
    expect(msg([{ path: 'algo.lr', values: '1' }], '4-1')).toMatch(/runs backwards/);
    expect(msg([{ path: 'algo.lr', values: '1,2,3,4,5,6,7' }], '1-7')).toBe(`1 config(s) × 7 seed(s) = 49 runs, more than ${MAX_SWEEP_RUNS}: fewer values or seeds (or npm run sweep, which has no cap)`.replace('1 config', '7 config'));
    expect(msg([{ path: 'algo.lr', values: '1' }, { path: 'algo.lr', values: '2' }])).toMatch(/swept twice/);
  });

  it("runs at once: the machine's cores less one for the page, at least one", () => {
    expect([sweepSlots(8), sweepSlots(2), sweepSlots(1), sweepSlots(undefined)]).toEqual([7, 1, 1, 1]);
  });
});

/**
 * A training worker of the sweep: the real loop over a step that takes `stepMs`; `dies(name)`
 * kills that job's worker at its 2nd iteration ('step'), or while the page waits on its first
 * checkpoint ('checkpoint': a call to a dead worker that never answers, as comlink's do).
 */
function fakeWorkers(stepMs: number, dies: (name: string) => boolean = () => false, where: 'step' | 'checkpoint' = 'step') {
  const live = { now: 0, max: 0, started: [] as string[] };
  const newWorker = (name: string): SweepWorker => {
    let control: RunControl | null = null;
    let kill: (e: Error) => void = () => undefined;
    const died = new Promise<never>((_, reject) => (kill = reject));
    died.catch(() => undefined);
    let gone = false;
    const die = () => {
      gone = true;
      live.now--;
      kill(new Error('the training worker stopped answering for 30 s and made no progress'));
      return new Promise<never>(() => undefined);
    };
    const api = {
      start: async () => {
        live.started.push(name);
        live.max = Math.max(live.max, ++live.now);
        return { engine: 'fake', setupS: 0, params: 1, canCheckpoint: false, iteration: 0 };
      },
      run: async (o: RunOptions, onEvent: (e: RunEvent) => void | Promise<void>) => {
        const c = new RunControl(o.iterations, {});
        control = c;
        const events = new TrainerEvents();
        let answered: Promise<void> | void = undefined;
        let it = 0;
        const trainer = {
          async step() {
            await new Promise((r) => setTimeout(r, stepMs));
            const i = it++;
            if (i === 1 && where === 'step' && dies(name)) await die();
            const metrics = { 'episode/success_rate': i / 10, 'reward/mean': i };
            answered = onEvent({ type: 'iteration', view: { iteration: i, metrics, allApplied: true, wallS: 0, episodes: [] } });
            return { iteration: i, metrics, episodes: [], episodeRewards: [], episodeAdvantages: [], allApplied: true };
          },
        };
        const r = await runTraining(trainer, events, { iterations: o.iterations, control: c, stopAtSuccess: null, trajectories: 0, afterIteration: async () => void (await answered), onHold: async (reason) => void (await onEvent({ type: 'held', reason, iteration: it })) });
        return r.reason;
      },
      command: async (cmd: RunCommand) => control?.command(cmd),
      saveCheckpoint: async () => (where === 'checkpoint' && dies(name) ? die() : null),
      stop: async () => true,
    };
    return {
      api: api as unknown as SweepWorker['api'],
      died,
      setStarting: () => undefined,
      terminate: () => {
        if (!gone) live.now--;
        gone = true;
        control?.command('stop');
      },
    };
  };
  return { live, newWorker };
}

const jobs = (iterations: number, seeds = [1, 2], lrs = [0.001, 0.003]): SweepRunJob[] => {
  const p = planSweep({ ...draft(), iterations }, { fields: [{ path: 'algo.lr', values: lrs.join(',') }], seeds: seeds.join(',') });
  if (!p.ok) throw new Error(p.message);
  return p.jobs;
};
const hooks = { onProblem: () => undefined, schedule: (fn: () => void) => setTimeout(fn, 0), lock: () => () => undefined };

describe('the sweep runner', () => {
  it('runs two at a time, queues the rest, records every run named and tagged; a dead worker fails its run only', async () => {
    const store = new RunStore(`sweep-test-${Math.random()}`);
    const { live, newWorker } = fakeWorkers(3, (name) => name.includes('lr=0.001 · seed 2'));
    const seen: string[][] = [];
    const r = new SweepRunner('sweep t · grid', jobs(4), { newWorker, store, hooks, slots: 2, schedule: (fn) => fn() }, (v) => seen.push(v.map((x) => x.state)));
    await r.run();
    expect(live.max).toBe(2);
    expect(seen.some((s) => s.filter((x) => x === 'running').length === 2 && s.includes('queued'))).toBe(true);
    expect(r.views.map((v) => [v.name, v.state, v.iteration])).toEqual([
      ['lr=0.001 · seed 1', 'done', 4],
      ['lr=0.001 · seed 2', 'failed', 1],
      ['lr=0.003 · seed 1', 'done', 4],
      ['lr=0.003 · seed 2', 'done', 4],
    ]);
    expect(r.views[1].error).toMatch(/stopped answering/);
    const saved = await store.listRuns();
    expect(saved.map((m) => [m.name, m.status, m.tags]).sort()).toEqual([
      ['lr=0.001 · seed 1', 'finished', ['sweep t · grid']],
      ['lr=0.001 · seed 2', 'error', ['sweep t · grid']],
      ['lr=0.003 · seed 1', 'finished', ['sweep t · grid']],
      ['lr=0.003 · seed 2', 'finished', ['sweep t · grid']],
    ]);
    expect((await store.getMetrics(r.views[0].recordId!)).map((m) => m.iteration)).toEqual([0, 1, 2, 3]);
    expect(saved.find((m) => m.status === 'error')?.error).toMatch(/stopped answering/);
  });

  it('a worker that dies while the page waits on its checkpoint fails its run, and its slot takes the next run', async () => {
    const store = new RunStore(`sweep-test-${Math.random()}`);
    const { live, newWorker } = fakeWorkers(3, (name) => name.includes('lr=0.001 · seed 1'), 'checkpoint');
    const r = new SweepRunner('sweep c', jobs(4, [1, 2, 3], [0.001]), { newWorker, store, hooks, slots: 2, schedule: (fn) => fn() }, () => undefined);
    await r.run();
    expect(r.views.map((v) => [v.name, v.state])).toEqual([
      ['lr=0.001 · seed 1', 'failed'],
      ['lr=0.001 · seed 2', 'done'],
      ['lr=0.001 · seed 3', 'done'],
    ]);
    expect(live.max).toBe(2);
    expect((await store.listRuns()).map((m) => m.status).sort()).toEqual(['error', 'finished', 'finished']);
  });

  it('runs one fewer at a time while the tab lends a slot to its single run, and takes it back when that run ends', async () => {
    const store = new RunStore(`sweep-test-${Math.random()}`);
    const { live, newWorker } = fakeWorkers(3);
    let lent = 1;
    const r = new SweepRunner('sweep l', jobs(15, [1, 2, 3]), { newWorker, store, hooks, slots: 2, lent: () => lent, schedule: (fn) => fn() }, () => undefined);
    expect(r.capacity).toBe(1);
    const done = r.run();
    await until(() => r.views.filter((v) => v.state === 'done').length === 2);
    expect(live.max).toBe(1);
    lent = 0;
    r.slotsChanged();
    expect(r.capacity).toBe(2);
    await done;
    expect(live.max).toBe(2);
    expect(r.views.map((v) => v.state)).toEqual(['done', 'done', 'done', 'done', 'done', 'done']);
    // Never below one: lending every slot still runs the sweep, one at a time.
    expect(new SweepRunner('sweep m', [], { newWorker, store, hooks, slots: 2, lent: () => 5 }, () => undefined).capacity).toBe(1);
  });

  it('Stop stops the runs in flight after their iteration, drops the queue, and keeps what they recorded', async () => {
    const store = new RunStore(`sweep-test-${Math.random()}`);
    const { live, newWorker } = fakeWorkers(5);
    const r = new SweepRunner('sweep s', jobs(10_000, [1, 2, 3]), { newWorker, store, hooks, slots: 2, schedule: (fn) => fn() }, () => undefined);
    const done = r.run();
    await until(() => r.views.filter((v) => v.iteration >= 3).length === 2);
    await r.stop();
    await done;
    expect(r.views.map((v) => v.state)).toEqual(['stopped', 'stopped', 'stopped', 'stopped', 'stopped', 'stopped']);
    expect(live.started).toHaveLength(2);
    expect(live.now).toBe(0);
    const saved = await store.listRuns();
    expect(saved.map((m) => m.status)).toEqual(['stopped', 'stopped']);
    for (const m of saved) {
      const rows = await store.getMetrics(m.id);
      expect(rows.length).toBeGreaterThanOrEqual(3);
      expect(rows.length).toBe(r.views.find((v) => v.recordId === m.id)!.iteration);
    }
  });
});
