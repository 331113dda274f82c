/**
 * The run state machine against a fake training worker: start / pause / step / reset, live
 * hyperparameters reaching the worker without stopping the loop, and structural edits waiting
 * for a confirmed restart.
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { IterationView } from '../../runtime/trainWorker/types.ts';

const calls: { start: unknown[][]; step: number; setHyper: unknown[] } = { start: [], step: 0, setHyper: [] };
let stepDelay = 0;
/** Iterations of the current fake trainer (a new start begins at 0, as a fresh worker does). */
let runStep = 0;

function fakeIteration(i: number): IterationView {
  return { iteration: i, metrics: { 'episode/success_rate': Math.min(1, i / 10), 'reward/mean': i, 'reward/std': 1 }, allApplied: true, wallS: 0, episodes: [] };
}

vi.mock('./client.ts', async () =>
  (await import('./fakeTrainWorker.testkit.ts')).fakeTrainWorkerModule(() => ({
    start: (...args: unknown[]) => {
      calls.start.push(args);
      runStep = 0;
    },
    step: async () => {
      calls.step++;
      const i = runStep++;
      await new Promise((r) => setTimeout(r, stepDelay));
      return fakeIteration(i);
    },
    setHyper: (h: unknown) => {
      calls.setHyper.push(h);
    },
  })),
);

const { useStore } = await import('../store.ts');
const s = () => useStore.getState();
const until = async (cond: () => boolean, ms = 3000) => {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > ms) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
};

beforeEach(() => {
  s().resetRun();
  calls.start = [];
  calls.step = 0;
  calls.setHyper = [];
  stepDelay = 0;
  s().choosePreset('grid-empty-8x8-grpo');
});

