/**
 * Building a trainer for the draft in the training worker (a fresh run, or one resumed from a
 * saved checkpoint): the previous run's worker retired, the backend chosen, the warm start's and
 * the first iteration's progress reported as they come.
 */
import { proxy, transfer } from 'comlink';
import { consentToConnect, notConnectedNotice, pageConsentHost, remoteAddresses, staleRefusals } from './remoteConsent.ts';
import type { PhaseReport, WarmStartProgress } from '../../runtime/trainWorker/types.ts';
import type { WebBackend } from '../../runtime/engine/web.ts';
import { browserRunStore } from '../../runtime/storage/browser.ts';
import { checkpointTransferables, type Checkpoint } from '../../core/runs/checkpoint.ts';
import type { MetricRow } from '../../core/runs/format.ts';
import { rewardVersions } from '../../core/reward/versions.ts';
import { WARM_START_DIR } from '../../core/trainer/warmStartCache.ts';
import { setAppliedCode, useRewardLab } from '../rewardLab/rewardLab.ts';
import { clearRecentBatches } from '../rewardLab/recentBatches.ts';
import { retireTrainWorker, trainWorker, workerStarting } from './client.ts';
import { draftFromPreset, validate } from './config.ts';
import { setPath } from './fields.ts';
import { recording } from './recording.ts';
import { resolveBackend, threadsFor } from './backendChoice.ts';
import { resumable } from './resumable.ts';
import { nextWarmEta } from './warmEta.ts';
import { rested, type RunContext } from './runContext.ts';
import { go, recordHooks } from './runEvents.ts';

/**
 * Where the page's shipped warm starts are fetched from (beside the app, under `base`); undefined
 * without a document (the store's tests run this slice in Node), so the warm start trains.
 */
const shippedWarmStartBase = (): string | undefined => (typeof document === 'undefined' ? undefined : new URL(`${WARM_START_DIR}/`, document.baseURI).href);

/** The warm start's progress reports of run `id`; paused, the worker's warm start waits on the answer. */
function onWarmReport(ctx: RunContext, id: number) {
  const { get, set, run } = ctx;
  return proxy((p: WarmStartProgress) => {
    if (run.id !== id) return;
    const warmHistory = [...get().warmHistory, { ...p, t: performance.now() }];
    set({ warmStart: p, warmHistory, warmEta: nextWarmEta(warmHistory, p.total, get().warmEta) });
    // Paused: the worker's warm start waits on this answer before its next step.
    if (get().warmPaused) return new Promise<void>((resolve) => (run.releaseWarm = resolve));
  });
}

/** What a start of run `id` is doing until its first iteration (the charts show it). */
function onPhaseReport(ctx: RunContext, id: number) {
  const { get, set, run } = ctx;
  return proxy((p: PhaseReport) => {
    if (run.id !== id) return;
    const cur = get().phase;
    if (p.phase === 'rollout') {
      if (get().history.length > 0 || cur?.name === 'update') return;
      // Every episode played: what remains of the first iteration is scoring and the update.
      if (p.done >= p.total) set({ phase: { name: 'update', since: performance.now() } });
      // Episodes of the first rollout: the phase keeps its start time.
      else set({ phase: { name: 'rollout', since: cur?.name === 'rollout' ? cur.since : performance.now(), done: p.done, total: p.total } });
    } else if (cur?.name !== p.phase) set({ phase: { name: p.phase, since: performance.now() } });
  });
}

/** The reward lab's applied code is part of the run's config (and so of its saved record); a resumed run keeps the code it was trained with, and the lab shows it as applied. */
function syncRewardCode(ctx: RunContext, resuming: boolean): void {
  const { get, set } = ctx;
  if (resuming) setAppliedCode(get().draft.reward?.code ?? '');
  else {
    const code = useRewardLab.getState().applied;
    if (get().draft.reward?.code !== code) set({ draft: setPath(get().draft, 'reward.code', code) });
  }
}

/**
 * Builds a trainer for the draft in a fresh worker; false when the draft is invalid or it failed.
 * `resume`: continue from a checkpoint, with the run's earlier metric rows on the charts.
 */
