import { describe, expect, it } from 'vitest';
import { runTraining, TrainerEvents, type TrainerEvent } from './events.ts';
import type { SteppableTrainer } from './api.ts';
import type { TokenEpisode } from '../rollout/tokenEpisode.ts';

/** A scripted trainer: success rates per iteration, an optional NaN-skip and a failing step. */
function scripted(success: number[], opts: { skipAt?: number; throwAt?: number; skipFrom?: number } = {}): SteppableTrainer {
  let it = 0;
  return {
    step() {
      const i = it++;
      if (i === opts.throwAt) return Promise.reject(new Error('decoder lost'));
      const ep = { seed: i, success: success[i] > 0.5 } as unknown as TokenEpisode;
      return Promise.resolve({
        iteration: i,
        metrics: { 'episode/success_rate': success[i] },
        episodes: [ep, ep, ep],
        episodeRewards: [1, 0, 1],
        episodeAdvantages: [0.5, -1, 0.5],
        allApplied: i !== opts.skipAt && !(opts.skipFrom !== undefined && i >= opts.skipFrom),
      });
    },
  };
}

function record(events: TrainerEvents): TrainerEvent[] {
  const log: TrainerEvent[] = [];
  for (const t of ['iteration', 'trajectories', 'update-skipped', 'error', 'held', 'stopped'] as const) events.on(t, (e) => log.push(e));
  return log;
}

