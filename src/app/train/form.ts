/**
 * The config form of the training slice: the preset, the draft the person edits, and what a
 * draft change means for a run in progress (applied live, or waiting for a confirmed restart).
 */
import type { StoreApi } from 'zustand';
import type { Store } from '../storeTypes.ts';
import type { TrainSlice } from './trainState.ts';
import { changedFields, draftFromHash, draftFromPreset, isLiveChange, loadPresets, parseTrainHash, setField, validate } from './config.ts';
import { getPath, type DraftConfig } from './fields.ts';
import { adoptRewardCode } from '../rewardLab/rewardLab.ts';
import { keepLocked, lockedEditNotice, NO_CLASSROOM } from './classroom.ts';

const rawPresets = Object.values(import.meta.glob('../../../presets/*.json', { eager: true, import: 'default' }));
export const loaded = loadPresets(rawPresets);

/** Form fields whose change needs a restart (draft vs running, non-live). */
export function restartFields(running: DraftConfig, draft: DraftConfig): string[] {
  return changedFields(running, draft).filter((p) => !isLiveChange(running, draft, p));
}

type FormPart = Pick<TrainSlice, 'presets' | 'presetId' | 'base' | 'draft' | 'validation' | 'openTrain' | 'choosePreset' | 'editField' | 'revertDraft' | 'adoptBackend'>;

/** Whether the person picked the backend (in the form or by a link): the detected one then no longer replaces it. One per store. */
interface BackendChoice {
  byPerson: boolean;
}

/**
 * Opens the Train view on a `#view=train&…` link: its preset and overrides (locked fields keep
 * their values), its reward code adopted, problems and a changed reward time limit said out loud.
 */
function openTrainAct(set: StoreApi<Store>['setState'], get: StoreApi<Store>['getState'], backend: BackendChoice): FormPart['openTrain'] {
  return (hash, locks = NO_CLASSROOM) => {
    const detection = get().backend;
    const detected = detection.status === 'ready' ? detection.report.chosen : get().draft.backend;
    const parsed = parseTrainHash(hash);
    backend.byPerson = parsed.backend !== null;
    const fromHash = draftFromHash(parsed, get().presets, detected);
    for (const p of [...loaded.problems, ...fromHash.problems]) get().notify('warning', `Ignored part of the link: ${p}.`);
    // An edit of a locked value in the address is refused: the field keeps showing what it applies.
    const { presetId, base, draft } = get();
    const kept = keepLocked(locks, { presetId, base, draft }, fromHash);
    if (kept.refused.length) get().notify('warning', lockedEditNotice(kept.refused));
    const r = kept.setup;
    // A limit that guards the page (how long a reward term may run) changed by a link is said out loud.
    const limit = r.draft.reward?.callTimeoutMs;
    if (limit !== undefined && limit !== r.base.reward?.callTimeoutMs) get().notify('info', `This link sets the reward term time limit to ${limit.toLocaleString('en-US')} ms per call (the preset's is ${r.base.reward?.callTimeoutMs ?? 100} ms): a slow term may then stall each iteration that long.`);
    // A preset that carries reward code (the hackable ones), opened from a link or a reload,
    // scores with it, as when it is picked from the list; a preset without code keeps the
    // code the person applied (the lab remembers it across reloads).
    const code = r.draft.reward?.code ?? '';
    if (code.trim() !== '') adoptRewardCode(code);
    const { running } = get();
    set({ view: 'train', presetId: r.presetId, base: r.base, draft: r.draft, validation: validate(r.draft), pendingRestart: running ? restartFields(running, r.draft) : [] });
  };
}

/**
 * `applyLive(running, paths)`: a valid edit changed fields that apply live to the run in
 * progress (`running` already holds them): the run part sends them to the trainer and notes them.
 */
export function formSlice(set: StoreApi<Store>['setState'], get: StoreApi<Store>['getState'], applyLive: (running: DraftConfig, paths: string[]) => void): FormPart {
  const initial = draftFromPreset(loaded.presets[0], 'auto');
  const backend: BackendChoice = { byPerson: false };
  return {
    presets: loaded.presets,
    presetId: loaded.presets[0].id,
    base: initial,
    draft: initial,
    validation: validate(initial),

    openTrain: openTrainAct(set, get, backend),

    choosePreset: (id) => {
      const p = get().presets.find((x) => x.id === id);
      if (!p) return;
      const base = draftFromPreset(p, get().draft.backend);
      adoptRewardCode(base.reward?.code ?? '');
      const { running, armed, lessons } = get();
      // A lesson step's check watches the setup it made: a preset picked by hand leaves the step.
      const lesson = armed ? lessons.find((l) => l.id === armed.lessonId) : undefined;
      if (armed && lesson) get().notify('info', `Left lesson "${lesson.title}", step ${armed.step + 1}: its check stops watching once another preset is picked. Open the lesson again from Lessons to go on.`);
      set({ presetId: id, base, draft: base, validation: validate(base), pendingRestart: running ? restartFields(running, base) : [], armed: null });
    },

    editField: (path, value) => {
      if (path === 'backend') backend.byPerson = true;
      const draft = setField(get().draft, path, value);
      const validation = validate(draft);
      const { running } = get();
      let nextRunning = running;
      if (running && validation.ok) {
        // Apply what can change live; the rest waits for a confirmed restart.
        const live = changedFields(running, draft).filter((p) => isLiveChange(running, draft, p));
        if (live.length) {
          let r = running;
          for (const p of live) r = setField(r, p, getPath(draft, p));
          nextRunning = r;
          applyLive(r, live);
        }
      }
      set({ draft, validation, running: nextRunning, pendingRestart: nextRunning ? restartFields(nextRunning, draft) : [] });
    },

    revertDraft: () => {
      const { running, presets } = get();
      if (!running) return;
      // Keeping the run after picking another preset: the list highlights what is running again.
      const p = presets.find((x) => x.id === running.id);
      set({ draft: running, validation: validate(running), pendingRestart: [], ...(p ? { presetId: p.id, base: draftFromPreset(p, running.backend) } : {}) });
    },

    adoptBackend: (kind) => {
      if (backend.byPerson) return;
      const { base, draft, running } = get();
      if (draft.backend === kind) return;
      const d = { ...draft, backend: kind };
      set({ base: { ...base, backend: kind }, draft: d, validation: validate(d), pendingRestart: running ? restartFields(running, d) : [] });
    },
  };
}