export async function boot(ctx: RunContext, resume?: { checkpoint: Checkpoint; rows: readonly MetricRow[] }): Promise<boolean> {
  const { get, set, run } = ctx;
  syncRewardCode(ctx, resume !== undefined);
  const v = validate(get().draft);
  if (!v.ok) {
    get().notify('warning', 'Fix the highlighted settings first; nothing was started.');
    return false;
  }
  const servers = remoteAddresses(v.config);
  const consent = consentToConnect(servers, pageConsentHost());
  if (!consent.ok) {
    get().notify('warning', notConnectedNotice(consent.refused));
    return false;
  }
  // Approved: an earlier refusal's notice about these servers no longer holds.
  for (const id of staleRefusals(servers, get().notices)) get().dismiss(id);
  // The previous run's worker stops and waits as the spare this run adopts (same threads).
  await retireTrainWorker();
  recording.close('stopped');
  rested(ctx);
  const history = ctx.feed.reset(resume?.rows);
  clearRecentBatches();
  run.trained = resume?.checkpoint.iteration ?? 0;
  run.canCheckpoint = false;
  run.releaseWarm = null;
  const id = ++run.id;
  const draft = get().draft;
  set({ status: 'starting', error: null, history, latest: null, inspect: null, info: null, running: draft, pendingRestart: [], liveChanges: [], skippedUpdates: 0, itPerS: 0, warmHistory: [], warmEta: null, warmPaused: false, recordId: null, phase: { name: 'engine', since: performance.now() } });
  let backend: WebBackend | null = null;
  try {
    const threads = threadsFor(get, v.config);
    backend = await workerStarting(resolveBackend(get, set, trainWorker(ctx.fail, threads), v.config, draft.backend, threads, () => run.id === id));
    if (backend === null || run.id !== id) return false;
    const onWarm = onWarmReport(ctx, id);
    const onPhase = onPhaseReport(ctx, id);
    useRewardLab.setState({ versions: [], problems: [], error: null });
    const info = await workerStarting(trainWorker(ctx.fail).start(v.config, backend, onWarm, threads, resume && transfer(resume.checkpoint, checkpointTransferables(resume.checkpoint)), onPhase, shippedWarmStartBase()));
    if (run.id !== id) return false; // reset or restarted while starting
    run.canCheckpoint = info.canCheckpoint;
    run.trained = info.iteration;
    set({ info, warmStart: null });
    if ((v.config.reward?.code ?? '').trim() !== '') useRewardLab.setState({ versions: [{ version: 1, iteration: 0, terms: [], code: v.config.reward.code }] });
    return true;
  } catch (e) {
    const on = backend === 'webgpu' ? 'WebGPU' : backend === 'wasm' ? 'WASM' : 'the chosen backend';
    if (run.id === id) ctx.fail(`could not start on ${on}: ${(e as Error).message}`);
    return false;
  }
}

/** Reopens saved run `id` from its checkpoint and trains on (the Runs view's Resume). */
export async function resumeSavedRun(ctx: RunContext, id: string): Promise<void> {
  const { get, set } = ctx;
  const store = browserRunStore();
  if (!store) return;
  const r = await resumable(store, id, recording.liveId, get().draft.backend);
  if (!r.ok) {
    get().notify(r.level, r.message);
    return;
  }
  const { meta, checkpoint, draft, validation } = r;
  const p = get().presets.find((x) => x.id === meta.config.id);
  set({ view: 'train', draft, validation, pendingRestart: [], ...(p ? { presetId: p.id, base: draftFromPreset(p, draft.backend) } : {}) });
  const before = (await store.getMetrics(id)).filter((r) => r.iteration < checkpoint.iteration);
  if (!(await boot(ctx, { checkpoint, rows: before }))) return;
  // Only once the worker took the checkpoint: rows past it are trained again (identically, for
  // synchronous runs); a refused checkpoint leaves the saved run as it was.
  const kept = await store.truncateRun(id, checkpoint.iteration);
  // The versions that scored the kept iterations keep their markers (boot knew only the code it resumed with).
  const keptVersions = rewardVersions(meta.config.reward.code, meta.liveEdits.filter((e) => e.iteration <= checkpoint.iteration));
  useRewardLab.setState({ versions: keptVersions.map((x) => ({ ...x, terms: [] })) });
  const recordId = recording.resume(store, meta, kept, recordHooks(ctx));
  set({ recordId, status: 'running' });
  get().notify('info', `Resumed "${meta.name}" from its checkpoint at iteration ${checkpoint.iteration}.`);
  await go(ctx, 'play');
}
