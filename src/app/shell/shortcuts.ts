/**
 * Keyboard routes to the main actions, from any view, so a keyboard user reaches Start in one key:
 * - Alt+S (Option+S on a Mac) opens Train and puts the focus on its run button (Start, or
 *   Pause while training): one key to Start of the current setup from anywhere.
 * - Alt+L goes back to the lesson whose step is set up (else to Lessons) and focuses its
 *   main action: one key back from Pause.
 * Both carry a modifier (WCAG 2.1.4: no single-character shortcut) and are matched by
 * `code`, not `key`, because Option+S types "ß" on a Mac. Focus in a text field or a code
 * editor keeps its keys: the shortcuts act only outside them. No other handler in the app uses
 * Alt (the grid's and the map editor's keys skip Alt), so nothing clashes.
 * The focus helpers render first (flushSync) so the target exists when it is focused.
 */
import { flushSync } from 'react-dom';
import { useStore } from '../store.ts';

/** What the page shows for each shortcut (the status bar lists them; buttons carry aria-keyshortcuts). */
export const SHORTCUTS = {
  start: { keys: 'Alt+S', code: 'KeyS', text: 'Start' },
  lesson: { keys: 'Alt+L', code: 'KeyL', text: 'back to the lesson' },
} as const;

/** The selector of a view's main action; the skip link and the shortcuts focus it. */
export const RUN_BUTTON = '.run-main';
export const LESSON_ACTION = '[data-testid=lesson-setup]';
export const FIRST_LESSON = '[data-testid=start-first-lesson]';

/**
 * Focuses the first of `selectors` on the page that takes the focus (a disabled Start does not:
 * an invalid setup); else the view itself, so the next Tab starts there. True when an action took it.
 */
export function focusAction(...selectors: string[]): boolean {
  for (const selector of selectors) {
    const el = document.querySelector<HTMLElement>(selector);
    if (!el || (el as HTMLButtonElement).disabled) continue;
    el.focus();
    if (document.activeElement === el) return true;
  }
  document.querySelector<HTMLElement>('#view-content')?.focus();
  return false;
}

/** Runs a store action, renders its result now, then focuses the first of `selectors` there. */
export function actThenFocus(action: () => void, ...selectors: string[]): boolean {
  flushSync(action);
  return focusAction(...selectors);
}

/** Opens Train (if another view is open) and focuses its run button. */
export function goToStart(): boolean {
  return actThenFocus(() => {
    if (useStore.getState().view !== 'train') useStore.getState().setView('train');
  }, RUN_BUTTON);
}

/** Back to the set-up lesson step (else to Lessons) with the focus on its main action. */
export function goToLesson(): boolean {
  const s = useStore.getState();
  const armed = s.armed;
  return actThenFocus(() => (armed ? s.openLesson(armed.lessonId, armed.step) : s.setView('lessons')), LESSON_ACTION, FIRST_LESSON);
}

/** Typing places: their keys belong to the person typing (Option+S types "ß" on a Mac). */
export function isTypingTarget(t: EventTarget | null): boolean {
  if (!(t instanceof HTMLElement)) return false;
  if (t.isContentEditable || t.tagName === 'TEXTAREA' || t.tagName === 'SELECT') return true;
  if (t.tagName !== 'INPUT') return false;
  return !['button', 'checkbox', 'radio', 'range', 'color', 'file', 'submit', 'reset'].includes((t as HTMLInputElement).type);
}

/** Which shortcut a key press is, if any. */
export function shortcutOf(e: Pick<KeyboardEvent, 'altKey' | 'ctrlKey' | 'metaKey' | 'shiftKey' | 'code' | 'target'>): 'start' | 'lesson' | null {
  if (!e.altKey || e.ctrlKey || e.metaKey || e.shiftKey || isTypingTarget(e.target)) return null;
  if (e.code === SHORTCUTS.start.code) return 'start';
  if (e.code === SHORTCUTS.lesson.code) return 'lesson';
  return null;
}

/** Starts listening; returns a function that stops. */
export function startShortcuts(): () => void {
  const onKey = (e: KeyboardEvent) => {
    const which = shortcutOf(e);
    if (!which) return;
    e.preventDefault();
    if (which === 'start') goToStart();
    else goToLesson();
  };
  window.addEventListener('keydown', onKey);
  return () => window.removeEventListener('keydown', onKey);
}
