/**
 * Changes to a run in progress: settings that apply live, new reward code (scoring from the
 * next batch on), the warm start's pause, and timing the backends again between runs.
 */
import { messageLine, setOwnCode, useRewardLab } from '../rewardLab/rewardLab.ts';
import { trainWorker, withProbeWorker } from './client.ts';
import { liveHyper, validate } from './config.ts';
import { getPath, setPath, type DraftConfig } from './fields.ts';
import { recording } from './recording.ts';
import { MEASURE_AGAIN_BUDGET_MS, resolveBackend, threadsFor } from './backendChoice.ts';
import { resumeWarmEta } from './warmEta.ts';
import { budget, send, type RunContext } from './runContext.ts';

/** Fields `live` of running config `r` changed and apply to the run in progress. */
export function applyLive(ctx: RunContext, r: DraftConfig, live: string[]): void {
  const { get, set, run } = ctx;
  recording.liveEdit(live.map((p) => ({ iteration: run.trained, path: p, value: getPath(r, p) })));
  set({ liveChanges: [...get().liveChanges, ...live.map((p) => ({ iteration: run.trained, path: p }))] });
  // A new iteration count: the run in progress stops at it (or holds there at once, if past it).
  if (live.includes('iterations') && get().status !== 'starting') send(ctx, budget(ctx, r.iterations));
  void trainWorker(ctx.fail)
    .setHyper(liveHyper(r))
    .catch(() => undefined);
}

/** The reward lab's code: saved for the next run, or applied to the running one from its next iteration. */
export async function applyRewardCode(ctx: RunContext): Promise<void> {
  const { get, set, run } = ctx;
  const lab = useRewardLab.getState();
  if (lab.applying) return;
  const code = lab.text;
  const s = get().status;
  const live = get().running !== null && s !== 'idle' && s !== 'error' && s !== 'starting';
  if (!live) {
    // No run to change: the next start uses it (and its own dry run reports any problem).
    setOwnCode(code);
    useRewardLab.setState({ error: null });
    get().notify('info', code.trim() ? 'Reward code saved: the next run starts with it.' : 'Reward code cleared: the next run uses the env reward and shaping only.');
    return;
  }
  const id = run.id;
  const versions = lab.versions;
  const version = (versions[versions.length - 1]?.version ?? 0) + 1;
  useRewardLab.setState({ applying: true });
  try {
    const terms = await trainWorker(ctx.fail).setRewardCode(code, version);
    if (run.id !== id) return;
    setOwnCode(code);
    // Scores from the next iteration on (the one after those already in the charts).
    useRewardLab.setState({ versions: [...versions, { version, iteration: run.trained, terms, code }], error: null });
    const r = get().running;
    if (r) set({ running: setPath(r, 'reward.code', code), draft: setPath(get().draft, 'reward.code', code) });
    recording.liveEdit([{ iteration: run.trained, path: 'reward.code', value: code }]);
  } catch (e) {
    const message = (e as Error).message.replace(/^Error: /, '');
    useRewardLab.setState({ error: { message, line: messageLine(message) } });
  } finally {
    useRewardLab.setState({ applying: false });
  }
}

/** Pauses the warm start before its next step, or lets it go on. */
export function toggleWarmPause(ctx: RunContext): void {
  const { get, set, run } = ctx;
  if (get().status !== 'starting' || !get().warmStart) return;
  if (get().warmPaused) {
    set({ warmPaused: false, warmEta: resumeWarmEta(get().warmEta, performance.now()) });
    run.releaseWarm?.();
    run.releaseWarm = null;
  } else set({ warmPaused: true });
}

/** Times the backends again on this draft's model, in a throwaway worker (never while a run trains). */
export async function measureAgain(ctx: RunContext): Promise<void> {
  const { get, set } = ctx;
  const v = validate(get().draft);
  if (!v.ok) {
    get().notify('warning', "Fix the highlighted settings first: the backends are timed on this run's model.");
    return;
  }
  if (get().measuringBackends || ['starting', 'running', 'pausing', 'stepping'].includes(get().status)) return;
  try {
    await withProbeWorker((w) => resolveBackend(get, set, w, v.config, 'auto', threadsFor(get, v.config), () => true, true, MEASURE_AGAIN_BUDGET_MS));
  } catch (e) {
    get().notify('error', `Timing the backends failed: ${(e as Error).message}`);
  }
}