describe('training run state machine', () => {
  it("honours the config's stopAtSuccess as the CLI does: finished once the last 3 iterations' mean success reaches it", async () => {
    s().editField('iterations', 40);
    s().editField('stopAtSuccess', 0.5);
    expect(s().validation.ok).toBe(true);
    await s().startRun();
    await until(() => s().status === 'finished');
    // Success i/10 at iteration i: (0.4 + 0.5 + 0.6) / 3 = 0.5 after 7 iterations.
    expect(calls.step).toBe(7);
    await until(() => s().history.length === 7);
  });

  it('a finished run trains N more on Start and one more on Step, with the same trainer; lowering the iterations live ends a run early', async () => {
    s().editField('iterations', 3);
    await s().startRun();
    expect(s().status).toBe('finished');
    expect(calls.step).toBe(3);
    await s().startRun();
    expect(s().status).toBe('finished');
    expect(calls.step).toBe(6);
    expect(s().running?.iterations).toBe(6);
    await s().stepOnce();
    expect(s().status).toBe('finished');
    expect(calls.step).toBe(7);
    expect(calls.start).toHaveLength(1);

    s().resetRun();
    calls.step = 0;
    stepDelay = 5;
    s().editField('iterations', 1000);
    const run = s().startRun();
    await until(() => calls.step >= 9);
    s().editField('iterations', 12);
    await run;
    expect(s().status).toBe('finished');
    expect(calls.step).toBeLessThanOrEqual(13);
    await until(() => s().history.length === 12);
  });

  it('single step = one start and one iteration, then paused', async () => {
    await s().stepOnce();
    expect(calls.start).toHaveLength(1);
    expect(calls.step).toBe(1);
    expect(s().status).toBe('paused');
    await until(() => s().history.length === 1);
    expect(s().history[0]['reward/lo']).toBe(-1); // mean 0 − std 1 (no min reported)
  });

  it('runs to the configured iterations; a live lr edit reaches the worker and the loop keeps going', async () => {
    s().editField('iterations', 6);
    stepDelay = 2;
    const run = s().startRun();
    await until(() => calls.step >= 2);
    s().editField('algo.lr', 0.005);
    expect(s().pendingRestart).toEqual([]);
    expect(calls.setHyper.at(-1)).toMatchObject({ lr: 0.005 });
    await run;
    expect(s().status).toBe('finished');
    expect(calls.step).toBe(6);
    expect(calls.start).toHaveLength(1);
  });

  it('a link to a preset that carries reward code applies it; a link to one without keeps the code the person applied', async () => {
    const { useRewardLab } = await import('../rewardLab/rewardLab.ts');
    useRewardLab.getState().setText('export const mine = (s) => 0;\n');
    useRewardLab.setState({ applied: 'export const mine = (s) => 0;\n' });
    s().openTrain('#view=train&preset=grid-empty-8x8-grpo');
    expect(useRewardLab.getState().applied).toContain('mine');
    s().openTrain('#view=train&preset=grid-empty-8x8-hackable');
    expect(useRewardLab.getState().applied).toContain('closer');
    expect(s().draft.reward?.code).toContain('closer');
  });

  it('a structural edit waits for confirmation; revert keeps the run, confirm restarts it', async () => {
    await s().stepOnce();
    s().editField('algo.groupSize', 4);
    expect(s().pendingRestart).toEqual(['algo.groupSize']);
    expect(calls.start).toHaveLength(1);
    s().revertDraft();
    expect(s().draft.algo.groupSize).toBe(8);
    expect(s().pendingRestart).toEqual([]);
    s().editField('algo.groupSize', 4);
    s().editField('iterations', 2);
    await s().applyRestart();
    expect(calls.start).toHaveLength(2);
    expect((calls.start[1][0] as { algo: { groupSize: number } }).algo.groupSize).toBe(4);
  });

  it('an invalid field blocks Resume, Step and Train more too (not only a fresh Start), and the notice names it', async () => {
    await s().stepOnce();
    expect(s().status).toBe('paused');
    s().editField('algo.lr', -1);
    await s().startRun();
    await s().stepOnce();
    expect(calls.step).toBe(1);
    expect(s().status).toBe('paused');
    expect(s().notices.at(-1)?.text).toMatch(/nothing was trained\. Learning rate: /);
    s().editField('algo.lr', 0.001);
    s().editField('iterations', 2);
    await s().startRun();
    expect(s().status).toBe('finished');
    s().editField('algo.lr', -1);
    await s().startRun();
    expect(calls.step).toBe(2);
  });

  it('keeping the current run after picking another preset highlights the running preset again', async () => {
    await s().stepOnce();
    s().choosePreset('grid-door-key-ppo');
    expect(s().presetId).toBe('grid-door-key-ppo');
    expect(s().pendingRestart.length).toBeGreaterThan(0);
    s().revertDraft();
    expect(s().presetId).toBe('grid-empty-8x8-grpo');
    expect(s().draft.env.id).toBe('grid/empty-8x8');
    expect(s().pendingRestart).toEqual([]);
  });

  it('invalid input starts nothing and keeps the running experiment', async () => {
    await s().stepOnce();
    s().editField('algo.lr', -1);
    expect(s().validation.ok).toBe(false);
    expect(calls.setHyper).toEqual([]);
    expect(s().running?.algo.lr).toBe(0.001);
  });

  it('pause stops after the iteration in flight; reset clears the charts', async () => {
    stepDelay = 5;
    const run = s().startRun();
    await until(() => calls.step >= 1);
    s().pauseRun();
    expect(s().status).toBe('pausing');
    await run;
    expect(s().status).toBe('paused');
    const n = calls.step;
    await new Promise((r) => setTimeout(r, 30));
    expect(calls.step).toBe(n);
    s().resetRun();
    expect(s().history).toEqual([]);
    expect(s().running).toBeNull();
  });

  it('picking a preset by hand leaves an armed lesson step, with a notice; setting the step up again re-arms it', () => {
    const lesson = s().lessons[0];
    s().openLesson(lesson.id, 0);
    s().setUpStep();
    expect(s().armed).toEqual({ lessonId: lesson.id, step: 0 });
    s().choosePreset('grid-door-key-ppo');
    expect(s().armed).toBeNull();
    expect(s().notices.at(-1)?.text).toMatch(new RegExp(`Left lesson "${lesson.title}", step 1`));
    s().openLesson(lesson.id, 0);
    s().setUpStep();
    expect(s().armed).toEqual({ lessonId: lesson.id, step: 0 });
  });
});
