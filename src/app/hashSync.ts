/**
 * Keeps the URL hash and the viewer in step: the hash opens the view at start and when a
 * person edits it; the view writes the hash back (replaceState, so Back leaves the app rather
 * than walking through every seed tried).
 */
import { formatTrainHash, isTrainHash } from './train/config.ts';
import { formatHash, parseHash } from './state/hash.ts';
import { useStore } from './store.ts';
import { formatStudioHash, isStudioHash } from './studio/studioHash.ts';
import { CODE_LINK_PREFIX, isTrainCodeLink } from './studio/code/link.ts';
import { commonLocks, formatClassroom, formatLessonHash, isLessonsHash, NO_CLASSROOM, parseClassroomLink } from './train/classroom.ts';
import { landing, markVisited } from './landing.ts';

/** True when the hash names the Runs view. */
const isRunsHash = (hash: string) => /(^#?|&)view=runs(&|$)/.test(hash);

/**
 * Applies a hash. `edit`: a person edited the address of an open page, so what the page's link
 * locked (and the new hash still locks) keeps its value; the first load sets what it locks.
 */
function applyHash(full: string, edit = false): void {
  // The classroom part (hide/lock, lesson, step) first: it applies to every view.
  const link = parseClassroomLink(full);
  const hash = link.rest;
  for (const p of link.problems) useStore.getState().notify('warning', `Ignored part of the link: ${p}.`);
  const locks = edit ? commonLocks(useStore.getState().classroom, link.classroom) : NO_CLASSROOM;
  useStore.getState().setClassroom(link.classroom);
  if (isLessonsHash(full)) {
    useStore.getState().openLesson(link.lesson, link.step);
    return;
  }
  if (isStudioHash(hash)) {
    useStore.getState().openStudio(hash);
    return;
  }
  if (isRunsHash(hash)) {
    useStore.getState().setView('runs');
    return;
  }
  // A Train link on a code env opens its module in the Code tab (read-only under the banner):
  // checking the config would load the module first.
  if (isTrainCodeLink(hash)) {
    useStore.getState().openStudio(CODE_LINK_PREFIX, hash);
    useStore.getState().notify('info', 'This training link carries env code: review it here, press Run, then "Train on this env" with the algorithm you want.');
    return;
  }
  // `#view=train&...` opens the training view; anything else is the env viewer's.
  if (isTrainHash(hash)) {
    useStore.getState().openTrain(hash, locks);
    return;
  }
  useStore.getState().setView('environments');
  const { state, problems } = parseHash(hash);
  const { notify, open } = useStore.getState();
  for (const p of problems) notify('warning', `Ignored part of the link: ${p}.`);
  open({ envId: state.env, seed: state.seed ?? 0, kwargs: state.kwargs });
}

function currentHash(): string | null {
  const s = useStore.getState();
  // A classroom link's hidden and locked controls stay in the link through every view and reload.
  const classroom = formatClassroom(s.classroom);
  if (s.view === 'runs') return '#view=runs' + classroom;
  if (s.view === 'studio') return formatStudioHash(s.studioTab, s.studioMap) + classroom;
  if (s.view === 'lessons') return formatLessonHash(s.lessonId, s.lessonId ? s.lessonStep : null, s.classroom);
  // The training link follows the form while it is valid, so a copied link reproduces it.
  if (s.view === 'train') return formatTrainHash(s.presetId, s.base, s.validation.ok ? s.draft : (s.running ?? s.base)) + classroom;
  const { envId, seed, kwargs } = s;
  return envId ? formatHash({ env: envId, seed, kwargs }) + classroom : null;
}

/** Starts syncing; returns a function that stops it. */
export function startHashSync(): () => void {
  const storage = typeof localStorage === 'undefined' ? null : localStorage;
  // A first visit without a hash opens the start page (Lessons, no lesson open); everything
  // else opens what the hash names, as a link always did.
  if (landing(window.location.hash, storage) === 'start') useStore.getState().openLesson(null);
  else applyHash(window.location.hash);
  markVisited(storage);
  const write = () => {
    const h = currentHash();
    if (h && h !== window.location.hash) history.replaceState(null, '', h);
  };
  write();
  const unsubscribe = useStore.subscribe((s, prev) => {
    if (s.view !== prev.view && s.view === 'environments' && !s.envId) s.open({ envId: null, seed: 0 });
    if (s.view !== prev.view || s.draft !== prev.draft || s.envId !== prev.envId || s.seed !== prev.seed || s.kwargs !== prev.kwargs || s.lessonId !== prev.lessonId || s.lessonStep !== prev.lessonStep || s.classroom !== prev.classroom || s.studioMap !== prev.studioMap || s.studioTab !== prev.studioTab) write();
  });
  const onHashChange = () => {
    if (window.location.hash === currentHash()) return;
    const locked = useStore.getState().classroom.lock.length > 0;
    applyHash(window.location.hash, true);
    // A refused edit of a locked value may leave the form as it was (nothing for the store
    // subscription to write): the address goes back to what the page applies.
    if (locked) write();
  };
  window.addEventListener('hashchange', onHashChange);
  return () => {
    unsubscribe();
    window.removeEventListener('hashchange', onHashChange);
  };
}
