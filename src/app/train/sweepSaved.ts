/**
 * A tab's sweep kept across a reload: its runs (each a validated config) once at the start, and
 * each run's state as it changes, in localStorage. A reload (or a closed tab) stops the runs in
 * flight; on the next page the Sweep tab says what finished, what was cut off and what never
 * started, and offers to train the rest (app/train/sweep.ts `resumeSweep`). Before, the queued runs
 * were dropped without a word.
 */
import { parseRunConfig } from '../../core/presets/schema.ts';
import type { SweepRunJob, SweepRunState } from './sweepRunner.ts';

/** localStorage keys: the runs (written once per sweep) and their states (written on each change). */
export const SWEEP_JOBS_KEY = 'arl.sweep.jobs';
export const SWEEP_STATES_KEY = 'arl.sweep.states';

/** What is kept of a sweep. */
export interface SavedSweep {
  tag: string;
  /** Runs at once when it started. */
  slots: number;
  jobs: SweepRunJob[];
  /** Per job, in order. */
  states: SweepRunState[];
}

/** A sweep a reload interrupted: what happened to each of its runs, and those left to train. */
export interface InterruptedSweep {
  tag: string;
  slots: number;
  total: number;
  done: number;
  failed: number;
  /** Runs in flight at the reload: saved in Runs up to their last iteration, listed as interrupted. */
  cut: SweepRunJob[];
  /** Runs that had not started. */
  queued: SweepRunJob[];
  /** Runs left out of a resume: their config is no longer accepted (name: why). */
  invalid: string[];
}

type Storage = Pick<globalThis.Storage, 'getItem' | 'setItem' | 'removeItem'>;

/** The page's localStorage, or null where there is none (Node, a blocked one). */
export function pageStorage(): Storage | null {
  try {
    return typeof localStorage === 'undefined' ? null : localStorage;
  } catch {
    return null;
  }
}

/** Writes the sweep's runs and states; false when storage refused (full, blocked): the sweep runs on, without a resume after a reload. */
export function saveSweep(s: SavedSweep, storage: Storage | null = pageStorage()): boolean {
  if (!storage) return false;
  try {
    storage.setItem(SWEEP_JOBS_KEY, JSON.stringify({ version: 1, tag: s.tag, slots: s.slots, jobs: s.jobs }));
    storage.setItem(SWEEP_STATES_KEY, JSON.stringify(s.states));
    return true;
  } catch {
    clearSweep(storage);
    return false;
  }
}

/** Writes the states alone (the runs are written once, by saveSweep). */
export function saveSweepStates(states: readonly SweepRunState[], storage: Storage | null = pageStorage()): void {
  try {
    storage?.setItem(SWEEP_STATES_KEY, JSON.stringify(states));
  } catch {
    // Full storage: the states written last stay, so a resume may train a run again; nothing is lost.
  }
}

export function clearSweep(storage: Storage | null = pageStorage()): void {
  try {
    storage?.removeItem(SWEEP_JOBS_KEY);
    storage?.removeItem(SWEEP_STATES_KEY);
  } catch {
    // Nothing to do: a storage that cannot be written cannot hold a sweep either.
  }
}

const STATES: readonly SweepRunState[] = ['queued', 'running', 'done', 'failed', 'stopped'];

/** The kept sweep, or null when there is none or what is kept does not read as one (then it is cleared). */
export function loadSweep(storage: Storage | null = pageStorage()): SavedSweep | null {
  if (!storage) return null;
  try {
    const jobsText = storage.getItem(SWEEP_JOBS_KEY);
    if (jobsText === null) return null;
    const j = JSON.parse(jobsText) as { version?: unknown; tag?: unknown; slots?: unknown; jobs?: unknown };
    const states = JSON.parse(storage.getItem(SWEEP_STATES_KEY) ?? 'null') as unknown;
    const ok =
      j.version === 1 &&
      typeof j.tag === 'string' &&
      typeof j.slots === 'number' &&
      Array.isArray(j.jobs) &&
      j.jobs.every((x: SweepRunJob) => typeof x?.name === 'string' && typeof x.configName === 'string' && typeof x.configKey === 'string' && typeof x.seed === 'number' && typeof x.config === 'object' && x.config !== null) &&
      Array.isArray(states) &&
      states.length === j.jobs.length &&
      states.every((s) => STATES.includes(s as SweepRunState));
    if (!ok) {
      clearSweep(storage);
      return null;
    }
    return { tag: j.tag as string, slots: j.slots as number, jobs: j.jobs as SweepRunJob[], states: states as SweepRunState[] };
  } catch {
    clearSweep(storage);
    return null;
  }
}

/** What a kept sweep left undone, or null when nothing is left (every run done, failed or stopped by Stop). */
export function interruptedSweep(s: SavedSweep): InterruptedSweep | null {
  const at = (st: SweepRunState) => s.jobs.filter((_, i) => s.states[i] === st);
  const cut = at('running');
  const queued = at('queued');
  if (cut.length === 0 && queued.length === 0) return null;
  const invalid: string[] = [];
  const check = (jobs: SweepRunJob[]) =>
    jobs.filter((job) => {
      const r = parseRunConfig(job.config);
      if (!r.ok) invalid.push(`${job.name}: ${r.messages[0]}`);
      return r.ok;
    });
  return { tag: s.tag, slots: s.slots, total: s.jobs.length, done: at('done').length, failed: at('failed').length, cut: check(cut), queued: check(queued), invalid };
}

/** The sentence the Sweep tab (and the page's notice) says about an interrupted sweep. */
export function interruptedText(x: InterruptedSweep): string {
  const n = (k: number, what: string) => `${k} ${what}${k === 1 ? '' : 's'}`;
  const parts = [`${x.done} of ${x.total} runs had finished${x.failed ? ` (${x.failed} failed)` : ''}`];
  if (x.cut.length) parts.push(`${n(x.cut.length, 'run')} ${x.cut.length === 1 ? 'was' : 'were'} cut off mid-run (saved in Runs up to their last iteration, listed as interrupted)`);
  if (x.queued.length) parts.push(`${n(x.queued.length, 'run')} had not started`);
  if (x.invalid.length) parts.push(`${n(x.invalid.length, 'run')} can no longer be trained (${x.invalid.join('; ')})`);
  return `The page was reloaded while the sweep “${x.tag}” ran: ${parts.join('; ')}.`;
}
