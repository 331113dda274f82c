/**
 * Counterfactual re-scoring, the page side: the recent batches of the run (kept as the trainer
 * reports them), the frozen buffer, and the last re-score's answer. Freezing copies what scoring
 * needs (a grid episode's seed, actions and env rewards, which replay; a token episode's turns:
 * actions, infos, observations) and the shaped return and advantage the run used out of the last
 * few iterations' batches; re-scoring sends that and the editor's code to the re-score
 * worker (runtime/rescoreWorker), which replays, scores in QuickJS and does the statistics, so
 * the page's thread only draws the answer. Nothing here touches the trainer: no training step is
 * taken, whether the run is running, paused, finished or gone.
 */
import { create } from 'zustand';
import { wrap, type Remote } from 'comlink';
import type { FrozenEpisode, RescoreResult } from '../../core/reward/rescore.ts';
import type { RescoreReply, RescoreRequest } from '../../runtime/rewardSandbox/rescore.ts';
import type { RescoreWorkerApi } from '../../runtime/rescoreWorker/worker.ts';
import { recentBatches, type KeptBatch } from './recentBatches.ts';
import { useStore } from '../store.ts';
import { messageLine, useRewardLab } from './rewardLab.ts';

/** How long a re-score may take before its worker is terminated, ms (QuickJS stops a looping term per call; this is the backstop). */
const RESCORE_TIMEOUT_MS = 60_000;
/** Episodes listed as the most moved. */
const TOP_MOVED = 12;

export interface FrozenBuffer {
  /** The batches frozen, oldest first (the trajectory inspector opens their episodes). */
  batches: KeptBatch[];
  episodes: FrozenEpisode[];
  /** Iterations frozen, 0-based, ascending. */
  iterations: number[];
  envId: string;
  envKwargs: Record<string, unknown>;
  algo: RescoreRequest['algo'];
  /** The code that scored those iterations ('' = none) and its version (0 = none). */
  code: string;
  version: number;
  callTimeoutMs: number;
  /** Names the freeze (the worker keeps its replay and old-code values under it). */
  id: string;
}

export interface RescoreAnswer {
  result: RescoreResult;
  oldTerms: string[];
  newTerms: string[];
  problems: string[];
  ms: number;
  /** The code it was scored with (to say when the editor moved on). */
  code: string;
}

export interface RescoreState {
  frozen: FrozenBuffer | null;
  answer: RescoreAnswer | null;
  busy: boolean;
  /** The last refusal (the sandbox's message; line when it names one): the previous answer stays. */
  error: { message: string; line: number | null } | null;
  /** Why freezing found nothing (no batch scored by the current code yet, no run, …). */
  note: string | null;
}

export const useRescore = create<RescoreState>(() => ({ frozen: null, answer: null, busy: false, error: null, note: null }));

/** Freezes so far (names each buffer). */
let freezes = 0;

/** What re-scoring needs of a batch's episodes: a grid episode replays, a token episode brings its turns. */
function frozenEpisodes(b: KeptBatch): FrozenEpisode[] {
  const scored = (ep: KeptBatch['episodes'][number], index: number) => ({ iteration: b.iteration, index, seed: ep.seed, group: ep.group, rewards: Array.from(ep.rewards), total: ep.reward, advantage: ep.advantage, success: ep.success });
  if (b.kind === 'grid') return b.episodes.map((ep, i) => ({ ...scored(ep, i), actions: Array.from(ep.actions) }));
  return b.episodes.map((ep, i) => {
    let policyTokens = 0;
    for (let k = 0; k < ep.lossMask.length; k++) policyTokens += ep.lossMask[k];
    return { ...scored(ep, i), actions: [], text: { actions: [...ep.actions], infos: ep.infos.map((x) => ({ ...x })), observations: [...ep.observations], terminated: ep.terminated, truncated: ep.truncated, policyTokens } };
  });
}

/**
 * Freezes the episodes of the last `iterations` batches scored by the run's current code (a
 * batch scored by an earlier version would be compared against the wrong 'before').
 */
