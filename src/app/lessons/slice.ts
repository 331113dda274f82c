/**
 * The lessons slice of the app store: the lesson list, the open lesson and step, the step whose
 * setup was applied in this page (its check reads the live training metrics), progress (kept in
 * localStorage) and the classroom restrictions of the link that opened the page.
 *
 * Setting a step up puts its setup into the Train view's form, as a link would, and drops the
 * run in the training worker; it never starts training: the student presses Start.
 */
import type { StateCreator } from 'zustand';
import type { Store } from '../storeTypes.ts';
import type { LessonsSlice } from './lessonsState.ts';
import { validate } from '../train/config.ts';
import { evaluateCheck } from './check.ts';
import { NO_CLASSROOM } from '../train/classroom.ts';
import { LESSONS } from './index.ts';
import { forgetLesson, markDone, readProgress, writeProgress, type Progress } from './progress.ts';
import { isMapCheck, type Lesson } from './schema.ts';
import { evaluateMapCheck } from './mapCheck.ts';
import { draftForSetup } from './setup.ts';
import { adoptRewardCode } from '../rewardLab/rewardLab.ts';


const storage = (): Storage | null => (typeof localStorage === 'undefined' ? null : localStorage);


function firstOpenStep(l: Lesson, p: Progress): number {
  const done = p.done[l.id] ?? [];
  const i = l.steps.findIndex((_, k) => !done.includes(k));
  return i < 0 ? 0 : i;
}

type SetStore = Parameters<StateCreator<Store, [], [], LessonsSlice>>[0];
type GetStore = () => Store;
/** Stores the lesson progress in the store and in localStorage. */
type SaveProgress = (p: Progress) => void;

/** Opening a lesson (at its step, or where the person left it) and moving between its steps. */
function navigationActs(set: SetStore, get: GetStore, save: SaveProgress): Pick<LessonsSlice, 'openLesson' | 'goStep'> {
  return {
    openLesson: (id, step = null) => {
      const { lessons, lessonProgress, notify } = get();
      if (id === null) {
        set({ view: 'lessons', lessonId: null });
        return;
      }
      const l = lessons.find((x) => x.id === id);
      if (!l) {
        notify('warning', `There is no lesson "${id.slice(0, 60)}"; showing the list of lessons.`);
        set({ view: 'lessons', lessonId: null });
        return;
      }
      let s = step ?? (lessonProgress.current?.lesson === id ? lessonProgress.current.step : firstOpenStep(l, lessonProgress));
      if (s >= l.steps.length) {
        notify('warning', `The lesson "${l.title}" has ${l.steps.length} steps; showing step ${l.steps.length}.`);
        s = l.steps.length - 1;
      }
      set({ view: 'lessons', lessonId: id, lessonStep: s });
      save({ ...get().lessonProgress, current: { lesson: id, step: s } });
    },

    goStep: (step) => {
      const { lessonId, lessons } = get();
      const l = lessons.find((x) => x.id === lessonId);
      if (!l) return;
      const s = Math.max(0, Math.min(l.steps.length - 1, step));
      set({ lessonStep: s });
      save({ ...get().lessonProgress, current: { lesson: l.id, step: s } });
    },
  };
}

/**
 * Set up: a map step arms the Studio's map check; any other step puts its setup into the Train
 * form (a backend the person chose stays), drops the run and arms the step's check.
 */
function setUpStepAct(set: SetStore, get: GetStore): LessonsSlice['setUpStep'] {
  return () => {
    const { lessonId, lessonStep, lessons, presets, backend, notify } = get();
    const l = lessons.find((x) => x.id === lessonId);
    if (!l) return;
    const step = l.steps[lessonStep];
    // A step about the map itself is done in the Studio: it watches the map as it is painted.
    if (isMapCheck(step.check)) {
      set({ armed: { lessonId: l.id, step: lessonStep }, view: 'studio', studioTab: 'map' });
      return;
    }
    const detected = backend.status === 'ready' ? backend.report.chosen : get().draft.backend;
    // A backend the person chose (or a ?backend= link) stays; the lesson sets the rest.
    const r = draftForSetup(step.setup, presets, get().draft.backend === 'auto' ? detected : get().draft.backend, get().studioMap);
    for (const p of r.problems) notify('warning', `Lesson "${l.title}", step ${lessonStep + 1}: ${p}.`);
    get().resetRun();
    adoptRewardCode(r.draft.reward?.code ?? '');
    set({ presetId: r.presetId, base: { ...r.base, backend: r.draft.backend }, draft: r.draft, validation: validate(r.draft), pendingRestart: [], armed: { lessonId: l.id, step: lessonStep }, view: 'train', tab: 'dashboard' });
  };
}

/** The armed step's check, on the training metrics (checkArmed) or on the Studio's map (checkArmedMap): done once it passes. */
function checkActs(get: GetStore, save: SaveProgress): Pick<LessonsSlice, 'checkArmed' | 'checkArmedMap'> {
  return {
    checkArmed: () => {
      const { armed, lessons, history, lessonProgress } = get();
      if (!armed || history.length === 0) return;
      const l = lessons.find((x) => x.id === armed.lessonId);
      const step = l?.steps[armed.step];
      if (!l || !step || isMapCheck(step.check) || (lessonProgress.done[l.id] ?? []).includes(armed.step)) return;
      if (evaluateCheck(step.check, history).state === 'done') save(markDone(lessonProgress, l.id, armed.step));
    },

    checkArmedMap: () => {
      const { armed, lessons, lessonProgress, studioMap, studioVerdict } = get();
      const l = lessons.find((x) => x.id === armed?.lessonId);
      const step = armed && l?.steps[armed.step];
      if (!l || !step || !isMapCheck(step.check) || (lessonProgress.done[l.id] ?? []).includes(armed.step)) return;
      if (evaluateMapCheck(step.check, studioMap, studioVerdict).state === 'done') save(markDone(lessonProgress, l.id, armed.step));
    },
  };
}

export const lessonsSlice: StateCreator<Store, [], [], LessonsSlice> = (set, get) => {
  const saved = readProgress(storage());
  // Reported once the store exists (notices live in another slice).
  const problems = [...LESSONS.problems, ...(saved.problem ? [saved.problem] : [])];
  if (problems.length) queueMicrotask(() => problems.forEach((p) => get().notify('warning', `Lessons: ${p}.`)));
  const save = (p: Progress) => {
    set({ lessonProgress: p });
    writeProgress(storage(), p);
  };
  const current = saved.progress.current;
  const start = current && LESSONS.lessons.some((l) => l.id === current.lesson) ? current : null;

  return {
    lessons: LESSONS.lessons,
    lessonProgress: saved.progress,
    lessonId: start?.lesson ?? null,
    lessonStep: start?.step ?? 0,
    armed: null,
    classroom: NO_CLASSROOM,

    ...navigationActs(set, get, save),
    setUpStep: setUpStepAct(set, get),
    ...checkActs(get, save),

    resetLesson: (id) => {
      const p = forgetLesson(get().lessonProgress, id);
      save(get().lessonProgress.current?.lesson === id ? { ...p, current: { lesson: id, step: 0 } } : p);
      if (get().lessonId === id) set({ lessonStep: 0 });
      if (get().armed?.lessonId === id) set({ armed: null });
    },

    setClassroom: (c) => set({ classroom: c }),
  };
};