describe('runTraining events', () => {
  it('afterIteration (checkpoint saves) is awaited after each iteration; a throw there ends the run with an error', async () => {
    const events = new TrainerEvents();
    const log = record(events);
    const seen: string[] = [];
    events.on('iteration', (e) => seen.push(`it ${e.iteration}`));
    const stop = await runTraining(scripted(new Array(5).fill(0)), events, {
      iterations: 5,
      trajectories: 0,
      afterIteration: async (it) => {
        await new Promise((r) => setTimeout(r, 1));
        seen.push(`saved ${it}`);
        if (it === 2) throw new Error('disk full');
      },
    });
    expect(seen).toEqual(['it 0', 'saved 0', 'it 1', 'saved 1', 'it 2', 'saved 2']);
    expect(stop).toMatchObject({ reason: 'error', iterations: 3 });
    expect(log.find((e) => e.type === 'error')).toMatchObject({ iteration: 2, message: 'disk full' });
  });

  it('stops with an error after 5 iterations in a row whose updates were all skipped (nothing is learnt)', async () => {
    const events = new TrainerEvents();
    const log = record(events);
    const stop = await runTraining(scripted(new Array(20).fill(0), { skipAt: 1, skipFrom: 4 }), events, { iterations: 20, trajectories: 0 });
    // Iteration 1 alone is no streak; 4, 5, 6, 7, 8 are.
    expect(stop).toMatchObject({ reason: 'error', iterations: 9 });
    const err = log.find((e) => e.type === 'error') as Extract<TrainerEvent, { type: 'error' }>;
    expect(err.iteration).toBe(8);
    expect(err.message).toMatch(/^the last 5 iterations' updates were all skipped: the loss, the gradient or the updated weights were not finite/);
    expect(await runTraining(scripted(new Array(6).fill(0), { skipFrom: 3 }), new TrainerEvents(), { iterations: 6, maxSkippedInARow: 3 })).toMatchObject({ reason: 'error', iterations: 6 });
  });

  it('yields to the event loop between iterations, so a timer (a Ctrl-C handler) runs mid-run', async () => {
    let stopAsked = false;
    setTimeout(() => (stopAsked = true), 0);
    // Steps resolve at once (like WASM session runs): without a macrotask between them the timer never fires.
    const stop = await runTraining(scripted(new Array(1000).fill(0)), new TrainerEvents(), { iterations: 1000, trajectories: 0, shouldStop: () => stopAsked });
    expect(stop.reason).toBe('requested');
    expect(stop.iterations).toBeLessThan(1000);
  });

  it('emits iteration, trajectories and update-skipped in order, then stopped', async () => {
    const events = new TrainerEvents();
    const log = record(events);
    const stop = await runTraining(scripted([0, 0.2, 0.4], { skipAt: 1 }), events, { iterations: 3, trajectories: 2 });
    expect(log.map((e) => e.type)).toEqual(['iteration', 'trajectories', 'iteration', 'update-skipped', 'trajectories', 'iteration', 'trajectories', 'stopped']);
    const traj = log[1] as Extract<TrainerEvent, { type: 'trajectories' }>;
    expect(traj.episodes.map((e) => [e.reward, e.advantage])).toEqual([[1, 0.5], [0, -1]]);
    expect(stop).toMatchObject({ reason: 'iterations', iterations: 3 });
  });

  it('stops once the last three iterations average the success target', async () => {
    const events = new TrainerEvents();
    const stop = await runTraining(scripted([0.5, 0.9, 1, 1, 1, 1]), events, { iterations: 6, stopAtSuccess: 0.95 });
    // Means of three: (0.5+0.9+1)/3 = 0.8, (0.9+1+1)/3 ≈ 0.967 ≥ 0.95 at the 4th iteration.
    expect(stop).toMatchObject({ reason: 'success', iterations: 4 });
  });

  it('a failing step becomes an error event and a stop, not a rejection', async () => {
    const events = new TrainerEvents();
    const log = record(events);
    const stop = await runTraining(scripted([0, 0, 0], { throwAt: 1 }), events, { iterations: 3, trajectories: 0 });
    expect(log.map((e) => e.type)).toEqual(['iteration', 'error', 'stopped']);
    expect((log[1] as Extract<TrainerEvent, { type: 'error' }>).message).toBe('decoder lost');
    expect(stop).toMatchObject({ reason: 'error', iterations: 1 });
  });

  it('honours a stop request and lets listeners unsubscribe', async () => {
    const events = new TrainerEvents();
    let seen = 0;
    const off = events.on('iteration', () => {
      seen++;
      if (seen === 2) off();
    });
    let calls = 0;
    const stop = await runTraining(scripted([0, 0, 0, 0, 0]), events, { iterations: 5, shouldStop: () => ++calls > 3 });
    expect(stop).toMatchObject({ reason: 'requested', iterations: 3 });
    expect(seen).toBe(2);
  });
});

describe('runTraining with a RunControl (the browser worker\'s loop)', () => {
  const tick = () => new Promise((r) => setTimeout(r, 5));

  it('holds at its budget and at its success target instead of ending, and trains on when extended', async () => {
    const { RunControl } = await import('./runControl.ts');
    const events = new TrainerEvents();
    const log = record(events);
    const held: string[] = [];
    events.on('held', (e) => held.push(`${e.reason}@${e.iterations}`));
    const control = new RunControl(6);
    const run = runTraining(scripted([0, 1, 1, 1, 0, 0, 0, 0, 0, 0]), events, { iterations: 6, control, stopAtSuccess: 0.9, trajectories: 0 });
    while (held.length === 0) await tick();
    // Success over iterations 1–3: resting, not stopped.
    expect(held).toEqual(['success@4']);
    control.command('play');
    while (held.length === 1) await tick();
    expect(held).toEqual(['success@4', 'iterations@6']);
    control.command({ budget: 8 });
    control.command('play');
    while (held.length === 2) await tick();
    expect(held.at(-1)).toBe('iterations@8');
    control.command('stop');
    expect(await run).toMatchObject({ reason: 'requested', iterations: 8 });
    expect(log.filter((e) => e.type === 'iteration')).toHaveLength(8);
  });

  it('pause holds between iterations; step takes exactly one; the skip rule still stops the run', async () => {
    const { RunControl } = await import('./runControl.ts');
    const events = new TrainerEvents();
    const log = record(events);
    const held: string[] = [];
    events.on('held', (e) => held.push(`${e.reason}@${e.iterations}`));
    const control = new RunControl(20, { paused: true });
    const run = runTraining(scripted(new Array(20).fill(0), { skipFrom: 2 }), events, { iterations: 20, control, trajectories: 0, onHold: async () => {
      await tick();
    } });
    while (held.length === 0) await tick();
    expect(held).toEqual(['paused@0']);
    control.command('step');
    while (held.length === 1) await tick();
    expect(held).toEqual(['paused@0', 'paused@1']);
    control.command('play');
    const stop = await run;
    expect(stop).toMatchObject({ reason: 'error', iterations: 1 + 6 });
    expect(log.some((e) => e.type === 'error')).toBe(true);
  });
});
