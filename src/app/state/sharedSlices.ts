/**
 * The slices every view shares: user-facing notices, the backend report for the status bar,
 * the env viewer and the view in the header nav. The app's store (../store.ts) composes them
 * with each view's own slice.
 */
import type { StateCreator } from 'zustand';
import { detectBackend, type BackendKind } from '../../runtime/backend.ts';
import { envIds, makeEnv } from '../../core/envs/index.ts';
import type { Env } from '../../core/envs/types.ts';
import { advance, isOver, rewind, startEpisode, type Episode } from './episode.ts';
import type { BackendSlice, CatalogEntry, NoticeSlice, Store, ViewerSlice, ViewSlice } from '../storeTypes.ts';


// ---------------------------------------------------------------- notices



let nextNoticeId = 1;

/** Most characters a notice shows: a notice quoting a 100 KB link pushed its close button 925,000 px away. */
export const NOTICE_MAX_CHARS = 200;

/** The first NOTICE_MAX_CHARS characters of a message, then '…'. */
export function capNotice(text: string): string {
  return text.length > NOTICE_MAX_CHARS ? `${text.slice(0, NOTICE_MAX_CHARS)}…` : text;
}

export const noticeSlice: StateCreator<Store, [], [], NoticeSlice> = (set) => ({
  notices: [],
  notify: (level, raw) =>
    set((s) => {
      const text = capNotice(raw);
      return {
      // The same message twice (e.g. a repeated bad key press) is shown once.
        notices: s.notices.some((n) => n.text === text) ? s.notices : [...s.notices, { id: nextNoticeId++, level, text }].slice(-4),
      };
    }),
  dismiss: (id) => set((s) => ({ notices: s.notices.filter((n) => n.id !== id) })),
});

// ---------------------------------------------------------------- backend




/** Most WASM threads `?threads=N` may ask for (browsers cap a page's workers well above this). */
const MAX_FORCED_THREADS = 16;

export const backendSlice: StateCreator<Store, [], [], BackendSlice> = (set, get) => ({
  backend: { status: 'detecting' },
  engineChoice: null,
  measuringBackends: false,
  detectBackend: async (query) => {
    const raw = new URLSearchParams(query).get('backend');
    let forced: BackendKind | null = null;
    if (raw === 'wasm' || raw === 'webgpu') forced = raw;
    else if (raw !== null && raw !== 'auto') get().notify('warning', `Unknown ?backend=${raw.slice(0, 40)}: expected auto, wasm or webgpu. Choosing by measurement.`);
    const rawThreads = new URLSearchParams(query).get('threads');
    let threads: number | null = null;
    if (rawThreads !== null) {
      const n = Number(rawThreads);
      if (Number.isInteger(n) && n >= 1 && n <= MAX_FORCED_THREADS) threads = n;
      else get().notify('warning', `Ignored ?threads=${rawThreads.slice(0, 40)}: expected a whole number from 1 to ${MAX_FORCED_THREADS}.`);
    }
    try {
      const report = await detectBackend(forced ? { force: forced } : {});
      if (forced === 'webgpu' && report.chosen !== 'webgpu') {
        get().notify('warning', `WebGPU was asked for but is unavailable (${report.webgpu.reason ?? 'no adapter'}); using WASM.`);
      }
      if (threads !== null && !report.wasm.crossOriginIsolated && threads > 1) {
        get().notify('warning', `?threads=${threads} needs a cross-origin isolated page (SharedArrayBuffer); WASM runs one thread here.`);
        threads = 1;
      }
      set({ backend: { status: 'ready', report: threads === null ? report : { ...report, wasm: { ...report.wasm, threads } }, forced, threads } });
      get().adoptBackend(report.chosen);
    } catch (e) {
      set({ backend: { status: 'failed', message: (e as Error).message } });
    }
  },
});

// ---------------------------------------------------------------- env viewer


/** Every registered env with its spec; a broken one is listed with its error, never thrown. */
export function loadCatalog(): CatalogEntry[] {
  return envIds().map((id) => {
    try {
      return { id, spec: makeEnv(id).spec };
    } catch (e) {
      return { id, spec: null, error: (e as Error).message };
    }
  });
}

/** The env a first-time visitor sees. */
export const PREFERRED_DEFAULT_ENV = 'grid/empty-5x5';

export function defaultEnvId(catalog: readonly CatalogEntry[]): string | null {
  const ok = catalog.filter((c) => c.spec);
  return (ok.find((c) => c.id === PREFERRED_DEFAULT_ENV) ?? ok[0])?.id ?? null;
}

/** Expert autoplay speed bounds, steps per second. */
export const PLAY_RATE = { min: 0.5, max: 12, default: 3 } as const;


type Notify = Store['notify'];

/** Starts an episode on `env` with `seed`; reports and returns null if the env throws. */
function begin(env: Env, seed: number, notify: Notify): Episode | null {
  try {
    return startEpisode(env, seed);
  } catch (e) {
    notify('error', `${env.spec.id}: reset with seed ${seed} failed: ${(e as Error).message}`);
    return null;
  }
}