export function freezeBuffer(iterations: number): void {
  const run = useStore.getState().running;
  if (!run) {
    useRescore.setState({ note: 'No run to freeze: train for an iteration or two first.' });
    return;
  }
  const versions = useRewardLab.getState().versions;
  const current = versions[versions.length - 1];
  const since = current?.iteration ?? 0;
  const recent = recentBatches();
  const batches = recent.filter((b) => b.iteration >= since).slice(-iterations);
  if (batches.length === 0) {
    useRescore.setState({ note: recent.length === 0 ? 'No batch yet: train for an iteration or two first.' : `No batch scored by the current code (v${current?.version}) yet: train one more iteration.` });
    return;
  }
  const frozen: FrozenBuffer = {
    batches,
    episodes: batches.flatMap(frozenEpisodes),
    iterations: batches.map((b) => b.iteration),
    envId: run.env.id,
    envKwargs: { ...(run.env.kwargs ?? {}) },
    algo: run.algo,
    code: run.reward?.code ?? '',
    version: current?.version ?? 0,
    callTimeoutMs: run.reward?.callTimeoutMs ?? 100,
    id: `freeze-${++freezes}`,
  };
  useRescore.setState({ frozen, answer: null, error: null, note: null });
  // Replay and score with the old code now, while the person edits: re-score then runs only the
  // new code. A failure here is reported by the re-score that follows.
  if (typeof Worker !== 'undefined') {
    rescoreWorker()
      .prepare(requestFor(frozen, ''))
      .catch(() => undefined);
  }
}

function requestFor(frozen: FrozenBuffer, code: string): RescoreRequest {
  return { envId: frozen.envId, envKwargs: frozen.envKwargs, algo: frozen.algo, oldCode: frozen.code, newCode: code, callTimeoutMs: frozen.callTimeoutMs, episodes: frozen.episodes, top: TOP_MOVED, bufferId: frozen.id };
}

let worker: Worker | null = null;

let remote: Remote<RescoreWorkerApi> | null = null;

function rescoreWorker(): Remote<RescoreWorkerApi> {
  if (!remote) {
    worker = new Worker(new URL('../../runtime/rescoreWorker/worker.ts', import.meta.url), { type: 'module', name: 'rescore' });
    remote = wrap<RescoreWorkerApi>(worker);
  }
  return remote;
}

function dropWorker(): void {
  worker?.terminate();
  worker = null;
  remote = null;
}

/** Re-scores the frozen buffer with `code` (the editor's text) in the re-score worker. */
export async function rescoreFrozen(code: string): Promise<void> {
  const { frozen, busy } = useRescore.getState();
  if (!frozen || busy) return;
  useRescore.setState({ busy: true });
  const req = requestFor(frozen, code);
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const overdue = new Promise<RescoreReply>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`re-scoring took more than ${RESCORE_TIMEOUT_MS / 1000} s and was stopped`)), RESCORE_TIMEOUT_MS);
    });
    const reply = await Promise.race([rescoreWorker().rescore(req), overdue]);
    if (useRescore.getState().frozen !== frozen) return; // frozen again meanwhile
    if (reply.ok) {
      useRescore.setState({ answer: { result: reply.result, oldTerms: reply.oldTerms, newTerms: reply.newTerms, problems: reply.problems, ms: reply.ms, code }, error: null });
    } else {
      useRescore.setState({ error: { message: reply.message, line: reply.which === 'new' ? messageLine(reply.message) : null } });
    }
  } catch (e) {
    dropWorker();
    useRescore.setState({ error: { message: (e as Error).message, line: null } });
  } finally {
    clearTimeout(timer);
    useRescore.setState({ busy: false });
  }
}

/** Opens frozen episode `i` (an index into `frozen.episodes`) in the trajectory inspector. */
export function openFrozenEpisode(i: number): void {
  const frozen = useRescore.getState().frozen;
  const ep = frozen?.episodes[i];
  const batch = ep && frozen.batches.find((b) => b.iteration === ep.iteration);
  if (!ep || !batch) return;
  useStore.setState({ inspect: { batch, index: ep.index }, tab: 'trajectories' });
}
