/**
 * The store's shape: every slice's state and actions. Types only, importing no slice
 * implementation, so each slice can type its creator with the whole store without an import
 * cycle (store.ts composes the implementations).
 */
import type { BackendKind, BackendReport } from '../runtime/backend.ts';
import type { EnvKwargs } from '../core/envs/registry.ts';
import type { Env, EnvSpec } from '../core/envs/types.ts';
import type { Actor, Episode } from './state/episode.ts';
import type { RememberedChoice } from './state/engineCache.ts';
import type { TrainSlice } from './train/trainState.ts';
import type { RunsSlice } from './runs/runsState.ts';
import type { LessonsSlice } from './lessons/lessonsState.ts';
import type { StudioSlice } from './studio/studioState.ts';

export interface Notice {
  id: number;
  level: 'info' | 'warning' | 'error';
  text: string;
}

export interface NoticeSlice {
  notices: Notice[];
  notify(level: Notice['level'], text: string): void;
  dismiss(id: number): void;
}

export type BackendState =
  | { status: 'detecting' }
  | {
      status: 'ready';
      report: BackendReport;
      forced: BackendKind | null;
      /** WASM threads forced by `?threads=N`, else null (chosen per run: learnerThreads). */
      threads: number | null;
    }
  | { status: 'failed'; message: string };

/** The measured backend choice for the model of the current (or last) run. */
export interface EngineChoiceView extends RememberedChoice {
  /** Device + model key it is remembered under. */
  key: string;
  /** Recalled from an earlier measurement rather than measured for this start. */
  cached: boolean;
}

export interface BackendSlice {
  backend: BackendState;
  /** Null until a run with backend 'auto' starts (or when the backend is forced). */
  engineChoice: EngineChoiceView | null;
  /** Backends are being timed (a start waits for it). */
  measuringBackends: boolean;
  /** Runs detection once; `query` is `location.search` (honours `?backend=wasm|webgpu`). */
  detectBackend(query: string): Promise<void>;
}

export interface CatalogEntry {
  id: string;
  /** Null when making the env with its defaults failed (a broken registration). */
  spec: EnvSpec | null;
  error?: string;
}

export interface ViewerSlice {
  catalog: CatalogEntry[];
  envId: string | null;
  kwargs: EnvKwargs;
  seed: number;
  /** The live env instance (mutable; the episode record is the source of truth for the screen). */
  env: Env | null;
  episode: Episode | null;
  /** Expert autoplay is running. */
  playing: boolean;
  /** Expert autoplay speed, steps per second. */
  playRate: number;
  /** Makes the env (falling back to the default with a notice) and starts an episode. */
  open(req: { envId: string | null; seed?: number; kwargs?: EnvKwargs }): void;
  setSeed(seed: number): void;
  /** Restarts the current episode with the same seed. */
  reset(): void;
  /** Restarts with a fresh random seed. */
  newSeed(): void;
  /** Applies an action; returns false when it could not be applied (over, or the env threw). */
  act(action: unknown, by?: Actor): boolean;
  /** One expert action; returns false when the expert has none or the episode is over. */
  expertStep(): boolean;
  /** Undoes the last step (replays from the seed). */
  stepBack(): void;
  /** Goes back to the moment after step `n` (0 = just after reset), replaying from the seed. */
  rewindTo(n: number): void;
  setPlaying(on: boolean): void;
  setPlayRate(rate: number): void;
}

export type ViewId = 'environments' | 'studio' | 'train' | 'runs' | 'lessons';

export interface ViewSlice {
  /** The view in the header nav that is showing. */
  view: ViewId;
  setView(view: ViewId): void;
}

export type Store = NoticeSlice & BackendSlice & ViewerSlice & ViewSlice & TrainSlice & RunsSlice & LessonsSlice & StudioSlice;