/** The env to open: the one asked for if the catalog has it, else (with a warning) the default. */
function knownEnvId(catalog: readonly CatalogEntry[], envId: string | null | undefined, notify: Notify): string | null {
  const fallback = defaultEnvId(catalog);
  const id = envId ?? fallback;
  if (id !== null && !catalog.some((c) => c.id === id)) {
    notify('warning', `There is no environment "${id}"${fallback ? `; showing ${fallback} instead` : ''}.`);
    return fallback;
  }
  return id;
}

/** Makes `id` with `kwargs`, or (reported) with its defaults when those fail; env null when neither works. */
function makeWithFallback(id: string, kwargs: Record<string, unknown>, notify: Notify): { env: Env | null; usedKwargs: Record<string, unknown> } {
  try {
    return { env: makeEnv(id, kwargs), usedKwargs: kwargs };
  } catch (e) {
    notify('error', `Could not make ${id} with ${JSON.stringify(kwargs)}: ${(e as Error).message}`);
    try {
      return { env: makeEnv(id), usedKwargs: {} };
    } catch (e2) {
      notify('error', `Could not make ${id}: ${(e2 as Error).message}`);
      return { env: null, usedKwargs: {} };
    }
  }
}

/** The expert's action in the episode in view, or null (reported) when it fails or has no move. */
function expertMove(env: Env, episode: Episode, notify: Notify): { action: unknown } | null {
  let action: unknown;
  try {
    action = env.expertAction();
  } catch (e) {
    notify('error', `${env.spec.id} seed ${episode.seed}: the expert failed: ${(e as Error).message}`);
    return null;
  }
  if (action === null || action === undefined) {
    notify('info', `The expert has no move here (${env.spec.id}, seed ${episode.seed}, step ${episode.steps.length}).`);
    return null;
  }
  return { action };
}

/** The viewer before any env is open: the catalog built, seed 0, the default play rate. */
function viewerStart(): Pick<ViewerSlice, 'catalog' | 'envId' | 'kwargs' | 'seed' | 'env' | 'episode' | 'playing' | 'playRate'> {
  return { catalog: loadCatalog(), envId: null, kwargs: {}, seed: 0, env: null, episode: null, playing: false, playRate: PLAY_RATE.default };
}

export const viewerSlice: StateCreator<Store, [], [], ViewerSlice> = (set, get) => ({
  ...viewerStart(),

  open: ({ envId, seed, kwargs = {} }) => {
    const { catalog, notify } = get();
    const id = knownEnvId(catalog, envId, notify);
    const { env, usedKwargs } = id !== null ? makeWithFallback(id, kwargs, notify) : { env: null, usedKwargs: kwargs };
    const s = seed ?? get().seed;
    set({ envId: env ? id : null, kwargs: usedKwargs, seed: s, env, episode: env ? begin(env, s, notify) : null, playing: false });
  },

  setSeed: (seed) => {
    const { env, notify } = get();
    set({ seed, episode: env ? begin(env, seed, notify) : null, playing: false });
  },

  reset: () => get().setSeed(get().seed),

  // Short seeds are easier to read aloud in a classroom; 1e5 of them is plenty of variety.
  newSeed: () => {
    const old = get().seed;
    let s = old;
    while (s === old) s = Math.floor(Math.random() * 100_000);
    get().setSeed(s);
  },

  act: (action, by = 'you') => {
    const { env, episode, notify } = get();
    if (!env || !episode || isOver(episode)) return false;
    try {
      set({ episode: advance(env, episode, action, by) });
      return true;
    } catch (e) {
      notify(
        'error',
        `${env.spec.id} seed ${episode.seed}, step ${episode.steps.length + 1}: the env threw on action ` +
          `${JSON.stringify(action)}: ${(e as Error).message}. The episode so far is kept.`,
      );
      set({ playing: false });
      return false;
    }
  },

  expertStep: () => {
    const { env, episode, notify } = get();
    const move = env && episode && !isOver(episode) ? expertMove(env, episode, notify) : null;
    if (!move) {
      set({ playing: false });
      return false;
    }
    return get().act(move.action, 'expert');
  },

  stepBack: () => {
    const { episode } = get();
    if (episode && episode.steps.length > 0) get().rewindTo(episode.steps.length - 1);
  },

  rewindTo: (n) => {
    const { env, episode, notify } = get();
    if (!env || !episode || n >= episode.steps.length) return;
    try {
      set({ episode: rewind(env, episode, n), playing: false });
    } catch (e) {
      notify('error', `${env.spec.id}: replaying seed ${episode.seed} failed: ${(e as Error).message}`);
    }
  },

  setPlaying: (on) => {
    const { episode } = get();
    set({ playing: on && !!episode && !isOver(episode) });
  },

  setPlayRate: (rate) => set({ playRate: Math.min(PLAY_RATE.max, Math.max(PLAY_RATE.min, rate)) }),
});

// ---------------------------------------------------------------- views



export const viewSlice: StateCreator<Store, [], [], ViewSlice> = (set) => ({
  view: 'environments',
  setView: (view) => set({ view }),
});
