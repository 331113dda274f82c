/** The app shell: header with the views, the active view, and the status bar. */
import { useEffect, useState } from 'react';
import { BackendStatus } from './shell/BackendStatus.tsx';
import { Notices } from './shell/Notices.tsx';
import { EnvironmentsView } from './env/EnvironmentsView.tsx';
import { TrainView } from './train/TrainView.tsx';
import { RunsView } from './runs/RunsView.tsx';
import { LessonsView } from './lessons/LessonsView.tsx';
import { StudioView } from './studio/StudioView.tsx';
import { LessonBanner } from './lessons/LessonBanner.tsx';
import { armedSetupStep } from './lessons/setupStep.ts';
import { useStore } from './store.ts';
import { useSweep } from './train/sweep.ts';
import type { ViewId } from './storeTypes.ts';
import { FIRST_LESSON, focusAction, LESSON_ACTION, RUN_BUTTON, SHORTCUTS } from './shell/shortcuts.ts';

/** The views in the header nav. */
const VIEWS: readonly { id: ViewId; title: string }[] = [
  { id: 'environments', title: 'Environments' },
  { id: 'studio', title: 'Studio' },
  { id: 'train', title: 'Train' },
  { id: 'runs', title: 'Runs' },
  { id: 'lessons', title: 'Lessons' },
];

/**
 * Leaving (close, reload, navigate) stops the run: it is saved up to its last iteration and
 * listed as interrupted, but cannot go on yet, so the page asks first. A sweep in progress counts
 * too: its runs stop with the page.
 */
function useAskBeforeLeaving() {
  const runStatus = useStore((s) => s.status);
  const sweeping = useSweep((s) => s.status === 'running' || s.status === 'stopping');
  const holdsRun = ['starting', 'running', 'pausing', 'stepping', 'paused'].includes(runStatus) || sweeping;
  useEffect(() => {
    if (!holdsRun) return;
    const ask = (e: BeforeUnloadEvent) => {
      e.preventDefault();
      e.returnValue = '';
    };
    window.addEventListener('beforeunload', ask);
    return () => window.removeEventListener('beforeunload', ask);
  }, [holdsRun]);
}

/**
 * Where the skip link goes: the view's main action: Start on Train, the open lesson's Set up on
 * Lessons (the first lesson on the start page); elsewhere the view itself.
 */
function skipTarget(active: ViewId, title: string, lessonOpen: boolean): { text: string; selector: string } {
  if (active === 'train') return { text: 'Skip to Start', selector: RUN_BUTTON };
  if (active === 'lessons') return lessonOpen ? { text: "Skip to the step's Set up", selector: LESSON_ACTION } : { text: 'Skip to the first lesson', selector: FIRST_LESSON };
  return { text: `Skip to ${title}`, selector: '#view-content' };
}

export function App() {
  const active = useStore((s) => s.view);
  useAskBeforeLeaving();
  // Below ~900 px the view tabs fold into a menu (styles.css).
  const [menuOpen, setMenuOpen] = useState(false);
  const title = VIEWS.find((v) => v.id === active)?.title ?? '';
  const lessonOpen = useStore((s) => s.lessonId !== null);
  const skipTo = skipTarget(active, title, lessonOpen);
  const skip = (e: React.MouseEvent) => {
    e.preventDefault();
    focusAction(skipTo.selector);
  };
  return (
    <div className={`app${menuOpen ? ' menu-open' : ''}`}>
      <a className="skip-link" href="#view-content" onClick={skip} data-testid="skip-link">
        {skipTo.text}
      </a>
      <AppHeader title={title} menuOpen={menuOpen} setMenuOpen={setMenuOpen} />
      <Notices />
      <div className="app-body" id="view-content" tabIndex={-1}>
        {/* Each view has one h1: Environments' is the env's title and Lessons' the lesson's; Train and Runs get theirs here. */}
        {(active === 'train' || active === 'runs') && <h1 className="visually-hidden">{title}</h1>}
        {active === 'environments' && <EnvironmentsView />}
        {active === 'studio' && <StudioView />}
        {active === 'train' && <TrainView banner={<LessonBanner />} setupStep={armedSetupStep} />}
        {active === 'runs' && <RunsView />}
        {active === 'lessons' && <LessonsView />}
      </div>
      <StatusBar />
    </div>
  );
}

/** The brand, the views (a menu below ~900 px, `title` naming the active one) and their tabs. */
function AppHeader({ title, menuOpen, setMenuOpen }: { title: string; menuOpen: boolean; setMenuOpen(open: boolean): void }) {
  const active = useStore((s) => s.view);
  const setView = useStore((s) => s.setView);
  return (
    <header className="app-header">
      <div className="brand">
        <svg className="brand-mark" viewBox="0 0 24 24" aria-hidden>
          <rect x="2" y="2" width="20" height="20" rx="5" fill="var(--accent)" />
          <path d="M8 7 L17 12 L8 17 L10.5 12 Z" fill="#fff" />
        </svg>
        <span className="brand-name">Agentic RL Playground</span>
      </div>
      <button type="button" className="menu-toggle btn btn-small" aria-expanded={menuOpen} aria-controls="views-nav" data-testid="menu-toggle" onClick={() => setMenuOpen(!menuOpen)}>
        {title} <span aria-hidden>▾</span>
        <span className="visually-hidden"> (views menu)</span>
      </button>
      <nav className="views" id="views-nav" aria-label="Views">
        {VIEWS.map((v) => (
          <button
            key={v.id}
            type="button"
            className="view-tab"
            data-testid={`view-${v.id}`}
            aria-current={v.id === active ? 'page' : undefined}
            onClick={() => {
              setMenuOpen(false);
              setView(v.id);
            }}
          >
            {v.title}
          </button>
        ))}
      </nav>
    </header>
  );
}

/** The backend, isolation, the keys that act here, and the env viewer's link state. */
function StatusBar() {
  const envId = useStore((s) => s.envId);
  const seed = useStore((s) => s.seed);
  const active = useStore((s) => s.view);
  const armed = useStore((s) => s.armed !== null);
  return (
    <footer className="status-bar">
      <BackendStatus />
      <span className="status-item muted">{crossOriginIsolated ? 'cross-origin isolated' : 'not cross-origin isolated'}</span>
      <span className="status-item muted shortcut-list" data-testid="shortcut-list" title="Option instead of Alt on a Mac; they act outside text fields and code editors">
        Keys: <kbd>{SHORTCUTS.start.keys}</kbd> {SHORTCUTS.start.text}
        {armed && (
          <>
            {' · '}
            <kbd>{SHORTCUTS.lesson.keys}</kbd> {SHORTCUTS.lesson.text}
          </>
        )}
      </span>
      <span className="status-spacer" />
      {active === 'environments' && envId && (
        <span className="status-item muted" title="This view's link reproduces it">
          {envId} · seed {seed}
        </span>
      )}
    </footer>
  );
}
