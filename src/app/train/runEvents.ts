/**
 * The worker's loop seen from the page: starting it on the booted trainer, and what each of its
 * reports does (an iteration is recorded, charted and fed to the reward lab; a rest saves a
 * checkpoint or finishes the record; an error fails the run).
 */
import { proxy } from 'comlink';
import type { HoldReason } from '../../core/trainer/runControl.ts';
import type { IterationView, RunEvent } from '../../runtime/trainWorker/types.ts';
import { useRewardLab } from '../rewardLab/rewardLab.ts';
import { noteBatch } from '../rewardLab/recentBatches.ts';
import { trainWorker } from './client.ts';
import { validate } from './config.ts';
import { recording, type RecordLabel } from './recording.ts';
import { rested, saveCheckpoint, untilRest, writer, type RunContext } from './runContext.ts';

/** How the run's record is named: after a lesson step, or the preset and seed. */
function label(ctx: RunContext): RecordLabel | null {
  const r = ctx.get().running;
  const valid = r ? validate(r) : null;
  if (!valid?.ok) return null;
  const c = valid.config;
  const { armed, lessons } = ctx.get();
  const li = armed ? lessons.findIndex((l) => l.id === armed.lessonId) : -1;
  const step = li >= 0 ? lessons[li].steps[armed!.step] : undefined;
  const name = step ? `Lesson ${li + 1} · step ${armed!.step + 1} · ${step.title} · seed ${c.seed}` : `${c.id} · seed ${c.seed}`;
  const tags = step ? [`lesson ${li + 1}`] : [];
  return { config: c, name, tags };
}

/** What the run's record says to the person: problems as warnings, recoveries as notes. */
export function recordHooks(ctx: RunContext) {
  return { onProblem: (m: string) => ctx.get().notify('warning', m), onRecovered: (m: string) => ctx.get().notify('info', m) };
}

/** The running config, for a record that must be reopened (null when the form's run is invalid). */
function reopenWith(ctx: RunContext) {
  const r = ctx.get().running;
  const valid = r ? validate(r) : null;
  return valid?.ok ? valid.config : null;
}

/** One iteration's report: into the record, the reward lab, the notices and the charts. */
function ingest(ctx: RunContext, v: IterationView): void {
  const { get, set, run } = ctx;
  const started = recording.add(v, get().running?.env.id ?? '', () => label(ctx), recordHooks(ctx), () => reopenWith(ctx));
  if (started) set({ recordId: started });
  noteBatch(v);
  if (v.rewardProblems?.length) {
    useRewardLab.setState({ problems: v.rewardProblems.slice(0, 5) });
    get().notify('warning', v.rewardProblems[0]);
  }
  // A rollout worker died or stopped answering and a new one took its place: the run went on.
  for (const note of v.workerNotes ?? []) get().notify('warning', `${note}. Training goes on.`);
  run.trained = v.iteration + 1;
  ctx.feed.push(v);
  if (!v.allApplied) set({ skippedUpdates: get().skippedUpdates + 1 });
}

/** The worker's loop came to rest between iterations. */
async function held(ctx: RunContext, reason: HoldReason, id: number): Promise<void> {
  const { get, set, run } = ctx;
  if (reason === 'paused') {
    // Paused: the run can resume from here after a reload.
    await saveCheckpoint(ctx, id);
    if (run.id !== id) return;
    const s = get().status;
    // Start pressed while the checkpoint was being saved: the loop trains on already.
    if (s === 'pausing' || s === 'stepping') set({ status: 'paused', phase: null });
  } else {
    // The run reached its iterations (or its success target): its record says finished, with
    // a checkpoint to train on from (it reopens on "Train N more").
    await recording.finish(writer(ctx, id));
    if (run.id !== id) return;
    set({ status: 'finished', phase: null });
    if (reason === 'success') get().notify('info', `Stopped at iteration ${run.trained}: success ≥ ${Math.round((get().running?.stopAtSuccess ?? 0) * 100)}% over the last 3 iterations (the config's stopAtSuccess), as the CLI stops.`);
  }
  rested(ctx);
}

/** Starts the worker's loop on the booted trainer (mode 'step': one iteration, then paused); resolves when it first rests. */
export function go(ctx: RunContext, mode: 'play' | 'step'): Promise<void> {
  const { get, set, run } = ctx;
  const id = run.id;
  const r = get().running;
  if (!r) return Promise.resolve();
  set({ phase: { name: 'rollout', since: performance.now() } });
  run.base = run.trained;
  const onEvent = proxy(async (e: RunEvent) => {
    if (run.id !== id) return;
    if (e.type === 'iteration') {
      ingest(ctx, e.view);
      if (recording.checkpointDue(e.view.iteration)) await saveCheckpoint(ctx, id);
    } else if (e.type === 'error') ctx.fail(e.message);
    else await held(ctx, e.reason, id);
  });
  const rest = untilRest(ctx);
  trainWorker(ctx.fail)
    .run({ iterations: r.iterations - run.trained, stopAtSuccess: r.stopAtSuccess ?? null, mode }, onEvent)
    .catch((e: unknown) => {
      if (run.id === id) ctx.fail((e as Error).message);
    });
  return rest;
}
