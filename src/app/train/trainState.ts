/** The training slice's state and actions, apart from their implementation (slice.ts), so the store's type imports no slice. */
import type { IterationView, StartInfo, StartPhase, WarmStartProgress } from '../../runtime/trainWorker/types.ts';
import { type Preset, type Validation } from './config.ts';
import { type DraftConfig } from './fields.ts';
import type { WarmEta } from './warmEta.ts';
import type { Classroom } from './classroom.ts';

export type RunStatus = 'idle' | 'starting' | 'running' | 'pausing' | 'paused' | 'stepping' | 'finished' | 'error';

export type TrainTab = 'dashboard' | 'groups' | 'trajectories' | 'sweep';

/** The Train view's tabs, in order, with the names a person (and a lesson's text) reads on them. */
export const TRAIN_TABS: readonly { id: TrainTab; title: string }[] = [
  { id: 'dashboard', title: 'Dashboard' },
  { id: 'groups', title: 'Groups' },
  { id: 'trajectories', title: 'Trajectories' },
  { id: 'sweep', title: 'Sweep' },
];

import type { MetricPoint } from '../ui/plot.ts';
export type { MetricPoint };

export interface TrainSlice {
  presets: Preset[];
  presetId: string;
  /** The chosen preset as a draft (what the URL's overrides are relative to). */
  base: DraftConfig;
  /** The form's contents (may be invalid). */
  draft: DraftConfig;
  validation: Validation;
  /** The config of the trainer in the worker; null when there is none. */
  running: DraftConfig | null;
  /** Form fields whose change needs a restart (draft vs running, non-live); empty when none. */
  pendingRestart: string[];
  /** Settings changed live during the current run, each with the iteration (0-based) it applied from: the Outcome badge names them as a fall's likely cause. */
  liveChanges: { iteration: number; path: string }[];
  status: RunStatus;
  error: string | null;
  info: StartInfo | null;
  /**
   * What a start is doing until its first iteration (the charts show it with its elapsed time):
   * loading the engine (worker, backend timing, ONNX runtime), building the sessions, the first
   * rollout (with its episodes done of `total` where the worker reports them), the first update
   * (once every episode of that rollout was played). `since`: page time (ms) it began. Null otherwise.
   */
  phase: { name: StartPhase | 'rollout' | 'update'; since: number; done?: number; total?: number } | null;
  /** Imitation warm start in progress (tool envs), else null. */
  warmStart: WarmStartProgress | null;
  /** The warm start waits before its next step (Pause during the warm start). */
  warmPaused: boolean;
  /** Every warm-start report of the current run (the warm-start chart), with its page time (ms). */
  warmHistory: (WarmStartProgress & { t: number })[];
  /** The warm start's time left as shown (warmEta.ts: from measured step times), null until 10 are measured. */
  warmEta: WarmEta | null;
  /** Metrics per iteration, oldest first (a new array at each flush). */
  history: MetricPoint[];
  latest: IterationView | null;
  /** Iterations per second over the recent iterations (wall clock, main thread). */
  itPerS: number;
  /** Iterations the NaN guard skipped an update in. */
  skippedUpdates: number;
  tab: TrainTab;
  /** Draw a live rollout of each new batch while training (grid runs); off = no drawing at all. */
  renderLive: boolean;
  /** The batch the trajectory inspector shows (pinned, so training on does not move it) and the episode in it. */
  inspect: { batch: IterationView; index: number } | null;
  /** Id of the saved record of the current run (Runs view), null before its first iteration or without storage. */
  recordId: string | null;

  /**
   * Opens the view from a `#view=train&...` hash. `locks`: controls locked before this hash edit
   * (a classroom link) that it keeps: their values stay, and what was refused is said in a notice.
   */
  openTrain(hash: string, locks?: Classroom): void;
  choosePreset(id: string): void;
  editField(path: string, value: unknown): void;
  /** Discards edits that would restart the run. */
  revertDraft(): void;
  /** Restarts with the draft (after the person confirmed). */
  applyRestart(): Promise<void>;
  startRun(): Promise<void>;
  pauseRun(): void;
  stepOnce(): Promise<void>;
  /**
   * Continues a saved run (interrupted, stopped, …) from its checkpoint in this tab: its config
   * and checkpoint go to a fresh training worker, and the same record trains on.
   */
  resumeSavedRun(id: string): Promise<void>;
  /** Drops the run and its charts (the settings stay). */
  resetRun(): void;
  /**
   * The reward lab's Apply: the editor's code scores the running run from its next iteration as a
   * new version (a refused module leaves the run as it was and shows why), or, without a run,
   * becomes the code the next run starts with.
   */
  applyRewardCode(): Promise<void>;
  setTab(tab: TrainTab): void;
  setRenderLive(on: boolean): void;
  /** Opens episode `index` of the latest batch (or of the pinned one when `pinned`) in the inspector. */
  inspectEpisode(index: number, pinned?: boolean): void;
  /**
   * Forgets the remembered backend choice for the form's model and times the backends again now,
   * in a worker of its own (not while a run is active: it would skew both).
   */
  measureAgain(): Promise<void>;
  /** Pauses or resumes a warm start in progress (between two of its steps). */
  toggleWarmPause(): void;
  /** The backend detection finished: adopt its choice unless the person picked one. */
  adoptBackend(kind: DraftConfig['backend']): void;
}
